"""Exponential moving averages: `tf.train.ExponentialMovingAverage` and
`assign_moving_average` (TF1's training/moving_averages.py).

Shadow variables are slots named `<var op name>/ExponentialMovingAverage` (or `<var>/<name>`),
colocated with their variable and not trainable, so `variables_to_restore()` maps checkpoint
names exactly as TF1 does.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.graph import GraphKeys, add_to_collection, get_default_graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_ops, math_ops, state_ops, variable_scope
from tensorweave.ops.init_ops import zeros_initializer
from tensorweave.ops.variables import (
    Variable,
    global_variables,
    moving_average_variables,
    trainable_variables,
)
from tensorweave.training.optimizer import create_slot, create_zeros_slot

_FLOAT_TYPES = (dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64)


def assign_moving_average(variable, value, decay, zero_debias=True, name=None):
    """`variable -= (variable - value) * (1 - decay)`; returns the updated variable.

    With `zero_debias`, the average is kept in a `biased` variable (next to `variable`, with a
    `local_step` counter) and `variable` receives biased / (1 - decay^t), removing the bias
    towards the zero initial value (Adam's correction).
    """
    graph = get_default_graph()
    with graph.as_default(), graph.name_scope(name or "AssignMovingAvg") as scope:
        decay = convert_to_tensor(1.0 - decay, name="decay")
        if decay.dtype != variable.dtype.base_dtype:
            decay = math_ops.cast(decay, variable.dtype.base_dtype)
        if zero_debias:
            return _zero_debias(variable, value, decay)
        return state_ops.assign_sub(variable, (variable - value) * decay, name=scope)


def _maybe_get_unique(name: str) -> str:
    """`name`, or `name_1`, `name_2`, ... when the variable scope already holds one."""
    vs = variable_scope.get_variable_scope()
    if vs.reuse:
        return name
    existing = {x.op.name for x in vs.global_variables()}
    full_name = vs.name + "/" + name
    if full_name not in existing:
        return name
    idx = 1
    while f"{full_name}_{idx}" in existing:
        idx += 1
    return f"{name}_{idx}"


def _zero_debias(unbiased_var, value, decay):
    """The debiased update (TF's moving_averages._zero_debias)."""
    graph = get_default_graph()
    with variable_scope.variable_scope(unbiased_var.name[:-len(":0")],
                                       values=[unbiased_var, value, decay]):
        with graph.control_dependencies(None), graph.colocate_with(unbiased_var.op):
            biased_var = variable_scope.get_variable(
                _maybe_get_unique("biased"), initializer=zeros_initializer(),
                shape=unbiased_var.get_shape(), dtype=unbiased_var.dtype.base_dtype,
                trainable=False)
            local_step = variable_scope.get_variable(
                _maybe_get_unique("local_step"), shape=[], dtype=unbiased_var.dtype.base_dtype,
                initializer=zeros_initializer(), trainable=False)
    update_biased = state_ops.assign_sub(biased_var, (biased_var - value) * decay)
    update_local_step = local_step.assign_add(1)
    bias_factor = 1 - math_ops.pow(1.0 - decay, update_local_step)
    return state_ops.assign(unbiased_var, update_biased / bias_factor,
                            name=graph.get_name_scope() + "/")


def weighted_moving_average(value, decay, weight, truediv=True, collections=None, name=None):
    """The moving average of value*weight divided by the moving average of weight, kept in
    variables `value_x_weight` and `weight` of variable scope `name` ("WeightedMovingAvg")."""
    if collections is None:
        collections = [GraphKeys.GLOBAL_VARIABLES]
    with variable_scope.variable_scope(name, "WeightedMovingAvg", [value, weight, decay]) as vs:
        value_x_weight_var = variable_scope.get_variable(
            "value_x_weight", shape=value.get_shape(), dtype=value.dtype,
            initializer=zeros_initializer(), trainable=False, collections=collections)
        weight_var = variable_scope.get_variable(
            "weight", shape=weight.get_shape(), dtype=weight.dtype,
            initializer=zeros_initializer(), trainable=False, collections=collections)
        numerator = assign_moving_average(value_x_weight_var, value * weight, decay,
                                          zero_debias=False)
        denominator = assign_moving_average(weight_var, weight, decay, zero_debias=False)
        div = math_ops.truediv if truediv else math_ops.divide
        return div(numerator, denominator, name=vs.name + "/")


class ExponentialMovingAverage:
    """Maintains shadow variables holding moving averages of variables or tensors.

    `apply(var_list)` creates a shadow per variable (initialized to the variable's value)
    and returns the op updating them all: shadow -= (1 - decay) * (shadow - var), with
    decay = min(decay, (1 + num_updates) / (10 + num_updates)) when `num_updates` is given.

    Example:
        ema = tf.train.ExponentialMovingAverage(0.999, num_updates=global_step)
        with tf.control_dependencies([train_op]):
            train_op = ema.apply(tf.trainable_variables())
        saver = tf.train.Saver(ema.variables_to_restore())   # evaluation with the averages
    """

    def __init__(self, decay, num_updates=None, zero_debias=False,
                 name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict[int, tuple] = {}   # id(var) -> (var, average)

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list=None):
        """Creates the shadows of `var_list` (default: the trainable variables) once, and
        returns the op (a NoOp named after this object) updating them.

        Raises:
          TypeError: a variable is not of a floating dtype.
        """
        if var_list is None:
            var_list = trainable_variables()
        var_list = list(var_list)
        zero_debias_true = set()
        for var in var_list:
            if var.dtype.base_dtype not in _FLOAT_TYPES:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if id(var) not in self._averages:
                avg = self._create_average(var)
                if self._zero_debias and not isinstance(var, Variable):
                    zero_debias_true.add(id(avg))
                self._averages[id(var)] = (var, avg)
        graph = get_default_graph()
        with graph.name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                num_updates = math_ops.cast(self._num_updates, dtypes.float32,
                                            name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = []
            for var in var_list:
                avg = self._averages[id(var)][1]
                updates.append(assign_moving_average(avg, var, decay,
                                                     zero_debias=id(avg) in zero_debias_true))
            return control_flow_ops.group(*updates, name=scope)

    def _create_average(self, var):
        """The shadow of `var`: a copy of its (initialized) value, or zeros for a tensor."""
        graph = get_default_graph()
        with graph.control_dependencies(None):
            if isinstance(var, Variable):
                with graph.device(var.device):
                    initialized_value = _initialized_value(var)
                avg = create_slot(var, initialized_value, self._name)
                add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
                return avg
            return create_zeros_slot(
                var, self._name,
                colocate_with_primary=var.op.type in ("Variable", "VariableV2", "VarHandleOp"))

    def average(self, var):
        """The shadow variable of `var`, or None."""
        entry = self._averages.get(id(var))
        return entry[1] if entry is not None else None

    def average_name(self, var) -> str:
        """The name of `var`'s shadow (also before `apply`: the name it will get)."""
        entry = self._averages.get(id(var))
        if entry is not None:
            return entry[1].name[:-len(":0")]
        return get_default_graph().unique_name(var.name[:-len(":0")] + "/" + self._name,
                                               mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables=None) -> dict:
        """{checkpoint name: variable} restoring the shadow values into the variables
        (for `moving_avg_variables`, default trainable + moving-average variables) and every
        other global variable under its own name."""
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + moving_average_variables()
        unique = {id(v): v for v in moving_avg_variables}
        name_map = {self.average_name(v): v for v in unique.values()}
        names = {v.name for v in unique.values()}
        for v in global_variables():
            if v.name not in names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map


def _initialized_value(var):
    """var's value, or its initial value while it is uninitialized (TF's cond)."""
    is_initialized = state_ops.is_variable_initialized(var)
    return control_flow_ops.cond(is_initialized, var.read_value, lambda: var.initial_value)


__all__ = ["ExponentialMovingAverage", "assign_moving_average", "weighted_moving_average"]
