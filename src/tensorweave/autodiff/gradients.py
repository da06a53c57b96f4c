"""`gradients()`: symbolic differentiation of a graph, as TF1's `gradients_util`.

The backward walk:
  1. `ys`, `xs` become tensors (a Variable in `xs` becomes its ref tensor, so the gradient
     flows back through its `read` Identity); `grad_ys` default to ones (`Fill` of the shape).
  2. Ops reachable forward from `xs` through trainable (floating/complex) tensors are marked;
     the ops *between* xs and ys are those also reachable backward from `ys`.
  3. Each between op counts how many between ops consume it (its pending count); the walk
     starts at the ys' ops and visits an op once every consumer has sent its gradients.
  4. At an op, the gradients of each output are summed (AddN; IndexedSlices are concatenated
     when all are sparse), its registered gradient function is called under the name scope
     `<op name>_grad`, and each input's gradient is recorded.
  5. The result for each x is its summed gradient, or None (zeros with
     `UnconnectedGradients.ZERO`) when no path joins it to the ys.

While loops (`tf.while_loop`) between xs and ys get a gradient loop each
(`control_flow_state.py`): the walk builds the gradients of a loop's ops inside that loop's
gradient context, visits a loop Switch twice (from its Exit, then from the loop body), and
waits until all Exits of a loop are ready before entering it.

All ops are built under the name scope `gradients` (made unique: `gradients_1`, ...), so they
are named `gradients/<op>_grad/...`. The second half of this module holds the small builders
the gradient functions share (static shapes, broadcasting reductions, zeros).
"""

from __future__ import annotations

import collections
import contextlib
import enum

import numpy as np

from tensorweave import dtypes
from tensorweave.autodiff.control_flow_state import maybe_create_control_flow_state
from tensorweave.autodiff.registry import get_gradient_function
from tensorweave.framework.jit import gradient_attrs
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_util as util
from tensorweave.ops.apply import apply_op
from tensorweave.ops.constant_op import constant
from tensorweave.ops.indexed_slices import (
    IndexedSlices,
    convert_n_to_tensor_or_indexed_slices,
)

_TRAINABLE = frozenset([dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
                        dtypes.complex64, dtypes.complex128, dtypes.resource, dtypes.variant])


class UnconnectedGradients(enum.Enum):
    """What `gradients()` returns for an x that no path joins to the ys."""

    NONE = "none"
    ZERO = "zero"


class AggregationMethod:
    """How the gradients reaching one tensor along several paths are summed.

    `ADD_N` (the default) sums them with one AddN; `EXPERIMENTAL_TREE` and
    `EXPERIMENTAL_ACCUMULATE_N` sum them pairwise (AddN of two at a time).
    """

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


_METHODS = (AggregationMethod.ADD_N, AggregationMethod.EXPERIMENTAL_TREE,
            AggregationMethod.EXPERIMENTAL_ACCUMULATE_N)


def is_trainable(t) -> bool:
    """Whether gradients flow through tensor `t` (floating, complex, resource, variant)."""
    return t.dtype.base_dtype in _TRAINABLE


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE):
    """Symbolic partial derivatives of `sum(ys)` with respect to each of `xs`.

    Args:
      ys: a Tensor or list of Tensors to differentiate.
      xs: a Tensor, Variable or list of them to differentiate with respect to.
      grad_ys: optional initial gradients, one per y (None entries mean ones).
      name: the name scope of all gradient ops.
      colocate_gradients_with_ops: build each op's gradient colocated with the op.
      gate_gradients: make an op's input gradients available only once all are computed.
      aggregation_method: an `AggregationMethod` value.
      stop_gradients: tensors held constant (no gradient flows through them).
      unconnected_gradients: `UnconnectedGradients.NONE` or `.ZERO`.
    Returns:
      A list with one entry per x: a Tensor, an IndexedSlices, or None.
    Raises:
      LookupError: an op on a path has no registered gradient function (names op and type).
      TypeError: second-order gradients through a while loop.
      ValueError: the gradient is taken inside a while loop body with respect to a value that
        comes from a loop variable's initial value (through the loop's Switch).
      TypeError, ValueError: bad grad_ys, a gradient of the wrong count or shape, an unknown
        aggregation method or unconnected_gradients value.
    """
    ys, xs = _as_list(ys), _as_list(xs)
    unconnected = _unconnected(unconnected_gradients)
    if aggregation_method is None:
        aggregation_method = AggregationMethod.DEFAULT
    if aggregation_method not in _METHODS:
        raise ValueError(f"Invalid aggregation_method specified {aggregation_method}.")
    stops = [] if stop_gradients is None else _as_list(stop_gradients)
    grad_ys = [None] * len(ys) if grad_ys is None else _as_list(grad_ys)
    graph = _graph_of(ys + xs + stops + grad_ys)
    with graph.as_default(), name_scope(name, "gradients", ys + xs + stops):
        ys = [convert_to_tensor(y, name="y") for y in ys]
        xs = [convert_to_tensor(x, name="x", as_ref=True) for x in xs]
        grad_ys = _default_grad_ys(grad_ys, ys, colocate_gradients_with_ops)
        walk = _Backprop(graph, ys, xs, [_op_of(s) for s in stops], colocate_gradients_with_ops,
                         gate_gradients, aggregation_method)
        walk.run(grad_ys)
    return [walk.result(x, unconnected) for x in xs]


