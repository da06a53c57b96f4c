"""`tf.train.RMSPropOptimizer` (plain and centered), with TF1's slot order and init."""

from __future__ import annotations

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.ops.init_ops import ones_initializer
from tensorweave.ops.math_ops import cast
from tensorweave.training.optimizer import Optimizer


class RMSPropOptimizer(Optimizer):
    """RMSProp. Slots, in creation order: "rms" (`<var>/RMSProp`, initialized to ONES as in
    TF1), "mg" when centered (`<var>/RMSProp_1`), "momentum" (`<var>/RMSProp_1`, or
    `<var>/RMSProp_2` when centered).

    Update: ms += (g² - ms)(1 - decay); mom = mom * momentum + lr * g / sqrt(ms + eps);
    var -= mom (centered: the denominator is sqrt(ms - mg² + eps), mg += (g - mg)(1 - decay)).
    """

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered
        self._learning_rate_tensor = self._decay_tensor = None
        self._momentum_tensor = self._epsilon_tensor = None

    def _create_slots(self, var_list) -> None:
        from tensorweave.ops import creation_ops

        for v in var_list:
            dtype = v.dtype.base_dtype
            if v.get_shape().is_fully_defined():
                init_rms = ones_initializer(dtype=dtype)
            else:
                init_rms = creation_ops.ones_like(v)
            self._get_or_make_slot_with_initializer(v, init_rms, v.get_shape(), dtype, "rms",
                                                    self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = convert_to_tensor(
            self._call_if_callable(self._learning_rate), name="learning_rate")
        self._decay_tensor = convert_to_tensor(self._call_if_callable(self._decay),
                                               name="decay")
        self._momentum_tensor = convert_to_tensor(self._call_if_callable(self._momentum),
                                                  name="momentum")
        self._epsilon_tensor = convert_to_tensor(self._call_if_callable(self._epsilon),
                                                 name="epsilon")

    def _args(self, var) -> list:
        dtype = var.dtype.base_dtype
        slots = [self.get_slot(var, "rms"), self.get_slot(var, "momentum")]
        if self._centered:
            slots.insert(0, self.get_slot(var, "mg"))
        return slots + [cast(t, dtype) for t in (self._learning_rate_tensor, self._decay_tensor,
                                                 self._momentum_tensor, self._epsilon_tensor)]

    def _apply_dense(self, grad, var):
        fn = (training_ops.apply_centered_rms_prop if self._centered
              else training_ops.apply_rms_prop)
        return fn(var, *self._args(var), grad, use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        fn = (training_ops.sparse_apply_centered_rms_prop if self._centered
              else training_ops.sparse_apply_rms_prop)
        return fn(var, *self._args(var), grad.values, grad.indices,
                  use_locking=self._use_locking)


__all__ = ["RMSPropOptimizer"]
