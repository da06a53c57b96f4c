"""`tf.train.AdagradOptimizer`: `accum += grad²; var -= lr * grad / sqrt(accum)`."""

from __future__ import annotations

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.ops.init_ops import constant_initializer
from tensorweave.ops.math_ops import cast
from tensorweave.training.optimizer import Optimizer


class AdagradOptimizer(Optimizer):
    """Adagrad with one slot per variable, "accumulator" (`<var>/Adagrad`), starting at
    `initial_accumulator_value`.

    Raises:
      ValueError: `initial_accumulator_value` is not positive.
    """

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._learning_rate_tensor = None

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            dtype = v.dtype.base_dtype
            if v.get_shape().is_fully_defined():
                init = constant_initializer(self._initial_accumulator_value, dtype=dtype)
            else:
                init = self._init_constant_op(v, dtype)
            self._get_or_make_slot_with_initializer(v, init, v.get_shape(), dtype,
                                                    "accumulator", self._name)

    def _init_constant_op(self, v, dtype):
        from tensorweave.ops import array_ops, creation_ops

        def init():
            value = creation_ops.fill(array_ops.shape(v), self._initial_accumulator_value)
            return cast(value, dtype)

        return init

    def _prepare(self) -> None:
        lr = self._call_if_callable(self._learning_rate)
        self._learning_rate_tensor = convert_to_tensor(lr, name="learning_rate")

    def _apply_dense(self, grad, var):
        return training_ops.apply_adagrad(
            var, self.get_slot(var, "accumulator"),
            cast(self._learning_rate_tensor, var.dtype.base_dtype), grad,
            use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_ops.sparse_apply_adagrad(
            var, self.get_slot(var, "accumulator"),
            cast(self._learning_rate_tensor, var.dtype.base_dtype), grad.values, grad.indices,
            use_locking=self._use_locking)


__all__ = ["AdagradOptimizer"]