class _Backprop:
    """The state of one backward walk: gradient lists per op output, pending counts, queue."""

    def __init__(self, graph, ys, xs, stop_ops, colocate, gate, method):
        self._graph = graph
        self._ys, self._xs = ys, xs
        self._colocate, self._gate, self._method = colocate, gate, method
        self._grads: dict[Operation, list] = {}
        reached = _reached_ops([x.op for x in xs])
        self._between = _between_ops([y.op for y in ys], reached)
        self._loop_state = maybe_create_control_flow_state(
            self._between, set(self._between), colocate)
        self._pending = _pending_counts(self._between)
        self._reachable_to = {y.op for y in ys if y.op in reached}
        self._stop_ops = self._find_stop_ops([x.op for x in xs], stop_ops)

    def _find_stop_ops(self, from_ops, stop_ops) -> set:
        """xs' ops with no between op upstream (nothing to gain there), plus `stop_ops`."""
        found = {op for op in from_ops
                 if not any(self._pending[t.op] > 0 for t in op.inputs)}
        return found | set(stop_ops)

    # -- the walk -------------------------------------------------------------------------
    def run(self, grad_ys) -> None:
        for y, g in zip(self._ys, grad_ys):
            self._set_grad(y, g)
        queue: collections.deque = collections.deque()
        seen: set = set()
        for y in self._ys:
            op = y.op
            if self._pending[op] == 0 and op not in seen and op in self._reachable_to:
                seen.add(op)
                queue.append(op)
        loops = self._loop_state
        if loops is not None:
            for y in loops.process_unused_loop_exits(self._pending, seen):
                if is_trainable(y):
                    self._set_grad(y, loops.zeros_like_for_exit(y))
                    queue.append(y.op)
        while queue:
            op = queue.popleft()
            self._visit(op)
            self._update_pending(op, queue)
        if loops is not None:
            loops.post_processing()

    def _update_pending(self, op: Operation, queue) -> None:
        """Counts `op`'s gradients as sent to its inputs' ops; queues the ops now ready (a loop
        Switch as soon as one consumer is done: it is visited once per side)."""
        loops = self._loop_state
        for t in op.inputs:
            x = t.op
            self._pending[x] -= 1
            ready = self._pending[x] == 0
            if loops is not None and not ready:
                ready = self._pending[x] > 0 and util.is_loop_switch(x)
            if not ready:
                continue
            if loops is not None and util.is_loop_exit(x):
                self._defer_exit(t, queue)
            else:
                queue.append(x)

    def _defer_exit(self, t: Tensor, queue) -> None:
        """A loop's Exits are entered together, once all are ready: the Exits without
        gradient then get zeros (a loop variable can feed others) if any Exit has one."""
        loops = self._loop_state
        state = loops.get_grad_state(t.op, before=False)
        state.deferred_exits.append(t)
        state.pending_exits_count -= 1
        if state.pending_exits_count:
            return
        used = False
        for y in state.deferred_exits:
            if self._has_any_grad(y.op):
                used = True
                queue.append(y.op)
            else:
                state.unused_exits.append(y)
        for y in state.unused_exits:
            if used and is_trainable(y):
                self._set_grad(y, loops.zeros_like_for_exit(y))
            queue.append(y.op)

    def _has_any_grad(self, op: Operation) -> bool:
        for g in self._grads.get(op, ()):
            if isinstance(g, (Tensor, IndexedSlices)):
                return True
            if isinstance(g, list) and any(x is not None for x in g):
                return True
        return False

    def _visit(self, op: Operation) -> None:
        loops = self._loop_state
        with _maybe_colocate(op, self._colocate):
            with _grad_while_context(loops, op, before=True):
                out_grads = self._aggregate(op)
            with _grad_while_context(loops, op, before=False):
                in_grads = self._input_grads(op, out_grads)
        for i, (t_in, g) in enumerate(zip(op.inputs, in_grads)):
            if g is None:
                continue
            if isinstance(g, Tensor) and t_in.dtype != dtypes.resource:
                _set_grad_shape(op, i, t_in, g)
            self._set_grad(t_in, g)

    def _input_grads(self, op: Operation, out_grads: list) -> list:
        has_grads = any(g is not None for g in out_grads)
        grad_fn = None
        if has_grads and op not in self._stop_ops:
            grad_fn = get_gradient_function(op)  # LookupError names the op and its type
        if grad_fn is None:
            return [None] * len(op.inputs)
        _check_not_through_loop_switch(op, self._xs)
        for i, g in enumerate(out_grads):
            if g is None and is_trainable(op.outputs[i]):
                out_grads[i] = self._zeros(op, i)
        marked = gradient_attrs(op)
        with name_scope(op.name + "_grad"), \
                (self._graph._attr_scope(marked) if marked else contextlib.nullcontext()):
            in_grads = _as_list(grad_fn(op, *out_grads))
            if len(in_grads) != len(op.inputs):
                raise ValueError(f"Num gradients {len(in_grads)} generated for op {op.name} "
                                 f"({op.type}) do not match num inputs {len(op.inputs)}")
            if self._gate and sum(g is not None for g in in_grads) > 1:
                in_grads = _gate(self._graph, in_grads)
        return in_grads

    def _zeros(self, op: Operation, i: int):
        if self._loop_state is not None:
            return self._loop_state.zeros_like_v1_while_loop(op, i)
        return zeros_for_output(op, i)

    # -- gradient lists -------------------------------------------------------------------
    def _set_grad(self, t: Tensor, grad) -> None:
        op_grads = self._grads.get(t.op)
        if op_grads is None:
            op_grads = self._grads[t.op] = [[] for _ in t.op.outputs]
        if isinstance(op_grads[t.value_index], list):
            op_grads[t.value_index].append(grad)
        else:       # a loop Switch's output, summed when the Switch was first visited
            op_grads[t.value_index] = grad

    def _aggregate(self, op: Operation) -> list:
        """Sums each output's gradient list in place; returns one gradient (or None) each.
        (A loop Switch's outputs summed on its first visit stay as they are.)"""
        op_grads = self._grads.setdefault(op, [[] for _ in op.outputs])
        for i, grads in enumerate(op_grads):
            if not isinstance(grads, list):
                continue
            grads = [g for g in grads if g is not None]
            for g in grads:
                if not isinstance(g, (Tensor, IndexedSlices)):
                    raise TypeError(f"Invalid gradient {g!r} [index = {i}]. Gradients have to "
                                    "be either all Tensors or all IndexedSlices")
            op_grads[i] = self._sum(op, grads)
        return list(op_grads)

    def _sum(self, op: Operation, grads: list):
        if not grads:
            return None
        if len(grads) == 1:
            return grads[0]
        if not all(isinstance(g, Tensor) for g in grads):
            return aggregate_indexed_slices(grads)
        if self._method == AggregationMethod.ADD_N:
            return _multi_device_add_n(self._graph, grads)
        with name_scope(op.name + "_gradient_sum"):
            total = grads[0]
            for g in grads[1:]:
                total = apply_op("AddN", [total, g])
            return total

    def result(self, x: Tensor, unconnected: UnconnectedGradients):
        op_grads = self._grads.get(x.op)
        g = None if op_grads is None else op_grads[x.value_index]
        if isinstance(g, list):  # never visited: x's op is not between xs and ys
            g = None
        if g is None and unconnected == UnconnectedGradients.ZERO:
            with self._graph.as_default():
                return apply_op("ZerosLike", x, name="zeros_like")
        return g


