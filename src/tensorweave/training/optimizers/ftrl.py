"""`tf.train.FtrlOptimizer`: FTRL-proximal (McMahan et al.), TF1's ApplyFtrl(V2) updates."""

from __future__ import annotations

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.ops.init_ops import constant_initializer
from tensorweave.ops.math_ops import cast
from tensorweave.training.optimizer import Optimizer


class FtrlOptimizer(Optimizer):
    """FTRL with slots "accum" (`<var>/Ftrl`, starting at `initial_accumulator_value`) and
    "linear" (`<var>/Ftrl_1`, zeros). `l2_shrinkage_regularization_strength` > 0 selects
    ApplyFtrlV2; `beta` adds beta / (2 lr) to the l2 strength.

    Raises:
      ValueError: a negative initial accumulator or strength, or learning_rate_power > 0.
    """

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength=0.0, beta=None):
        super().__init__(use_locking, name)
        _check(initial_accumulator_value < 0.0, "initial_accumulator_value",
               initial_accumulator_value, "positive or zero")
        _check(learning_rate_power > 0.0, "learning_rate_power", learning_rate_power,
               "less than or equal to 0.0")
        for what, v in (("l1_regularization_strength", l1_regularization_strength),
                        ("l2_regularization_strength", l2_regularization_strength),
                        ("l2_shrinkage_regularization_strength",
                         l2_shrinkage_regularization_strength)):
            _check(v < 0.0, what, v, "greater than or equal to 0.0")
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._beta = 0.0 if beta is None else beta
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._accum_name, self._linear_name = accum_name, linear_name
        self._tensors: dict = {}

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            dtype = v.dtype.base_dtype
            init = constant_initializer(self._initial_accumulator_value, dtype=dtype)
            self._get_or_make_slot_with_initializer(v, init, v.get_shape(), dtype, "accum",
                                                    self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self) -> None:
        lr = self._call_if_callable(self._learning_rate)
        self._tensors = {
            "lr": convert_to_tensor(lr, name="learning_rate"),
            "l1": convert_to_tensor(self._l1, name="l1_regularization_strength"),
            "l2": convert_to_tensor(self._l2 + self._beta / (2.0 * lr)
                                    if self._beta else self._l2,
                                    name="adjusted_l2_regularization_strength"),
            "lr_power": convert_to_tensor(self._learning_rate_power,
                                          name="learning_rate_power"),
            "shrinkage": convert_to_tensor(self._l2_shrinkage,
                                           name="l2_shrinkage_regularization_strength"),
        }

    def _args(self, var):
        dt = var.dtype.base_dtype
        t = {k: cast(v, dt) for k, v in self._tensors.items()}
        shrinkage = t["shrinkage"] if self._l2_shrinkage > 0 else None
        return (t["lr"], t["l1"], t["l2"], t["lr_power"]), shrinkage

    def _apply_dense(self, grad, var):
        (lr, l1, l2, power), shrinkage = self._args(var)
        return training_ops.apply_ftrl(
            var, self.get_slot(var, "accum"), self.get_slot(var, "linear"), grad, lr, l1, l2,
            power, l2_shrinkage=shrinkage, use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        (lr, l1, l2, power), shrinkage = self._args(var)
        return training_ops.sparse_apply_ftrl(
            var, self.get_slot(var, "accum"), self.get_slot(var, "linear"), grad.values,
            grad.indices, lr, l1, l2, power, l2_shrinkage=shrinkage,
            use_locking=self._use_locking)


def _check(bad: bool, what: str, value, want: str) -> None:
    if bad:
        raise ValueError(f"{what} {value} must be {want}; got {value}.")


__all__ = ["FtrlOptimizer"]
