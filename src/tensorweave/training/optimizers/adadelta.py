"""`tf.train.AdadeltaOptimizer` (Zeiler 2012), with TF1's learning-rate factor."""

from __future__ import annotations

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.ops.math_ops import cast
from tensorweave.training.optimizer import Optimizer


class AdadeltaOptimizer(Optimizer):
    """Adadelta with two slots per variable: "accum" (`<var>/Adadelta`) and "accum_update"
    (`<var>/Adadelta_1`)."""

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-08, use_locking=False,
                 name="Adadelta"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._rho = rho
        self._epsilon = epsilon
        self._lr_t = self._rho_t = self._epsilon_t = None

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self) -> None:
        self._lr_t = convert_to_tensor(self._call_if_callable(self._lr), name="lr")
        self._rho_t = convert_to_tensor(self._call_if_callable(self._rho), name="rho")
        self._epsilon_t = convert_to_tensor(self._call_if_callable(self._epsilon),
                                            name="epsilon")

    def _args(self, var):
        dtype = var.dtype.base_dtype
        return (self.get_slot(var, "accum"), self.get_slot(var, "accum_update"),
                cast(self._lr_t, dtype), cast(self._rho_t, dtype), cast(self._epsilon_t, dtype))

    def _apply_dense(self, grad, var):
        return training_ops.apply_adadelta(var, *self._args(var), grad,
                                           use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_ops.sparse_apply_adadelta(var, *self._args(var), grad.values,
                                                  grad.indices, use_locking=self._use_locking)


__all__ = ["AdadeltaOptimizer"]