# -- graph analysis ----------------------------------------------------------------------------
def _reached_ops(from_ops) -> set:
    """Ops reachable from `from_ops` through trainable tensors (from_ops included)."""
    reached: set = set()
    queue = collections.deque(from_ops)
    while queue:
        op = queue.popleft()
        if op in reached:
            continue
        reached.add(op)
        for t in op.outputs:
            if is_trainable(t):
                queue.extend(t.consumers())
    return reached


def _between_ops(to_ops, reached: set) -> list:
    """The reached ops from which some `to_op` is reachable (backward BFS from `to_ops`)."""
    remaining = set(reached)
    between = []
    queue = collections.deque(to_ops)
    while queue:
        op = queue.popleft()
        if op in remaining:
            remaining.discard(op)
            between.append(op)
            queue.extend(t.op for t in op.inputs)
    return between


def _pending_counts(between: list) -> collections.defaultdict:
    inside = set(between)
    pending: collections.defaultdict = collections.defaultdict(int)
    for op in between:
        for t in op.inputs:
            if t.op in inside:
                pending[t.op] += 1
    return pending


def _grad_while_context(loops, op: Operation, before: bool):
    """The gradient loop context of `op`'s loop, entered for the block (when there is one)."""
    import contextlib

    if loops is None:
        return contextlib.nullcontext()
    state = loops.get_grad_state(op, before)
    return util.entered(state.grad_context if state is not None else None)


