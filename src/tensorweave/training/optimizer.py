"""`tf.train.Optimizer`: the TF1 optimizer template, and slot variable creation.

An optimizer turns a loss into update ops in two steps, as TF1 does:
`compute_gradients(loss)` → `[(grad, var)]`, then `apply_gradients(grads_and_vars)` →
one op running every update (and incrementing `global_step` after them). Subclasses fill in
the template methods `_create_slots`, `_prepare`, `_apply_dense`, `_apply_sparse`
(`_resource_apply_*` for resource variables) and optionally `_finish`.

Names follow TF1 exactly, because checkpoints depend on them: slots are variables
`<var op name>/<optimizer name>` (then `..._1`, `..._2` for further slots of the same var),
colocated with their variable, in GLOBAL_VARIABLES but not TRAINABLE_VARIABLES; the update of
`var` runs under name scope `<name>/update_<var op name>/`; the returned op is named `<name>`
(the optimizer's name by default, e.g. "Adam").

Gradients come from `tensorweave.autodiff.gradients.gradients`, imported when first needed.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.autodiff.gradients import gradients
from tensorweave.framework.graph import GraphKeys, get_collection, get_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_ops, control_flow_util, state_ops, variable_scope
from tensorweave.ops.indexed_slices import IndexedSlices
from tensorweave.ops.variables import Variable, trainable_variables

_STREAMING_MODEL_PORTS = "streaming_model_ports"


def is_indexed_slices(value) -> bool:
    return isinstance(value, IndexedSlices)


def make_indexed_slices(values, indices, dense_shape=None) -> IndexedSlices:
    return IndexedSlices(values, indices, dense_shape)


def _convert_grad(g):
    """A gradient as a Tensor or IndexedSlices (TF's convert_to_tensor_or_indexed_slices)."""
    if is_indexed_slices(g) or isinstance(g, Tensor):
        return g
    try:
        return convert_to_tensor(g)
    except (TypeError, ValueError):
        raise TypeError(f"Gradient must be convertible to a Tensor or IndexedSlices, or None: "
                        f"{g}") from None


def _deduplicate_indexed_slices(values, indices):
    """(summed values, unique indices): values of repeated indices are added up."""
    from tensorweave.ops import array_ops, gather_ops, reduction_ops

    unique_indices, new_index_positions = gather_ops.unique(indices)
    summed_values = reduction_ops.unsorted_segment_sum(
        values, new_index_positions, array_ops.shape(unique_indices)[0])
    return summed_values, unique_indices


def _var_key(var):
    """The slot-table key of `var`: (graph, op name)."""
    return (var.op.graph, var.op.name)


# -- slot creation (TF's slot_creator) ---------------------------------------------------------
def _slot_prefix(primary) -> str:
    return primary._shared_name if isinstance(primary, Variable) else primary.op.name


def _create_slot_var(primary, val, validate_shape: bool, shape, dtype):
    """`get_variable("")` in the current (slot) scope, without the scope's partitioner."""
    scope = variable_scope.get_variable_scope()
    partitioner = scope.partitioner
    scope.set_partitioner(None)
    try:
        slot = variable_scope.get_variable(
            "", initializer=val, trainable=False, shape=shape if callable(val) else None,
            dtype=dtype, validate_shape=validate_shape)
    finally:
        scope.set_partitioner(partitioner)
    _slice_like_primary(primary, slot)
    return slot


def _slice_like_primary(primary, slot) -> None:
    """A slot of a part of a partitioned variable is the same part of a partitioned slot
    (`emb/part_1/Adam` saves as a slice of `emb/Adam`), over the slot's leading dimensions;
    a scalar slot stays whole (TF's slot_creator)."""
    info = primary._get_save_slice_info() if isinstance(primary, Variable) else None
    n = slot.shape.ndims
    if info is None or n == 0:
        slot_name = None
    else:
        slot_name = slot.op.name[len(primary.op.name) + 1:]
    if slot_name:
        n = len(info.full_shape) if n is None else n
        slot._set_save_slice_info(type(info)(f"{info.full_name}/{slot_name}",
                                             info.full_shape[:n], info.var_offset[:n],
                                             info.var_shape[:n]))


def _in_slot_scope(primary, name: str, colocate: bool, make):
    """Runs `make()` in variable scope `<primary>/<name>` (made unique: `..._1`), colocated
    with `primary`."""
    graph = primary.op.graph
    # NOTE: auxiliary_name_scope=False: TF enters a name scope here, which only reserves the
    # name the slot variable takes anyway; entering it would make our Variable uniquify its op.
    with variable_scope.variable_scope(None, default_name=f"{_slot_prefix(primary)}/{name}",
                                       auxiliary_name_scope=False):
        if not colocate:
            return make()
        with graph.colocate_with(primary.op):
            return make()


def create_slot(primary, val, name, colocate_with_primary=True):
    """A slot variable for `primary` initialized to the Tensor `val` (TF's create_slot)."""
    validate = val.get_shape().is_fully_defined()
    return _in_slot_scope(primary, name, colocate_with_primary,
                          lambda: _create_slot_var(primary, val, validate, None, None))


def create_slot_with_initializer(primary, initializer, shape, dtype, name,
                                 colocate_with_primary=True):
    """A slot variable of `shape`/`dtype` initialized by `initializer(shape, dtype)`."""
    from tensorweave.shapes import TensorShape

    shape = TensorShape(shape)
    dtype = dtypes.as_dtype(dtype).base_dtype
    return _in_slot_scope(
        primary, name, colocate_with_primary,
        lambda: _create_slot_var(primary, initializer, shape.is_fully_defined(), shape, dtype))


def create_zeros_slot(primary, name, dtype=None, colocate_with_primary=True):
    """A slot variable of zeros shaped like `primary`."""
    from tensorweave.ops import array_ops, creation_ops, init_ops

    dtype = dtypes.as_dtype(dtype or primary.dtype).base_dtype
    shape = primary.get_shape()
    if shape.is_fully_defined():
        return create_slot_with_initializer(primary, init_ops.zeros_initializer(), shape,
                                            dtype, name, colocate_with_primary)
    # NOTE: TF reads the variable when initialized, else its initial value; the initial value
    # has the same shape.
    source = primary.initial_value if isinstance(primary, Variable) else primary
    val = creation_ops.zeros(array_ops.shape(source), dtype=dtype)
    return create_slot(primary, val, name, colocate_with_primary)


# -- how each kind of variable is updated ------------------------------------------------------
class _RefVariableProcessor:
    """A TF1 ref Variable: `_apply_dense` / `_apply_sparse_duplicate_indices`."""

    def __init__(self, v):
        self._v = v

    def target(self):
        return self._v._ref()

    def update_op(self, optimizer, g):
        if not is_indexed_slices(g):
            update = optimizer._apply_dense(g, self._v)
            return _constrained(self._v, update)
        if self._v.constraint is not None:
            raise RuntimeError("Cannot use a constraint function on a sparse variable.")
        return optimizer._apply_sparse_duplicate_indices(g, self._v)


class _ResourceVariableProcessor:
    """A resource variable: `_resource_apply_dense` / `_resource_apply_sparse_...`."""

    def __init__(self, v):
        self._v = v

    def target(self):
        return self._v

    def update_op(self, optimizer, g):
        if is_indexed_slices(g):
            if self._v.constraint is not None:
                raise RuntimeError("Cannot use a constraint function on a sparse variable.")
            return optimizer._resource_apply_sparse_duplicate_indices(g.values, self._v,
                                                                      g.indices)
        return _constrained(self._v, optimizer._resource_apply_dense(g, self._v))


class _TensorProcessor:
    """A plain Tensor: gradients can be computed for it, but it cannot be updated."""

    def __init__(self, v):
        self._v = v

    def target(self):
        return self._v

    def update_op(self, optimizer, g):
        raise NotImplementedError("Trying to update a Tensor ", self._v)


def _constrained(v, update_op):
    if v.constraint is None:
        return update_op
    with get_default_graph().control_dependencies([update_op]):
        return v.assign(v.constraint(v))


def _get_processor(v):
    op = getattr(v, "op", None)
    if op is not None and op.type == "VarHandleOp":
        return _ResourceVariableProcessor(v)
    if isinstance(v, Variable):
        return _RefVariableProcessor(v)
    if isinstance(v, Tensor):
        return _TensorProcessor(v)
    raise NotImplementedError("Trying to optimize unsupported type ", v)


# -- the template ------------------------------------------------------------------------------
class Optimizer:
    """Base class of the TF1 optimizers (`tf.train.Optimizer`).

    Example:
        opt = tf.train.GradientDescentOptimizer(0.1)
        train_op = opt.minimize(loss, global_step=tf.train.get_or_create_global_step())

    Subclasses implement `_create_slots(var_list)`, `_prepare()`, `_apply_dense(grad, var)`
    and `_apply_sparse(grad, var)`, creating slots with `_zeros_slot`,
    `_get_or_make_slot(_with_initializer)` and non-slot variables with
    `_create_non_slot_variable`.
    """

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name):
        """Raises ValueError when `name` is empty."""
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict[str, dict] = {}
        self._non_slot_dict: dict = {}

    def get_name(self) -> str:
        return self._name

    # -- the two steps ----------------------------------------------------------------------
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        """`compute_gradients` then `apply_gradients`; returns the training op.

        Raises:
          ValueError: no variable receives a gradient from `loss`.
        """
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                f"support gradients, between variables {[str(v) for _, v in grads_and_vars]} "
                f"and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """`[(gradient, variable)]` of `loss` for `var_list` (default: the trainable
        variables); a gradient is a Tensor, an IndexedSlices or None.

        Raises:
          ValueError: bad `gate_gradients`, a non-float loss or variable, no variables.
        """
        if callable(loss):
            loss = loss()
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP,
                                  Optimizer.GATE_GRAPH):
            raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, "
                             f"Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not {gate_gradients}")
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            self._assert_valid_dtypes([grad_loss])
        if var_list is None:
            var_list = trainable_variables() + get_collection(
                GraphKeys.TRAINABLE_RESOURCE_VARIABLES)
        else:
            var_list = control_flow_util.flatten(var_list)
        var_list = list(var_list) + get_collection(_STREAMING_MODEL_PORTS)
        processors = [_get_processor(v) for v in var_list]
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients(loss, [p.target() for p in processors], grad_ys=grad_loss,
                           gate_gradients=gate_gradients == Optimizer.GATE_OP,
                           aggregation_method=aggregation_method,
                           colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = _tuple(grads)
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars
                                   if g is not None and v.dtype != dtypes.resource])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The op applying `grads_and_vars` (None gradients are skipped), then adding 1 to
        `global_step` when given. Named `name` (default: the optimizer's name); added to the
        TRAIN_OP collection.

        Raises:
          TypeError: a gradient is neither a Tensor, an IndexedSlices nor None.
          ValueError: empty `grads_and_vars`, or every gradient is None.
        """
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = tuple((None if g is None else _convert_grad(g), v, _get_processor(v))
                          for g, v in grads_and_vars)
        var_list = [v for g, v, _ in converted if g is not None]
        if not var_list:
            raise ValueError("No gradients provided for any variable: "
                             f"{[str(v) for _, v, _ in converted]}.")
        graph = get_default_graph()
        with graph.control_dependencies(None):
            self._create_slots(var_list)
        with graph.as_default(), graph.name_scope(name or self._name) as scope:
            self._prepare()
            update_ops = self._update_ops(graph, converted)
            apply_updates = self._finish_step(graph, update_ops, global_step, scope)
            if isinstance(apply_updates, Tensor):
                apply_updates = apply_updates.op
            train_op = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_op:
                train_op.append(apply_updates)
            return apply_updates

    def _update_ops(self, graph, converted) -> list:
        update_ops = []
        for grad, var, processor in converted:
            if grad is None:
                continue
            with graph.name_scope("update_" + var.op.name), graph.colocate_with(var.op):
                update_ops.append(processor.update_op(self, grad))
        return update_ops

    def _finish_step(self, graph, update_ops, global_step, scope: str):
        if global_step is None:
            return self._finish(update_ops, scope)
        with graph.control_dependencies([self._finish(update_ops, "update")]):
            with graph.colocate_with(global_step.op):
                return state_ops.assign_add(global_step, 1, name=scope)

    # -- slots --------------------------------------------------------------------------------
    def get_slot(self, var, name):
        """The slot variable `name` created for `var`, or None."""
        named_slots = self._slots.get(name)
        if not named_slots:
            return None
        return named_slots.get(_var_key(var))

    def get_slot_names(self) -> list[str]:
        """The sorted names of the slots this optimizer created ("m", "v", ...)."""
        return sorted(self._slots)

    def variables(self) -> list:
        """The optimizer's variables (slots and non-slot ones) of the default graph, by name."""
        graph = get_default_graph()
        found = [v for v in self._non_slot_variables() if v.op.graph is graph]
        for slots in self._slots.values():
            found.extend(v for v in slots.values() if v.op.graph is graph)
        return sorted(found, key=lambda v: v.name)

    def _slot_dict(self, slot_name: str) -> dict:
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot(self, var, val, slot_name, op_name):
        """The slot `slot_name` of `var`, created from Tensor `val` the first time."""
        named_slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named_slots:
            named_slots[key] = create_slot(var, val, op_name)
        return named_slots[key]

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name,
                                           op_name):
        named_slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named_slots:
            named_slots[key] = create_slot_with_initializer(var, initializer, shape, dtype,
                                                            op_name)
        return named_slots[key]

    def _zeros_slot(self, var, slot_name, op_name):
        named_slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named_slots:
            named_slots[key] = create_zeros_slot(var, op_name)
        return named_slots[key]

    # -- non-slot variables -------------------------------------------------------------------
    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        """A variable `name` shared by all updates (e.g. Adam's beta1_power), created once
        per graph, colocated with `colocate_with`."""
        graph = colocate_with.graph
        key = (name, graph)
        v = self._non_slot_dict.get(key)
        if v is None:
            with graph.as_default(), graph.control_dependencies(None), \
                    graph.colocate_with(colocate_with.op):
                v = Variable(initial_value, name=name, trainable=False)
            self._non_slot_dict[key] = v
        return v

    def _get_non_slot_variable(self, name, graph=None):
        return self._non_slot_dict.get((name, graph), None)

    def _non_slot_variables(self):
        return self._non_slot_dict.values()

    # -- template methods ---------------------------------------------------------------------
    def _valid_dtypes(self) -> set:
        return {dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64}

    def _assert_valid_dtypes(self, tensors) -> None:
        valid = self._valid_dtypes()
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in valid:
                raise ValueError(f"Invalid type {dtype!r} for {t.name}, expected: {list(valid)}.")

    def _create_slots(self, var_list) -> None:
        """Creates the slots every variable of `var_list` needs (default: none)."""

    def _prepare(self) -> None:
        """Creates the hyper-parameter tensors (called inside the op's name scope)."""

    def _apply_dense(self, grad, var):
        raise NotImplementedError()

    def _resource_apply_dense(self, grad, handle):
        raise NotImplementedError()

    def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices):
        summed_grad, unique_indices = _deduplicate_indexed_slices(grad, indices)
        return self._resource_apply_sparse(summed_grad, handle, unique_indices)

    def _resource_apply_sparse(self, grad, handle, indices):
        raise NotImplementedError()

    def _apply_sparse_duplicate_indices(self, grad, var):
        """`_apply_sparse` with the values of repeated indices summed first."""
        summed_values, unique_indices = _deduplicate_indexed_slices(grad.values, grad.indices)
        return self._apply_sparse(
            make_indexed_slices(summed_values, unique_indices, grad.dense_shape), var)

    def _apply_sparse(self, grad, var):
        raise NotImplementedError()

    def _finish(self, update_ops, name_scope):
        """The op grouping `update_ops`, named `name_scope`."""
        return control_flow_ops.group(*update_ops, name=name_scope)

    def _call_if_callable(self, param):
        return param() if callable(param) else param


def _tuple(grads) -> list:
    """TF's `control_flow_ops.tuple` over gradients (None kept, IndexedSlices gated)."""
    if not any(is_indexed_slices(g) for g in grads):
        return control_flow_ops.tuple(grads)
    parts = [t for g in grads if g is not None
             for t in ((g.values, g.indices) if is_indexed_slices(g) else (g,))]
    gated = iter(control_flow_ops.tuple(parts))
    out: list = []
    for g in grads:
        if g is None:
            out.append(None)
        elif is_indexed_slices(g):
            out.append(make_indexed_slices(next(gated), next(gated), g.dense_shape))
        else:
            out.append(next(gated))
    return out


__all__ = ["Optimizer"]
