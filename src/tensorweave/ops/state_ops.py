"""State ops: ref variables and the ops that read or mutate them in place.

Op types, inputs, attrs and defaults are TensorFlow's (`VariableV2`, `Assign`, `AssignAdd`,
`ScatterUpdate`, `CountUpTo`, ...). A variable op outputs a `Ref(dtype)`; its kernel looks the
`runtime.resources.Ref` up in the device's resource container, so the value lives as long as
the worker (a local session). Kernels: `runtime/kernels/cpu/state.py`.

Also here: `op_name_scope`, TF's `with name_scope(name, default) as scope: ... op(name=scope)`
idiom, which gives the block's final op the scope's own name ("random_normal").
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from tensorweave.framework.graph import get_default_graph
from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import scalar
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

_MINMAX_TYPES = "{half, bfloat16, float, double, int32, int64}"


# -- shape functions -------------------------------------------------------------------------
def merge_shapes(ctx, a: TensorShape, b: TensorShape) -> TensorShape:
    """TF's InferenceContext::Merge, with its messages (raised through `ctx.fail`)."""
    da, db = a.as_tuple(), b.as_tuple()
    if da is None:
        return b
    if db is None:
        return a
    if len(da) != len(db):
        raise ctx.fail(f"Shapes must be equal rank, but are {len(da)} and {len(db)}")
    for i, (p, q) in enumerate(zip(da, db)):
        if p is not None and q is not None and p != q:
            raise ctx.fail(f"Dimension {i} in both shapes must be equal, but are {p} and {q}. "
                           f"Shapes are {_fmt(da)} and {_fmt(db)}.")
    return a.merge_with(b)


def _fmt(dims) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _explicit_shape(ctx) -> TensorShape:
    return ctx.attr("shape")


def _legacy_variable_shape(ctx) -> TensorShape:
    """`Variable` cannot tell a scalar shape attr from an unknown shape: rank 0 is unknown."""
    shape = ctx.attr("shape")
    return shape if shape.ndims else TensorShape(None)


def _assign_shape(ctx) -> TensorShape:
    if not ctx.attr("validate_shape"):
        return ctx.input_shape(1)
    return merge_shapes(ctx, ctx.input_shape(0), ctx.input_shape(1))


def _merge_both(ctx) -> TensorShape:
    return merge_shapes(ctx, ctx.input_shape(0), ctx.input_shape(1))


def _scatter_shape(ctx) -> TensorShape:
    """updates must be indices.shape + ref.shape[1:] (or a scalar); output is ref's shape."""
    ref, indices, updates = ctx.input_shape(0), ctx.input_shape(1), ctx.input_shape(2)
    if ref.ndims == 0:
        raise ctx.fail("Shape must be at least rank 1 but is rank 0")
    if updates.ndims != 0:
        merge_shapes(ctx, updates, indices.concatenate(ref[1:]))
    return ref


def _scatter_nd_shape(ctx) -> TensorShape:
    """updates must be indices.shape[:-1] + ref.shape[indices.shape[-1]:]."""
    ref, indices, updates = ctx.input_shape(0), ctx.input_shape(1), ctx.input_shape(2)
    for name, s in (("indices", indices), ("updates", updates)):
        if s.ndims == 0:
            raise ctx.fail(f"Shape must be at least rank 1 but is rank 0 ({name})")
    depth = indices[-1].value if indices.ndims else None
    if depth is not None and ref.ndims is not None and indices.ndims is not None:
        if depth > ref.ndims:
            raise ctx.fail(f"Dimension must be <= {ref.ndims} but is {depth}")
        want = indices[:-1].concatenate(ref[depth:])
        if updates.ndims is not None and not updates.is_compatible_with(want):
            raise ctx.fail(f"Dimensions [{indices.ndims - 1},{updates.ndims}) of updates"
                           f"[shape={_fmt(updates.as_tuple())}] = {_fmt(updates.as_tuple())} "
                           f"must match dimensions of indices and input, expected "
                           f"{_fmt(want.as_tuple())}")
    return ref


