"""Array ops that index by value: Gather, GatherV2, GatherNd, ScatterNd, OneHot, Where,
Select, SelectV2, Unique, ListDiff and InvertPermutation, with the TF1 wrappers `gather`,
`gather_nd`, `scatter_nd`, `one_hot`, `where` (TF1: 1 arg → Where, 3 args → Select),
`where_v2`, `boolean_mask`, `unique`, `setdiff1d` and `invert_permutation`.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.array_ops import reshape, squeeze
from tensorweave.ops.joining_ops import fmt, merge_dims, with_rank
from tensorweave.ops.op_scope import OpScope
from tensorweave.ops.registry import register_op
from tensorweave.ops.shape_inference import constant_value, register_constant_evaluator
from tensorweave.ops.shape_tensors import (
    input_tensor,
    partial_shape,
    partial_vector,
    small_enough,
)
from tensorweave.shapes import TensorShape, broadcast_shapes

_INDEX = "{int32, int64}"


def _at_least(ctx, dims, rank):
    if dims is not None and len(dims) < rank:
        raise ctx.fail(f"Shape must be at least rank {rank} but is rank {len(dims)}")
    return dims


# -- Gather, GatherV2 -------------------------------------------------------------------------
def _gather_shape(ctx):
    params = _at_least(ctx, ctx.input_dims(0), 1)
    indices = ctx.input_dims(1)
    if params is None or indices is None:
        return TensorShape(None)
    return TensorShape(indices + params[1:])


def _gather_v2_shape(ctx):
    params = _at_least(ctx, ctx.input_dims(0), 1)
    indices = ctx.input_dims(1)
    with_rank(ctx, ctx.input_dims(2), 0)
    axis, batch_dims = ctx.constant_value(2), ctx.attr("batch_dims")
    if axis is None or params is None or indices is None:
        if params is not None and indices is not None:
            return TensorShape([None] * (len(params) + len(indices) - 1 - _nonneg(
                batch_dims, len(indices))))
        return TensorShape(None)
    axis = int(axis)
    _at_least(ctx, params, -axis if axis < 0 else axis + 1)
    axis %= len(params)
    batch_dims = _nonneg(batch_dims, len(indices))
    if batch_dims > axis:
        raise ctx.fail(f"batch_dims ({batch_dims}) must be less than or equal to axis "
                       f"({axis}).")
    merge_dims(ctx, params[:batch_dims], indices[:batch_dims])
    return TensorShape(params[:axis] + indices[batch_dims:] + params[axis + 1:])


def _nonneg(batch_dims, rank):
    return batch_dims + rank if batch_dims < 0 else batch_dims


register_op("Gather", inputs=["params: Tparams", "indices: Tindices"],
            outputs=["output: Tparams"],
            attrs=["validate_indices: bool = true", "Tparams: type", f"Tindices: {_INDEX}"],
            shape_fn=_gather_shape)
register_op("GatherV2", inputs=["params: Tparams", "indices: Tindices", "axis: Taxis"],
            outputs=["output: Tparams"],
            attrs=["batch_dims: int = 0", "Tparams: type", f"Tindices: {_INDEX}",
                   f"Taxis: {_INDEX}"],
            shape_fn=_gather_v2_shape)


def _gather_value(op):
    params, indices = (constant_value(t) for t in op.inputs[:2])
    axis = constant_value(op.inputs[2]) if len(op.inputs) > 2 else 0
    batch_dims = op.get_attr("batch_dims") if op.type == "GatherV2" else 0
    if indices is None or axis is None or batch_dims:
        return None
    if params is None:
        return _gather_partial(op.inputs[0], indices, int(axis), op.outputs[0].dtype)
    row = np.size(params) // max(np.shape(params)[int(axis)], 1)
    if not small_enough(np.size(indices) * row):
        return None
    return np.take(params, indices, axis=int(axis))


def _gather_partial(params, indices, axis, dtype):
    """`tf.gather(tf.shape(x), i)` when the picked dims of x are statically known."""
    entries = partial_vector(params)
    if entries is None or axis not in (0, -1):
        return None
    picked = [entries[i] for i in np.reshape(indices, [-1]).tolist()]
    if not all(isinstance(p, int) for p in picked):
        return None
    return np.array(picked, dtype=dtype.np_dtype).reshape(np.shape(indices))


register_constant_evaluator("Gather")(_gather_value)
register_constant_evaluator("GatherV2")(_gather_value)


# -- GatherNd, ScatterNd ----------------------------------------------------------------------
def _gather_nd_shape(ctx):
    params = ctx.input_dims(0)
    indices = _at_least(ctx, ctx.input_dims(1), 1)
    if params is None or indices is None or indices[-1] is None:
        return TensorShape(None)
    r = indices[-1]
    if r > len(params):
        raise ctx.fail(f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
                       f"{fmt(indices)} and params shape: {fmt(params)}")
    return TensorShape(indices[:-1] + params[r:])


def _scatter_nd_shape(ctx):
    indices = _at_least(ctx, ctx.input_dims(0), 1)
    updates = _at_least(ctx, ctx.input_dims(1), 1)
    out = partial_shape(input_tensor(ctx, 2)).as_tuple()
    if out is None or indices is None or updates is None or indices[-1] is None:
        return TensorShape(out)
    outer, ix = len(indices) - 1, indices[-1]
    try:
        merge_dims(ctx, indices[:outer], updates[:outer])
    except ValueError as e:
        raise ctx.fail(f"The outer {outer} dimensions of indices.shape={fmt(indices)} must "
                       f"match the outer {outer} dimensions of updates.shape={fmt(updates)}: "
                       f"{e}") from None
    try:
        merge_dims(ctx, out[ix:], updates[outer:])
    except ValueError as e:
        raise ctx.fail(f"The inner {len(out) - ix} dimensions of output.shape={fmt(out)} must "
                       f"match the inner {len(updates) - outer} dimensions of "
                       f"updates.shape={fmt(updates)}: {e}") from None
    return TensorShape(out)


register_op("GatherNd", inputs=["params: Tparams", "indices: Tindices"],
            outputs=["output: Tparams"], attrs=["Tparams: type", f"Tindices: {_INDEX}"],
            shape_fn=_gather_nd_shape)
register_op("ScatterNd", inputs=["indices: Tindices", "updates: T", "shape: Tindices"],
            outputs=["output: T"], attrs=["T: type", f"Tindices: {_INDEX}"],
            shape_fn=_scatter_nd_shape)


# -- OneHot -----------------------------------------------------------------------------------
def _one_hot_shape(ctx):
    axis = ctx.attr("axis")
    if axis < -1:
        raise ctx.fail("axis must be >= -1")
    with_rank(ctx, ctx.input_dims(1), 0)
    depth = ctx.constant_value(1)
    if depth is not None and int(depth) < 0:
        raise ctx.fail(f"Dimension size, given by scalar input 1, must be non-negative but is "
                       f"{int(depth)}")
    dims = ctx.input_dims(0)
    if dims is None:
        return TensorShape(None)
    at = (axis + len(dims) + 1) % (len(dims) + 1)
    return TensorShape(dims[:at] + (None if depth is None else int(depth),) + dims[at:])


register_op("OneHot", inputs=["indices: TI", "depth: int32", "on_value: T", "off_value: T"],
            outputs=["output: T"],
            attrs=["axis: int = -1", "T: type", "TI: {uint8, int32, int64} = DT_INT64"],
            shape_fn=_one_hot_shape)


# -- Where, Select, SelectV2 ------------------------------------------------------------------
def _where_shape(ctx):
    return TensorShape([None, ctx.input_shape(0).ndims])


def _select_shape(ctx):
    cond, t, e = (ctx.input_dims(i) for i in range(3))
    data = merge_dims(ctx, t, e)
    if data is None or cond is None or len(cond) == 0:
        return TensorShape(data)
    if len(cond) != 1 or not data:
        return TensorShape(merge_dims(ctx, data, cond))
    merge_dims(ctx, cond, data[:1])
    return TensorShape(data)


def _select_v2_shape(ctx):
    out = ctx.input_shape(0)
    for i in (1, 2):
        try:
            out = broadcast_shapes(out, ctx.input_shape(i))
        except ValueError:
            raise ctx.fail(f"Dimensions must be equal, but are {out} and "
                           f"{ctx.input_shape(i)}") from None
    return out


register_op("Where", inputs=["input: T"], outputs=["index: int64"],
            attrs=["T: {numbertype, bool} = DT_BOOL"], shape_fn=_where_shape)
register_op("Select", inputs=["condition: bool", "t: T", "e: T"], outputs=["output: T"],
            attrs=["T: type"], shape_fn=_select_shape)
register_op("SelectV2", inputs=["condition: bool", "t: T", "e: T"], outputs=["output: T"],
            attrs=["T: type"], shape_fn=_select_v2_shape)


# -- Unique, ListDiff, InvertPermutation ------------------------------------------------------
def _unique_shape(ctx):
    with_rank(ctx, ctx.input_dims(0), 1)
    return [TensorShape([None]), ctx.input_shape(0)]


def _list_diff_shape(ctx):
    with_rank(ctx, ctx.input_dims(0), 1)
    with_rank(ctx, ctx.input_dims(1), 1)
    return [TensorShape([None])] * 2


def _vector_shape(ctx):
    return TensorShape(with_rank(ctx, ctx.input_dims(0), 1))


register_op("Unique", inputs=["x: T"], outputs=["y: T", "idx: out_idx"],
            attrs=["T: type", "out_idx: {int32, int64} = DT_INT32"], shape_fn=_unique_shape)
register_op("ListDiff", inputs=["x: T", "y: T"], outputs=["out: T", "idx: out_idx"],
            attrs=["T: type", "out_idx: {int32, int64} = DT_INT32"], shape_fn=_list_diff_shape)
register_op("InvertPermutation", inputs=["x: T"], outputs=["y: T"],
            attrs=["T: {int32, int64} = DT_INT32"], shape_fn=_vector_shape)


# -- Python API -------------------------------------------------------------------------------
def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """Gathers slices of `params` along `axis` (GatherV2; a resource variable's
    `sparse_read` when it has one and axis is 0)."""
    del validate_indices
    if axis is None:
        axis = batch_dims
    static_axis = constant_value(axis) if hasattr(axis, "op") else axis
    if static_axis is None or int(static_axis) != 0:
        return apply_op("GatherV2", params, indices, axis, batch_dims=batch_dims, name=name)
    sparse_read = getattr(params, "sparse_read", None)
    if sparse_read is not None:
        return sparse_read(indices, name=name)
    return apply_op("GatherV2", params, indices, axis, name=name)


def gather_nd(params, indices, name=None, batch_dims=0):
    """Gathers slices of `params` addressed by the last dimension of `indices` (GatherNd)."""
    if batch_dims:
        raise NotImplementedError("gather_nd with batch_dims > 0 is not supported yet")
    return apply_op("GatherNd", params, indices, name=name)


def scatter_nd(indices, updates, shape, name=None):
    """A zero tensor of `shape` with `updates` added at `indices` (ScatterNd)."""
    from tensorweave.ops.array_ops import as_shape_input

    return apply_op("ScatterNd", indices, updates, as_shape_input(shape), name=name)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """A one-hot tensor: `on_value` where the index matches, `off_value` elsewhere; the new
    dimension of size `depth` goes at `axis` (-1: last)."""
    with OpScope(name, "one_hot", [indices, depth, on_value, off_value, axis, dtype]) as s:
        dtype = dtypes.as_dtype(dtype).base_dtype if dtype is not None else None
        on_t = None if on_value is None else convert_to_tensor(on_value)
        off_t = None if off_value is None else convert_to_tensor(off_value)
        on_dtype = None if on_t is None else on_t.dtype.base_dtype
        off_dtype = None if off_t is None else off_t.dtype.base_dtype
        for what, found in (("on_value", on_dtype), ("off_value", off_dtype)):
            if dtype is not None and found is not None and found != dtype:
                raise TypeError(f"dtype {found} of {what} does not match dtype parameter "
                                f"{dtype}")
        if dtype is None:
            dtype = on_dtype or off_dtype or dtypes.float32
        if on_t is None:
            on_t, on_dtype = convert_to_tensor(1, dtype, name="on_value"), dtype
        if off_t is None:
            off_t, off_dtype = convert_to_tensor(0, dtype, name="off_value"), dtype
        if on_dtype != off_dtype:
            raise TypeError(f"dtype {on_dtype} of on_value does not match dtype {off_dtype} "
                            f"of off_value")
        return s.apply("OneHot", indices, depth, on_t, off_t,
                       axis=-1 if axis is None else axis)


def where(condition, x=None, y=None, name=None):
    """TF1 `tf.where`: coordinates of true elements (1 argument, a Where op), or elements of
    `x`/`y` by `condition` (Select: a vector condition picks whole rows)."""
    if x is None and y is None:
        with OpScope(name, "Where", [condition]) as s:
            condition = convert_to_tensor(condition, preferred_dtype=dtypes.bool_,
                                          name="condition")
            return s.apply("Where", condition)
    if x is not None and y is not None:
        return apply_op("Select", condition, x, y, name=name)
    raise ValueError("x and y must both be non-None or both be None.")


def where_v2(condition, x=None, y=None, name=None):
    """TF2 `tf.where`: like `where`, but x, y and condition broadcast (SelectV2)."""
    if x is None and y is None:
        with OpScope(name, "Where", [condition]) as s:
            condition = convert_to_tensor(condition, preferred_dtype=dtypes.bool_,
                                          name="condition")
            return s.apply("Where", condition)
    if x is not None and y is not None:
        return apply_op("SelectV2", condition, x, y, name=name)
    raise ValueError("x and y must both be non-None or both be None.")


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The elements (or slices, from `axis` on) of `tensor` where `mask` is true."""
    with name_scope(name, values=[tensor, mask]):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        ndims_mask = mask.shape.ndims
        if ndims_mask == 0:
            raise ValueError("mask cannot be scalar.")
        if ndims_mask is None:
            raise ValueError("Number of mask dimensions must be specified, even if some "
                             "dimensions are None.  E.g. shape=[None] is ok, but shape=None is "
                             "not.")
        axis = 0 if axis is None else axis
        dims = tensor.shape.as_tuple()
        if dims is not None:
            TensorShape(dims[axis:axis + ndims_mask]).assert_is_compatible_with(mask.shape)
        if ndims_mask > 1:
            tensor = _flatten_mask_dims(tensor, dims, axis, ndims_mask)
            mask = reshape(mask, [-1])
        indices = squeeze(where(mask), axis=[1])
        return gather(tensor, indices, axis=axis)


