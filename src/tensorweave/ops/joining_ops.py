"""Array ops that join, repeat, pad, reorder or broadcast whole tensors.

ConcatV2, Pack, Tile, Pad, PadV2, MirrorPad, ReverseV2, Transpose, ConjugateTranspose,
BroadcastTo, BroadcastArgs, SpaceToDepth and DepthToSpace, with the TF1 wrappers `concat`,
`stack`, `tile`, `pad`, `reverse`, `transpose`, `broadcast_to`, ...
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.array_ops import as_shape_input, identity
from tensorweave.ops.op_scope import OpScope
from tensorweave.ops.registry import register_op
from tensorweave.ops.shape_inference import constant_value, register_constant_evaluator
from tensorweave.ops.shape_tensors import input_tensor, partial_shape, small_enough
from tensorweave.shapes import TensorShape, broadcast_shapes

_IDX = "{int32, int64} = DT_INT32"


def fmt(dims) -> str:
    """A shape as TF's DebugString writes it: [2,?,3], or ? for unknown rank."""
    if dims is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def merge_dims(ctx, a, b):
    """TF's InferenceContext::Merge on dim tuples (None = unknown rank), with its messages."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b):
        raise ctx.fail(f"Shapes must be equal rank, but are {len(a)} and {len(b)}")
    out = []
    for i, (p, q) in enumerate(zip(a, b)):
        if p is not None and q is not None and p != q:
            raise ctx.fail(f"Dimension {i} in both shapes must be equal, but are {p} and {q}. "
                           f"Shapes are {fmt(a)} and {fmt(b)}.")
        out.append(p if p is not None else q)
    return tuple(out)


def with_rank(ctx, dims, rank: int):
    if dims is None:
        return (None,) * rank
    if len(dims) != rank:
        raise ctx.fail(f"Shape must be rank {rank} but is rank {len(dims)}")
    return dims


# -- ConcatV2 ---------------------------------------------------------------------------------
def _concat_shape(ctx):
    n = ctx.num_inputs - 1
    axis = ctx.constant_value(n)
    shapes = [ctx.input_dims(i) for i in range(n)]
    rank = next((len(s) for s in shapes if s is not None), None)
    if rank is None:
        return TensorShape(None)
    if rank == 0:
        raise ctx.fail("Can't concatenate scalars (use tf.stack instead)")
    if axis is None:
        for s in shapes:
            with_rank(ctx, s, rank)
        return TensorShape([None] * rank)
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ctx.fail(f"Expected concat_dim in [{-rank}, {rank}) but got {axis}")
    axis %= rank
    return TensorShape(_concat_dims(ctx, shapes, rank, axis))


def _concat_dims(ctx, shapes, rank, axis):
    out, total = None, 0
    for s in shapes:
        s = with_rank(ctx, s, rank)
        total = None if total is None or s[axis] is None else total + s[axis]
        rest = s[:axis] + (None,) + s[axis + 1:]
        out = merge_dims(ctx, out, rest)
    return out[:axis] + (total,) + out[axis + 1:]


register_op("ConcatV2", inputs=["values: N * T", "axis: Tidx"], outputs=["output: T"],
            attrs=["N: int >= 2", "T: type", f"Tidx: {_IDX}"], shape_fn=_concat_shape)


@register_constant_evaluator("ConcatV2")
def _concat_value(op):
    values = [constant_value(t) for t in op.inputs]
    if any(v is None for v in values) or not small_enough(sum(np.size(v) for v in values)):
        return None
    return np.concatenate(values[:-1], axis=int(values[-1]))


# -- Pack -------------------------------------------------------------------------------------
def _pack_shape(ctx):
    cur = None
    for i in range(ctx.num_inputs - 1, -1, -1):
        try:
            cur = merge_dims(ctx, ctx.input_dims(i), cur)
        except ValueError as e:
            raise ctx.fail(f"{e}\n\tFrom merging shape {i} with other shapes.") from None
    if cur is None:
        return TensorShape(None)
    axis = _pack_axis(ctx, ctx.attr("axis"), len(cur) + 1)
    return TensorShape(cur[:axis] + (ctx.num_inputs,) + cur[axis:])


def _pack_axis(ctx, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ctx.fail(f"Invalid axis: {axis}; must be in [{-rank},{rank})")
    return axis % rank


register_op("Pack", inputs=["values: N * T"], outputs=["output: T"],
            attrs=["N: int >= 1", "T: type", "axis: int = 0"], shape_fn=_pack_shape)


@register_constant_evaluator("Pack")
def _pack_value(op):
    values = [constant_value(t) for t in op.inputs]
    if any(v is None for v in values) or not small_enough(sum(np.size(v) for v in values)):
        return None
    return np.stack(values, axis=op.get_attr("axis"))


# -- Tile -------------------------------------------------------------------------------------
def _tile_shape(ctx):
    dims = ctx.input_dims(0)
    mult = partial_shape(input_tensor(ctx, 1)).as_tuple()
    if dims is not None:
        mult = with_rank(ctx, mult, len(dims))
    if mult is None:
        return TensorShape(None)
    dims = with_rank(ctx, dims, len(mult))
    return TensorShape([None if d is None or m is None else d * m for d, m in zip(dims, mult)])


register_op("Tile", inputs=["input: T", "multiples: Tmultiples"], outputs=["output: T"],
            attrs=["T: type", f"Tmultiples: {_IDX}"], shape_fn=_tile_shape)


@register_constant_evaluator("Tile")
def _tile_value(op):
    value, mult = (constant_value(t) for t in op.inputs)
    if value is None or mult is None or not small_enough(np.size(value) * np.prod(mult)):
        return None
    return np.tile(value, [int(m) for m in mult])


# -- Pad, PadV2, MirrorPad --------------------------------------------------------------------
def _pad_shape(ctx):
    pad_dims = with_rank(ctx, ctx.input_dims(1), 2)
    if pad_dims[1] is not None and pad_dims[1] != 2:
        raise ctx.fail(f"Dimension must be 2 but is {pad_dims[1]}")
    dims = ctx.input_dims(0)
    n = pad_dims[0]
    if n is not None:
        dims = with_rank(ctx, dims, n)
    elif dims is not None:
        n = len(dims)
    paddings = ctx.constant_value(1)
    if paddings is None:
        return TensorShape(None if n is None else [None] * n)
    if (paddings < 0).any():
        raise ctx.fail("Paddings must be non-negative")
    dims = with_rank(ctx, dims, paddings.shape[0])
    return TensorShape([None if d is None else d + int(p[0]) + int(p[1])
                        for d, p in zip(dims, paddings)])


register_op("Pad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
            attrs=["T: type", f"Tpaddings: {_IDX}"], shape_fn=_pad_shape)
register_op("PadV2", inputs=["input: T", "paddings: Tpaddings", "constant_values: T"],
            outputs=["output: T"], attrs=["T: type", f"Tpaddings: {_IDX}"],
            shape_fn=_pad_shape)
register_op("MirrorPad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
            attrs=["T: type", f"Tpaddings: {_IDX}", "mode: {'REFLECT', 'SYMMETRIC'}"],
            shape_fn=_pad_shape)


# -- ReverseV2 --------------------------------------------------------------------------------
def _reverse_shape(ctx):
    with_rank(ctx, ctx.input_dims(1), 1)
    dims = ctx.input_dims(0)
    if dims is not None and len(dims) > 8:
        raise ctx.fail("reverse does not work on tensors with more than 8 dimensions")
    axes = ctx.constant_value(1)
    if axes is not None and dims is not None:
        canonical_axes(axes, len(dims), ctx.fail)
    return ctx.input_shape(0)


def canonical_axes(axes, rank, fail) -> tuple:
    """ReverseV2's axis check: each in [-rank, rank), none twice. Raises fail(message)."""
    seen = []
    for i, a in enumerate(np.reshape(axes, [-1]).tolist()):
        c = a + rank if a < 0 else a
        if not 0 <= c < rank:
            raise fail(f"'axis'[{i}] = {a} is out of valid range [0, {rank - 1}")
        if c in seen:
            raise fail(f"axis {c} specified more than once.")
        seen.append(c)
    return tuple(seen)


