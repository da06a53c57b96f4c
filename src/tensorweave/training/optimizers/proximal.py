"""`tf.train.ProximalAdagradOptimizer` and `tf.train.ProximalGradientDescentOptimizer`:
a gradient (or Adagrad) step followed by the l1/l2 proximal operator
(ApplyProximalAdagrad, ApplyProximalGradientDescent and their sparse variants)."""

from __future__ import annotations

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.ops.init_ops import constant_initializer
from tensorweave.ops.math_ops import cast
from tensorweave.training.optimizer import Optimizer


class _Proximal(Optimizer):
    def __init__(self, learning_rate, l1, l2, use_locking, name):
        super().__init__(use_locking, name)
        self._learning_rate, self._l1, self._l2 = learning_rate, l1, l2
        self._tensors: tuple = ()

    def _prepare(self) -> None:
        lr = self._call_if_callable(self._learning_rate)
        self._tensors = (convert_to_tensor(lr, name="learning_rate"),
                         convert_to_tensor(self._l1, name="l1_regularization_strength"),
                         convert_to_tensor(self._l2, name="l2_regularization_strength"))

    def _scalars(self, var):
        return [cast(t, var.dtype.base_dtype) for t in self._tensors]


class ProximalAdagradOptimizer(_Proximal):
    """Adagrad with a proximal step; slot "accumulator" (`<var>/ProximalAdagrad`).

    Raises:
      ValueError: `initial_accumulator_value` is not positive.
    """

    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(learning_rate, l1_regularization_strength, l2_regularization_strength,
                         use_locking, name)
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            dtype = v.dtype.base_dtype
            init = constant_initializer(self._initial_accumulator_value, dtype=dtype)
            self._get_or_make_slot_with_initializer(v, init, v.get_shape(), dtype,
                                                    "accumulator", self._name)

    def _apply_dense(self, grad, var):
        return training_ops.apply_proximal_adagrad(
            var, self.get_slot(var, "accumulator"), *self._scalars(var), grad,
            use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_ops.sparse_apply_proximal_adagrad(
            var, self.get_slot(var, "accumulator"), *self._scalars(var), grad.values,
            grad.indices, use_locking=self._use_locking)


class ProximalGradientDescentOptimizer(_Proximal):
    """Gradient descent with a proximal step (no slots)."""

    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False,
                 name="ProximalGradientDescent"):
        super().__init__(learning_rate, l1_regularization_strength, l2_regularization_strength,
                         use_locking, name)

    def _apply_dense(self, grad, var):
        return training_ops.apply_proximal_gradient_descent(
            var, *self._scalars(var), grad, use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_ops.sparse_apply_proximal_gradient_descent(
            var, *self._scalars(var), grad.values, grad.indices, use_locking=self._use_locking)


__all__ = ["ProximalAdagradOptimizer", "ProximalGradientDescentOptimizer"]