def _count_up_to_shape(ctx) -> TensorShape:
    shape = ctx.input_shape(0)
    if shape.ndims not in (None, 0):
        raise ctx.fail(f"Shape must be rank 0 but is rank {shape.ndims}")
    return TensorShape([])


# -- op registrations (TF's state_ops.cc) ----------------------------------------------------
_VARIABLE_ATTRS = ["dtype: type", "container: string = ''", "shared_name: string = ''"]

register_op("VariableV2", outputs=["ref: Ref(dtype)"], attrs=["shape: shape"] + _VARIABLE_ATTRS,
            shape_fn=_explicit_shape, stateful=True)
register_op("Variable", outputs=["ref: Ref(dtype)"], attrs=["shape: shape"] + _VARIABLE_ATTRS,
            shape_fn=_legacy_variable_shape, stateful=True)
register_op("TemporaryVariable", outputs=["ref: Ref(dtype)"],
            attrs=["shape: shape", "dtype: type", "var_name: string = ''"],
            shape_fn=_explicit_shape, stateful=True)
register_op("DestroyTemporaryVariable", inputs=["ref: Ref(T)"], outputs=["value: T"],
            attrs=["T: type", "var_name: string"], shape_fn=lambda ctx: ctx.input_shape(0))
register_op("IsVariableInitialized", inputs=["ref: Ref(dtype)"], outputs=["is_initialized: bool"],
            attrs=["dtype: type"], shape_fn=scalar, allows_uninitialized_input=True)
register_op("Assign", inputs=["ref: Ref(T)", "value: T"], outputs=["output_ref: Ref(T)"],
            attrs=["T: type", "validate_shape: bool = true", "use_locking: bool = true"],
            shape_fn=_assign_shape, allows_uninitialized_input=True)
for _name in ("AssignAdd", "AssignSub"):
    register_op(_name, inputs=["ref: Ref(T)", "value: T"], outputs=["output_ref: Ref(T)"],
                attrs=["T: numbertype", "use_locking: bool = false"], shape_fn=_merge_both)


def _register_scatter(name: str, types: str, locking: str, shape_fn) -> None:
    register_op(name, inputs=["ref: Ref(T)", "indices: Tindices", "updates: T"],
                outputs=["output_ref: Ref(T)"],
                attrs=[f"T: {types}", "Tindices: {int32, int64}", f"use_locking: bool = {locking}"],
                shape_fn=shape_fn)


_register_scatter("ScatterUpdate", "type", "true", _scatter_shape)
for _name in ("ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv"):
    _register_scatter(_name, "numbertype", "false", _scatter_shape)
for _name in ("ScatterMin", "ScatterMax"):
    _register_scatter(_name, _MINMAX_TYPES, "false", _scatter_shape)
_register_scatter("ScatterNdUpdate", "type", "true", _scatter_nd_shape)
for _name in ("ScatterNdAdd", "ScatterNdSub"):
    _register_scatter(_name, "numbertype", "false", _scatter_nd_shape)
register_op("CountUpTo", inputs=["ref: Ref(T)"], outputs=["output: T"],
            attrs=["limit: int", "T: {int32, int64}"], shape_fn=_count_up_to_shape)


# -- naming helper ---------------------------------------------------------------------------
class ScopeNamer:
    """What `op_name_scope` yields: the scope string and a way to name the final op after it."""

    def __init__(self, graph, full: str):
        self._graph = graph
        self.name = full                       # "a/random_normal" ("" at the root)
        self.scope = f"{full}/" if full else ""

    @contextlib.contextmanager
    def final(self) -> Iterator[str | None]:
        """Within: an op created with `name=<the yielded name>` gets exactly the scope's name."""
        if not self.name:
            yield None
            return
        with self._graph.scopes.name_scope(""):
            yield self.name