register_op("ReverseV2", inputs=["tensor: T", "axis: Tidx"], outputs=["output: T"],
            attrs=[f"Tidx: {_IDX}",
                   "T: {uint8, int8, uint16, int16, int32, int64, bool, bfloat16, half, float, "
                   "double, complex64, complex128, string}"],
            shape_fn=_reverse_shape)


# -- Transpose --------------------------------------------------------------------------------
def _transpose_shape(ctx):
    dims = ctx.input_dims(0)
    perm_dims = ctx.input_dims(1)
    perm = ctx.constant_value(1)
    n_perm = perm_dims[0] if perm_dims is not None and len(perm_dims) == 1 else None
    if dims is None and n_perm is None and perm is None:
        return TensorShape(None)
    rank = len(dims) if dims is not None else n_perm if n_perm is not None else perm.size
    if dims is None and rank < 2:
        return ctx.input_shape(0)
    dims = with_rank(ctx, dims, rank)
    if n_perm is not None and n_perm != rank:
        raise ctx.fail(f"Dimension must be {rank} but is {n_perm}")
    if perm is None:
        return TensorShape([None] * rank)
    out = []
    for p in np.reshape(perm, [-1]).tolist():
        if p >= rank or p < -rank:
            raise ctx.fail(f"perm dim {p} is out of range of input rank {rank}")
        out.append(dims[p])
    return TensorShape(out)