def _check_not_through_loop_switch(op: Operation, xs: list) -> None:
    """Inside a loop body, gradients may not flow back through the loop's own Switch (to a
    loop variable's initial value), as in TF."""
    ctxt = util.get_context(op)
    if not util.is_switch(op) or ctxt is None or ctxt.get_while_context() is not ctxt:
        return
    if ctxt is not op.graph.control_flow_context:
        return
    raise ValueError(
        f"Cannot compute gradient inside while loop with respect to op "
        f"'{_nearest_from_op(op, xs).name}'. We "
        "do not support taking the gradient wrt or through the initial value of a loop "
        "variable. Gradients can be computed through loop invariants or wrt the input "
        "parameters to the loop body.")


def _nearest_from_op(op: Operation, xs: list) -> Operation:
    """The op of an x nearest upstream of `op` (breadth first), for error messages."""
    targets = {x.op for x in xs}
    queue, seen = collections.deque([op]), set()
    while queue:
        cur = queue.popleft()
        if cur in targets:
            return cur
        if cur not in seen:
            seen.add(cur)
            queue.extend(t.op for t in cur.inputs)
    return xs[0].op


# -- pieces of the walk ------------------------------------------------------------------------
def _default_grad_ys(grad_ys, ys, colocate: bool) -> list:
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    grad_ys = convert_n_to_tensor_or_indexed_slices(grad_ys, name="grad_y")
    out = []
    for i, (y, g) in enumerate(zip(ys, grad_ys)):
        with _maybe_colocate(y.op, colocate):
            out.append(_ones_for(y, i) if g is None else _checked_grad_y(y, g, i))
    return out


def _ones_for(y: Tensor, i: int) -> Tensor:
    """TF1's default: `Fill(Shape(y), Const(1, name="grad_ys_<i>"))`."""
    if y.dtype.is_complex:
        raise TypeError(f"Gradients of complex tensors must set grad_ys (y.dtype = "
                        f"{y.dtype.base_dtype.name})")
    shape = shape_tensor(y)
    one = constant(1, dtype=y.dtype.base_dtype, name=f"grad_ys_{i}")
    return apply_op("Fill", shape, one)


def _checked_grad_y(y: Tensor, g, i: int):
    ydt, gdt = y.dtype.base_dtype, g.dtype.base_dtype
    if (ydt.is_floating or ydt.is_integer) and not (gdt.is_floating or gdt.is_integer):
        raise TypeError(f"Gradient type {gdt.name} generated for real or integer-valued tensor "
                        f"{y} with type {ydt.name} must be real or integer")
    if ydt.is_complex and not gdt.is_complex:
        raise TypeError(f"Gradient type {gdt.name} generated for complex-valued tensor {y} "
                        f"with type {ydt.name} must be complex")
    if isinstance(g, IndexedSlices):
        return IndexedSlices(apply_op("Identity", g.values, name=f"grad_ys_{i}_values"),
                             apply_op("Identity", g.indices, name=f"grad_ys_{i}_indices"),
                             g.dense_shape)
    return apply_op("Identity", g, name=f"grad_ys_{i}")