@contextlib.contextmanager
def op_name_scope(name, default_name=None, values=None) -> Iterator[ScopeNamer]:
    """TF's `with name_scope(name, default_name, values) as scope:` where the block's last op
    is created with `name=scope` and so takes the scope's own name (`random_normal`, with
    `random_normal/mean` inside it).

    Ops created in the block go under `namer.scope`; create the final op inside
    `with namer.final() as op_name:` with `name=op_name`.
    NOTE: the graph does not take TF's trailing-slash op names, so the scope name is looked up
    without being reserved, entered exactly, and reserved when the final op takes it.
    """
    graph = _graph_of(values) or get_default_graph()
    base = default_name if name is None else name
    with graph.as_default():
        if not base:
            with graph.scopes.name_scope(""):
                yield ScopeNamer(graph, "")
            return
        full = base[:-1] if base.endswith("/") else graph.unique_name(base, mark_as_used=False)
        with graph.scopes.name_scope(full + "/"):
            yield ScopeNamer(graph, full)


def _graph_of(values):
    for v in values or ():
        g = getattr(v, "graph", None)
        if g is not None:
            return g
    return None


# -- Python wrappers (TF's state_ops.py) -----------------------------------------------------
def variable_op_v2(shape, dtype, name="Variable", container="", shared_name=""):
    """A `VariableV2` op's ref output (TF's `state_ops.variable_op_v2`)."""
    return apply_op("VariableV2", shape=TensorShape(shape), dtype=dtype, name=name,
                    container=container, shared_name=shared_name)


def _delegates(ref, method: str) -> bool:
    """True for variable-like objects (not ref tensors) that implement `method` themselves."""
    dt = getattr(ref, "dtype", None)
    is_ref = dt is not None and getattr(dt, "is_ref_dtype", False)
    return not is_ref and hasattr(ref, method)


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """`ref = value`; returns the ref after the assignment (TF1 `tf.assign`)."""
    if _delegates(ref, "assign"):
        return ref.assign(value, name=name)
    return apply_op("Assign", ref, value, validate_shape=validate_shape,
                    use_locking=use_locking, name=name)


def assign_add(ref, value, use_locking=None, name=None):
    """`ref += value` in place; returns the ref (TF1 `tf.assign_add`)."""
    if _delegates(ref, "assign_add"):
        return ref.assign_add(value)
    return apply_op("AssignAdd", ref, value, use_locking=use_locking, name=name)


def assign_sub(ref, value, use_locking=None, name=None):
    """`ref -= value` in place; returns the ref (TF1 `tf.assign_sub`)."""
    if _delegates(ref, "assign_sub"):
        return ref.assign_sub(value)
    return apply_op("AssignSub", ref, value, use_locking=use_locking, name=name)


def is_variable_initialized(ref, name=None):
    """A scalar bool tensor: whether `ref` (a ref tensor or Variable) holds a value."""
    return apply_op("IsVariableInitialized", ref, name=name)


def count_up_to(ref, limit, name=None):
    """Increments `ref` and returns its old value; OutOfRangeError once it reaches `limit`."""
    return apply_op("CountUpTo", ref, limit=limit, name=name)


def _scatter(op_type: str):
    def fn(ref, indices, updates, use_locking=None, name=None):
        return apply_op(op_type, ref, indices, updates, use_locking=use_locking, name=name)

    fn.__doc__ = f"TF1 `tf.{_snake(op_type)}`: the `{op_type}` op on `ref`; returns the ref."
    fn.__name__ = _snake(op_type)
    return fn


def _snake(op_type: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in op_type).lstrip("_")


scatter_update = _scatter("ScatterUpdate")
scatter_add = _scatter("ScatterAdd")
scatter_sub = _scatter("ScatterSub")
scatter_mul = _scatter("ScatterMul")
scatter_div = _scatter("ScatterDiv")
scatter_min = _scatter("ScatterMin")
scatter_max = _scatter("ScatterMax")
scatter_nd_update = _scatter("ScatterNdUpdate")
scatter_nd_add = _scatter("ScatterNdAdd")
scatter_nd_sub = _scatter("ScatterNdSub")

__all__ = [
    "assign", "assign_add", "assign_sub", "is_variable_initialized", "count_up_to",
    "scatter_update", "scatter_add", "scatter_sub", "scatter_mul", "scatter_div", "scatter_min",
    "scatter_max", "scatter_nd_update", "scatter_nd_add", "scatter_nd_sub",
]