for _name in ("Transpose", "ConjugateTranspose"):
    register_op(_name, inputs=["x: T", "perm: Tperm"], outputs=["y: T"],
                attrs=["T: type", f"Tperm: {_IDX}"], shape_fn=_transpose_shape)


@register_constant_evaluator("Transpose")
def _transpose_value(op):
    value, perm = (constant_value(t) for t in op.inputs)
    if value is None or perm is None:
        return None
    return np.transpose(value, [int(p) for p in np.reshape(perm, [-1])])


# -- BroadcastTo, BroadcastArgs ---------------------------------------------------------------
def _broadcast_to_shape(ctx):
    out = partial_shape(input_tensor(ctx, 1)).as_tuple()
    dims = ctx.input_dims(0)
    if out is None or dims is None:
        return TensorShape(out)
    if len(out) < len(dims):
        raise ctx.fail(f"Cannot broadcast a tensor with shape {fmt(dims)} shape {fmt(out)}")
    offset = len(out) - len(dims)
    result = list(out)
    for i, d in enumerate(dims):
        o = out[offset + i]
        if o is not None and d is not None and d != 0 and o % d:
            raise ctx.fail(f"Cannot broadcast a tensor with shape {fmt(dims)} shape {fmt(out)}")
        if o is None and d is not None and d != 1:
            result[offset + i] = d
    return TensorShape(result)


def _broadcast_args_shape(ctx):
    a = with_rank(ctx, ctx.input_dims(0), 1)[0]
    b = with_rank(ctx, ctx.input_dims(1), 1)[0]
    return TensorShape([None if a is None or b is None else max(a, b)])


register_op("BroadcastTo", inputs=["input: T", "shape: Tidx"], outputs=["output: T"],
            attrs=["T: type", f"Tidx: {_IDX}"], shape_fn=_broadcast_to_shape)
register_op("BroadcastArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T"],
            attrs=[f"T: {_IDX}"], shape_fn=_broadcast_args_shape)


@register_constant_evaluator("BroadcastArgs")
def _broadcast_args_value(op):
    a, b = (constant_value(t) for t in op.inputs)
    if a is None or b is None:
        return None
    out = np.broadcast_shapes(tuple(a.tolist()), tuple(b.tolist()))
    return np.array(out, dtype=a.dtype)


# -- SpaceToDepth, DepthToSpace ---------------------------------------------------------------
def _space_depth_shape(to_depth: bool):
    def shape_fn(ctx):
        fmt_ = ctx.attr("data_format")
        if fmt_ == "NCHW_VECT_C":
            return TensorShape(None)
        n, h, w, c = _nhwc(fmt_, with_rank(ctx, ctx.input_dims(0), 4))
        bs = ctx.attr("block_size")
        if to_depth:
            h, w = _divide(ctx, h, bs), _divide(ctx, w, bs)
            c = None if c is None else c * bs * bs
        else:
            h = None if h is None else h * bs
            w = None if w is None else w * bs
            c = _divide(ctx, c, bs * bs)
        return TensorShape([n, h, w, c] if fmt_ == "NHWC" else [n, c, h, w])

    return shape_fn


def _nhwc(data_format, dims):
    return dims if data_format == "NHWC" else (dims[0], dims[2], dims[3], dims[1])


def _divide(ctx, d, by):
    if d is None:
        return None
    if d % by:
        raise ctx.fail(f"Dimension size must be evenly divisible by {by} but is {d}")
    return d // by


for _name, _to_depth in (("SpaceToDepth", True), ("DepthToSpace", False)):
    register_op(_name, inputs=["input: T"], outputs=["output: T"],
                attrs=["T: type", "block_size: int >= 2",
                       "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"],
                shape_fn=_space_depth_shape(_to_depth))


