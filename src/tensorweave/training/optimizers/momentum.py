"""`tf.train.MomentumOptimizer`: `accum = accum * momentum + grad; var -= lr * accum`."""

from __future__ import annotations

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.ops.math_ops import cast
from tensorweave.training.optimizer import Optimizer


class MomentumOptimizer(Optimizer):
    """Momentum (optionally Nesterov) with one slot per variable, "momentum", named
    `<var>/Momentum` (with the default name).

    Args:
      learning_rate, momentum: floats, scalar Tensors, or callables returning one.
      use_locking: the `use_locking` attr of the update ops.
      name: the optimizer's name ("Momentum").
      use_nesterov: `var -= lr * (grad + momentum * accum)` after the accumulator update.
    """

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self) -> None:
        lr = self._call_if_callable(self._learning_rate)
        self._learning_rate_tensor = convert_to_tensor(lr, name="learning_rate")
        momentum = self._call_if_callable(self._momentum)
        self._momentum_tensor = convert_to_tensor(momentum, name="momentum")

    def _hyper(self, dtype):
        dtype = dtype.base_dtype
        return cast(self._learning_rate_tensor, dtype), cast(self._momentum_tensor, dtype)

    def _apply_dense(self, grad, var):
        lr, momentum = self._hyper(var.dtype)
        return training_ops.apply_momentum(
            var, self.get_slot(var, "momentum"), lr, grad, momentum,
            use_locking=self._use_locking, use_nesterov=self._use_nesterov).op

    def _apply_sparse(self, grad, var):
        lr, momentum = self._hyper(var.dtype)
        return training_ops.sparse_apply_momentum(
            var, self.get_slot(var, "momentum"), lr, grad.values, grad.indices, momentum,
            use_locking=self._use_locking, use_nesterov=self._use_nesterov).op


__all__ = ["MomentumOptimizer"]