def _flatten_mask_dims(tensor, dims, axis, ndims_mask):
    from tensorweave.ops.array_ops import shape
    from tensorweave.ops.joining_ops import concat

    full = shape(tensor)
    new_shape = concat([full[:axis], [-1], full[axis + ndims_mask:]], 0)
    out = reshape(tensor, new_shape)
    if dims is not None:
        n = TensorShape(dims[axis:axis + ndims_mask]).num_elements()
        out.set_shape(dims[:axis] + (n,) + dims[axis + ndims_mask:])
    return out


UniqueOutput = namedtuple("Unique", ["y", "idx"])
ListDiffOutput = namedtuple("ListDiff", ["out", "idx"])


def unique(x, out_idx=dtypes.int32, name=None):
    """The unique elements of 1-D `x` in order of first appearance, and each element's
    index into them."""
    return UniqueOutput(*apply_op("Unique", x, out_idx=out_idx, name=name))


def setdiff1d(x, y, index_dtype=dtypes.int32, name=None):
    """The elements of `x` not in `y` (in x's order), and their positions in `x`."""
    return ListDiffOutput(*apply_op("ListDiff", x, y, out_idx=index_dtype, name=name))


def invert_permutation(x, name=None):
    """y[x[i]] = i for a permutation `x`."""
    return apply_op("InvertPermutation", x, name=name)


__all__ = ["gather", "gather_nd", "scatter_nd", "one_hot", "where", "where_v2", "boolean_mask",
           "unique", "setdiff1d", "invert_permutation"]