def zeros_for_output(op: Operation, i: int) -> Tensor:
    """Zeros for an output that got no gradient. For a Switch inside a cond branch the zeros
    live only when the *other* branch runs (a Switch on the predicate feeds them), so the
    Merge that the Switch's gradient builds sees exactly one live input."""
    ctxt = util.get_context(op)
    if util.is_switch(op) and getattr(ctxt, "pred", None) is not None:
        from tensorweave.ops.control_flow_context import switch_ref_or_tensor

        with util.outside_context(op.graph, clear_control_dependencies=False):
            other = switch_ref_or_tensor(op.inputs[0], ctxt.pred)[1 - ctxt.branch]
            return apply_op("ZerosLike", other, name="zeros_like")
    return apply_op("ZerosLike", op.outputs[i], name="zeros_like")


def _set_grad_shape(op: Operation, i: int, t_in: Tensor, g: Tensor) -> None:
    try:
        g.set_shape(t_in.shape)
    except ValueError:
        raise ValueError(
            f"Incompatible shapes between op input and calculated input gradient. Forward "
            f"operation: {op.name}. Input index: {i}. Original input shape: {t_in.shape}. "
            f"Calculated input gradient shape: {g.shape}") from None


def _gate(graph, grads: list) -> list:
    """TF's `tuple`: every gradient is an Identity that waits for all of them."""
    from tensorweave.ops.control_flow_ops import group, with_dependencies

    with graph.device(None), graph.colocate_with(None, ignore_existing=True), \
            name_scope(None, "tuple", [g for g in grads if g is not None]):
        gate = group(*[_op_of(g) for g in grads if g is not None])
        out = []
        for g in grads:
            if isinstance(g, IndexedSlices):
                g = IndexedSlices(with_dependencies([gate], g.values), g.indices, g.dense_shape)
            elif g is not None:
                g = with_dependencies([gate], g)
            out.append(g)
        return out


def _multi_device_add_n(graph, grads: list) -> Tensor:
    """One AddN per device (colocated with its first gradient), then one across devices."""
    by_device: dict[str, list] = {}
    for g in grads:
        by_device.setdefault(g.device or "", []).append(g)
    sums = []
    for dev in sorted(by_device):
        group_ = by_device[dev]
        with graph.colocate_with(group_[0].op, ignore_existing=True):
            sums.append(apply_op("AddN", group_))
    return sums[0] if len(sums) == 1 else apply_op("AddN", sums)


def aggregate_indexed_slices(grads: list):
    """Sums gradients of which some are IndexedSlices: dense when any is a Tensor (AddN),
    else one IndexedSlices concatenating values and indices (int64 indices if mixed)."""
    grads = [g for g in grads if g is not None]
    if len(grads) == 1:
        return grads[0]
    if any(isinstance(g, Tensor) for g in grads):
        return apply_op("AddN", grads)
    index_dtypes = {g.indices.dtype.base_dtype for g in grads}
    indices = [g.indices for g in grads]
    if len(index_dtypes) > 1:
        indices = [apply_op("Cast", i, DstT=dtypes.int64) if i.dtype != dtypes.int64 else i
                   for i in indices]
    return IndexedSlices(apply_op("ConcatV2", [g.values for g in grads], 0),
                         apply_op("ConcatV2", indices, 0), grads[0].dense_shape)


def _maybe_colocate(op, colocate: bool):
    import contextlib

    return op.graph.colocate_with(op) if colocate else contextlib.nullcontext()


def _unconnected(value) -> UnconnectedGradients:
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: '{value}'") from None


def _as_list(x) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _op_of(x) -> Operation:
    if isinstance(x, Operation):
        return x
    op = getattr(x, "op", None)
    if isinstance(op, Operation):
        return op
    raise TypeError(f"Expected a Tensor or Operation, got {x!r}")


def _graph_of(values):
    from tensorweave.framework.graph import get_default_graph

    for v in values:
        g = getattr(v, "graph", None)
        if g is not None:
            return g
    return get_default_graph()


# == builders shared by the gradient functions =================================================
def static_dims(t) -> tuple | None:
    """`t`'s shape as a tuple of ints when fully known, else None."""
    dims = t.shape.as_tuple()
    return None if dims is None or None in dims else tuple(dims)


def shape_tensor(t, out_type=dtypes.int32) -> Tensor:
    """TF's `array_ops.shape`: a Const named "Shape" when `t`'s shape is fully known."""
    dims = static_dims(t)
    if dims is not None:
        return constant(np.asarray(dims, dtype=out_type.np_dtype), name="Shape")
    return apply_op("Shape", t, out_type=out_type)


