"""`tf.train.GradientDescentOptimizer`: `var -= learning_rate * grad`."""

from __future__ import annotations

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.ops.math_ops import cast
from tensorweave.training.optimizer import Optimizer, make_indexed_slices


class GradientDescentOptimizer(Optimizer):
    """Plain gradient descent (no slots). Dense updates are `ApplyGradientDescent` ops,
    sparse ones `ScatterSub` of `learning_rate * grad.values` (TF has no sparse apply op).

    Args:
      learning_rate: a float, a scalar Tensor, or a callable returning one.
      use_locking: the `use_locking` attr of the update ops.
      name: the name scope of the update ops ("GradientDescent").
    """

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor = None

    def _prepare(self) -> None:
        lr = self._call_if_callable(self._learning_rate)
        self._learning_rate_tensor = convert_to_tensor(lr, name="learning_rate")

    def _lr(self, var):
        return cast(self._learning_rate_tensor, var.dtype.base_dtype)

    def _apply_dense(self, grad, var):
        return training_ops.apply_gradient_descent(
            var, self._lr(var), grad, use_locking=self._use_locking).op

    def _apply_sparse_duplicate_indices(self, grad, var):
        # NOTE: ScatterSub adds repeated indices up itself, so no deduplication is needed.
        delta = make_indexed_slices(grad.values * self._lr(var), grad.indices,
                                    grad.dense_shape)
        return var.scatter_sub(delta, use_locking=self._use_locking)


__all__ = ["GradientDescentOptimizer"]