# -- Python API -------------------------------------------------------------------------------
def concat(values, axis, name="concat"):
    """Concatenates `values` along `axis` (ConcatV2; a single value becomes an Identity)."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        with name_scope(name):
            axis_t = convert_to_tensor(axis, name="concat_dim", dtype=dtypes.int32)
            if axis_t.shape.ndims not in (None, 0):
                raise ValueError(f"Shape {axis_t.shape} must have rank 0")
            return identity(values[0], name=name)
    return apply_op("ConcatV2", list(values), axis, name=name)


def stack(values, axis=0, name="stack"):
    """Packs the rank-R tensors in `values` into one rank-(R+1) tensor along `axis`."""
    if axis == 0:
        try:
            return convert_to_tensor(values, name=name)
        except (TypeError, ValueError):
            pass
    first = values[0]
    ndims = first.shape.ndims if hasattr(first, "shape") and hasattr(first, "op") \
        else np.ndim(first)
    if ndims is not None:
        n = ndims + 1
        if axis < -n or axis >= n:
            raise ValueError(f"axis = {axis} not in [{-n}, {n})")
    return apply_op("Pack", list(values), axis=axis, name=name)


pack = stack


def tile(input, multiples, name=None):  # noqa: A002 - TF's argument name
    """Repeats `input` `multiples[i]` times along dimension i."""
    return apply_op("Tile", input, as_shape_input(multiples), name=name)


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """Pads `tensor` (mode CONSTANT → Pad/PadV2, REFLECT/SYMMETRIC → MirrorPad)."""
    mode = mode.upper()
    if mode == "CONSTANT":
        if not hasattr(constant_values, "op") and np.all(np.asarray(constant_values) == 0):
            return apply_op("Pad", tensor, paddings, name=name)
        x = convert_to_tensor(tensor)
        return apply_op("PadV2", x, paddings,
                        convert_to_tensor(constant_values, dtype=x.dtype.base_dtype),
                        name=name)
    if mode in ("REFLECT", "SYMMETRIC"):
        return apply_op("MirrorPad", tensor, paddings, mode=mode, name=name)
    raise ValueError(f"Unknown padding mode: {mode}")


def reverse(tensor, axis, name=None):
    """Reverses `tensor` along each dimension in `axis` (ReverseV2)."""
    return apply_op("ReverseV2", tensor, axis, name=name)


reverse_v2 = reverse


def transpose(a, perm=None, name="transpose", conjugate=False):
    """Permutes the dims of `a` (reversed when `perm` is None); conjugates complex values
    when `conjugate`."""
    with OpScope(name, "transpose", [a]) as s:
        a = convert_to_tensor(a, name="a")
        op_type = "ConjugateTranspose" if conjugate and a.dtype.is_complex else "Transpose"
        if perm is None:
            ndims = a.shape.ndims
            if ndims is not None:
                perm = np.arange(ndims - 1, -1, -1, dtype=np.int32)
            else:
                perm = _reversed_range(a)
        if not hasattr(perm, "op"):
            perm = convert_to_tensor(perm, name="perm")
        return s.apply(op_type, a, perm)


def _reversed_range(a):
    from tensorweave.ops.creation_ops import range as range_

    r = apply_op("Rank", a)
    return apply_op("ReverseV2", range_(0, r, 1), [0])


def broadcast_to(input, shape, name=None):  # noqa: A002
    """Broadcasts `input` to `shape` (BroadcastTo)."""
    return apply_op("BroadcastTo", input, as_shape_input(shape), name=name)


def broadcast_dynamic_shape(shape_x, shape_y):
    """The broadcast of two shape vectors (BroadcastArgs)."""
    return apply_op("BroadcastArgs", shape_x, shape_y)


def broadcast_static_shape(shape_x, shape_y) -> TensorShape:
    """The broadcast of two TensorShapes. Raises ValueError when they cannot broadcast."""
    return broadcast_shapes(TensorShape(shape_x), TensorShape(shape_y))


def space_to_depth(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """Moves `block_size` x `block_size` spatial blocks into the depth dimension."""
    return apply_op("SpaceToDepth", input, block_size=block_size, data_format=data_format,
                    name=name)


def depth_to_space(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """The inverse of `space_to_depth`."""
    return apply_op("DepthToSpace", input, block_size=block_size, data_format=data_format,
                    name=name)


__all__ = [
    "concat", "stack", "pack", "tile", "pad", "reverse", "reverse_v2", "transpose",
    "broadcast_to", "broadcast_dynamic_shape", "broadcast_static_shape", "space_to_depth",
    "depth_to_space",
]