def reshape(t, shape) -> Tensor:
    """Reshape `t` to `shape` (a list or tensor); `t` itself when its static shape already is
    `shape` (a list of ints)."""
    if isinstance(shape, (list, tuple)) and static_dims(t) == tuple(shape):
        return t
    return apply_op("Reshape", t, shape)


def reshape_like(t, like) -> Tensor:
    """`t` reshaped to `like`'s shape (a Const shape when known; skipped when equal)."""
    dims = static_dims(like)
    if dims is not None:
        return reshape(t, list(dims))
    return apply_op("Reshape", t, shape_tensor(like))


def reduction_axes(x_shape, y_shape):
    """The axes along which x and y were broadcast: (x_axes, y_axes) of the broadcast result,
    or (None, None) when that depends on dims unknown statically."""
    x_dims, y_dims = x_shape.as_tuple(), y_shape.as_tuple()
    if x_dims is None or y_dims is None:
        return None, None
    rank = max(len(x_dims), len(y_dims))
    x_dims = (1,) * (rank - len(x_dims)) + tuple(x_dims)
    y_dims = (1,) * (rank - len(y_dims)) + tuple(y_dims)
    x_axes, y_axes = [], []
    for axis, (a, b) in enumerate(zip(x_dims, y_dims)):
        if a == 1 and b != 1:
            x_axes.append(axis)
        elif b == 1 and a != 1:
            y_axes.append(axis)
        elif a is None or b is None:
            return None, None
    return x_axes, y_axes


def sum_to(grad, x, axes, out_rank: int):
    """`grad` (of rank `out_rank`) summed over `axes` down to `x`'s shape, with as few ops as
    the static shapes allow: nothing, one Sum, or Sum + Reshape."""
    if grad is None:
        return None
    x_rank = x.shape.ndims
    pad = out_rank - x_rank
    if not axes and pad == 0:
        return grad
    if axes == list(range(pad)):
        return apply_op("Sum", grad, np.asarray(axes, np.int32), keep_dims=False)
    if axes:
        grad = apply_op("Sum", grad, np.asarray(axes, np.int32), keep_dims=True)
    return grad if pad == 0 else reshape_like(grad, x)


def reduce_for_broadcast(x, y, gx, gy):
    """The gradients of a broadcasting binary op's inputs, given `gx`, `gy` of the output's
    shape: summed over the broadcast axes (static when shapes allow, else through
    BroadcastGradientArgs on the runtime shapes)."""
    if gx is None and gy is None:
        return gx, gy
    x_axes, y_axes = reduction_axes(x.shape, y.shape)
    if x_axes is not None:
        rank = max(x.shape.ndims, y.shape.ndims)
        return sum_to(gx, x, x_axes, rank), sum_to(gy, y, y_axes, rank)
    sx, sy = shape_tensor(x), shape_tensor(y)
    rx, ry = apply_op("BroadcastGradientArgs", sx, sy)
    if gx is not None:
        gx = apply_op("Reshape", apply_op("Sum", gx, rx, keep_dims=True), sx)
    if gy is not None:
        gy = apply_op("Reshape", apply_op("Sum", gy, ry, keep_dims=True), sy)
    return gx, gy


def shapes_equal_and_known(*tensors) -> bool:
    """Whether every tensor's static shape is fully known and all are the same."""
    dims = [static_dims(t) for t in tensors]
    return dims[0] is not None and all(d == dims[0] for d in dims)


def zeros_like(t) -> Tensor:
    return apply_op("ZerosLike", t)


def to_dense(g):
    """`g` as a Tensor: an IndexedSlices is summed into its dense shape (UnsortedSegmentSum),
    without the large-tensor warning of the implicit conversion."""
    if not isinstance(g, IndexedSlices):
        return g
    from tensorweave.ops.indexed_slices import first_dim

    if g.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: {g}")
    return apply_op("UnsortedSegmentSum", g.values, g.indices, first_dim(g.dense_shape))


def is_zero(g) -> bool:
    """Whether gradient `g` is known to be all zeros (a ZerosLike, or a zero constant)."""
    from tensorweave.ops.shape_inference import constant_value

    if g is None or not isinstance(g, Tensor):
        return g is None
    if g.op.type == "ZerosLike":
        return True
    value = constant_value(g)
    return value is not None and not np.any(value)


def conj(t) -> Tensor:
    """The complex conjugate of `t` (`t` itself unless complex)."""
    return apply_op("Conj", t) if t.dtype.is_complex else t


__all__ = ["gradients", "AggregationMethod", "UnconnectedGradients"]
