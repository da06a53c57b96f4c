"""`tf.train.AdamOptimizer` (Kingma & Ba), TF1's formulation with an epsilon-hat."""

from __future__ import annotations

from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_ops, state_ops, training_ops
from tensorweave.ops.math_ops import cast, sqrt
from tensorweave.training.optimizer import Optimizer


class AdamOptimizer(Optimizer):
    """Adam. Slots "m" (`<var>/Adam`) and "v" (`<var>/Adam_1`); non-slot variables
    `beta1_power` and `beta2_power` (created once per graph in the current name scope,
    colocated with the first variable by name), multiplied by beta1/beta2 after every step.

    Update: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t); m += (g - m)(1 - beta1);
    v += (g² - v)(1 - beta2); var -= lr_t * m / (sqrt(v) + epsilon).
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08,
                 use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon
        self._lr_t = self._beta1_t = self._beta2_t = self._epsilon_t = None

    def _get_beta_accumulators(self):
        graph = get_default_graph()
        return (self._get_non_slot_variable("beta1_power", graph=graph),
                self._get_non_slot_variable("beta2_power", graph=graph))

    def _create_slots(self, var_list) -> None:
        first_var = min(var_list, key=lambda x: x.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first_var)
        self._create_non_slot_variable(self._beta2, "beta2_power", first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self) -> None:
        self._lr_t = convert_to_tensor(self._call_if_callable(self._lr), name="learning_rate")
        self._beta1_t = convert_to_tensor(self._call_if_callable(self._beta1), name="beta1")
        self._beta2_t = convert_to_tensor(self._call_if_callable(self._beta2), name="beta2")
        self._epsilon_t = convert_to_tensor(self._call_if_callable(self._epsilon),
                                            name="epsilon")

    def _apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        beta1_power, beta2_power = self._get_beta_accumulators()
        return training_ops.apply_adam(
            var, self.get_slot(var, "m"), self.get_slot(var, "v"), cast(beta1_power, dtype),
            cast(beta2_power, dtype), cast(self._lr_t, dtype), cast(self._beta1_t, dtype),
            cast(self._beta2_t, dtype), cast(self._epsilon_t, dtype), grad,
            use_locking=self._use_locking).op

    def _apply_sparse_shared(self, grad, var, indices, scatter_add):
        """TF1's sparse Adam: decay all of m and v, scatter-add the new gradient rows."""
        dtype = var.dtype.base_dtype
        beta1_power, beta2_power = (cast(b, dtype) for b in self._get_beta_accumulators())
        lr_t, beta1_t, beta2_t, epsilon_t = (
            cast(t, dtype) for t in (self._lr_t, self._beta1_t, self._beta2_t, self._epsilon_t))
        lr = lr_t * sqrt(1 - beta2_power) / (1 - beta1_power)
        graph = get_default_graph()
        m = self.get_slot(var, "m")
        m_scaled_g_values = grad * (1 - beta1_t)
        m_t = state_ops.assign(m, m * beta1_t, use_locking=self._use_locking)
        with graph.control_dependencies([m_t]):
            m_t = scatter_add(m, indices, m_scaled_g_values)
        v = self.get_slot(var, "v")
        v_scaled_g_values = grad * grad * (1 - beta2_t)
        v_t = state_ops.assign(v, v * beta2_t, use_locking=self._use_locking)
        with graph.control_dependencies([v_t]):
            v_t = scatter_add(v, indices, v_scaled_g_values)
        v_sqrt = sqrt(v_t)
        var_update = state_ops.assign_sub(var, lr * m_t / (v_sqrt + epsilon_t),
                                          use_locking=self._use_locking)
        return control_flow_ops.group(*[var_update, m_t, v_t])

    def _apply_sparse(self, grad, var):
        return self._apply_sparse_shared(
            grad.values, var, grad.indices,
            lambda x, i, v: state_ops.scatter_add(x, i, v, use_locking=self._use_locking))

    def _finish(self, update_ops, name_scope):
        graph = get_default_graph()
        with graph.control_dependencies(update_ops):
            beta1_power, beta2_power = self._get_beta_accumulators()
            with graph.colocate_with(beta1_power.op):
                update_beta1 = beta1_power.assign(beta1_power * self._beta1_t,
                                                  use_locking=self._use_locking)
                update_beta2 = beta2_power.assign(beta2_power * self._beta2_t,
                                                  use_locking=self._use_locking)
        return control_flow_ops.group(*update_ops + [update_beta1, update_beta2],
                                      name=name_scope)


__all__ = ["AdamOptimizer"]
