"""Gradient functions for the array family (TF's array_grad.py): reshapes, slicing, joining,
gathers (whose params gradient is an IndexedSlices), padding and segment ops.

Where static shapes are known the gradient graph uses constants instead of Shape arithmetic
(a Slice gradient is one Pad with constant paddings, a Concat gradient one SplitV).
StridedSliceGrad is declared in ops/grad_ops.py.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.autodiff.gradients import (
    reduction_axes,
    reshape,
    reshape_like,
    shape_tensor,
    static_dims,
    sum_to,
    to_dense,
    zeros_like,
)
from tensorweave.autodiff.registry import NotDifferentiable, RegisterGradient
from tensorweave.ops.apply import apply_op
from tensorweave.ops.constant_op import constant
from tensorweave.ops.indexed_slices import IndexedSlices
from tensorweave.ops.registry import OPS
from tensorweave.ops.shape_inference import constant_value

_op = apply_op
_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


# == not differentiable ========================================================================
for _name in ("Shape", "ShapeN", "Rank", "Size", "ZerosLike", "OnesLike", "StopGradient",
              "InvertPermutation", "OneHot", "Const", "ConcatOffset", "EditDistance", "Where",
              "BroadcastArgs"):
    NotDifferentiable(_name)


@RegisterGradient("PreventGradient")
def _prevent_gradient_grad(op, grad):
    raise LookupError(f"Gradient explicitly disabled. Reason: {op.get_attr('message').decode()}")


# == identities ================================================================================
@RegisterGradient("Identity")
@RegisterGradient("RefIdentity")
@RegisterGradient("Snapshot")
@RegisterGradient("PlaceholderWithDefault")
def _identity_grad(op, grad):
    return grad


@RegisterGradient("IdentityN")
def _identity_n_grad(op, *grads):
    return list(grads)


@RegisterGradient("Print")
def _print_grad(op, *grads):
    return list(grads) + [None] * (len(op.inputs) - 1)


@RegisterGradient("CheckNumerics")
def _check_numerics_grad(op, grad):
    message = op.get_attr("message").decode()
    return _op("CheckNumerics", grad, message="Not a number (NaN) or infinity (Inf) values "
               f"detected in gradient. {message}")


# == reshapes ==================================================================================
@RegisterGradient("Reshape")
def _reshape_grad(op, grad):
    x = op.inputs[0]
    dims = x.shape.as_tuple()
    if dims is not None and None in dims and dims.count(None) == 1 and 0 not in dims:
        return [reshape(to_dense(grad), [-1 if d is None else d for d in dims]), None]
    return [reshape_like(to_dense(grad), x), None]


@RegisterGradient("ExpandDims")
def _expand_dims_grad(op, grad):
    return [reshape_like(to_dense(grad), op.inputs[0]), None]


@RegisterGradient("Squeeze")
def _squeeze_grad(op, grad):
    return reshape_like(to_dense(grad), op.inputs[0])


def _inverse_perm(p):
    value = constant_value(p)
    if value is not None:
        return np.argsort(np.reshape(value, [-1])).astype(p.dtype.base_dtype.np_dtype)
    return _op("InvertPermutation", p)


@RegisterGradient("Transpose")
def _transpose_grad(op, grad):
    return [_op("Transpose", grad, _inverse_perm(op.inputs[1])), None]


@RegisterGradient("ConjugateTranspose")
def _conjugate_transpose_grad(op, grad):
    return [_op("ConjugateTranspose", grad, _inverse_perm(op.inputs[1])), None]


@RegisterGradient("SpaceToDepth")
def _space_to_depth_grad(op, grad):
    return _op("DepthToSpace", grad, block_size=op.get_attr("block_size"),
               data_format=op.get_attr("data_format").decode())


@RegisterGradient("DepthToSpace")
def _depth_to_space_grad(op, grad):
    return _op("SpaceToDepth", grad, block_size=op.get_attr("block_size"),
               data_format=op.get_attr("data_format").decode())


# == joining and splitting =====================================================================
@RegisterGradient("Pack")
def _pack_grad(op, grad):
    return _op("Unpack", grad, num=op.get_attr("N"), axis=op.get_attr("axis"))[0]


@RegisterGradient("Unpack")
def _unpack_grad(op, *grads):
    return _op("Pack", list(grads), axis=op.get_attr("axis"))


def _concat_grads(grads, axis):
    """The split pieces' gradients joined back (TF's array_ops.concat: one piece is an
    Identity, as ConcatV2 needs N >= 2)."""
    if len(grads) == 1:
        return _op("Identity", grads[0])
    return _op("ConcatV2", list(grads), axis)


@RegisterGradient("Split")
def _split_grad(op, *grads):
    return None, _concat_grads(grads, op.inputs[0])


@RegisterGradient("SplitV")
def _split_v_grad(op, *grads):
    return [_concat_grads(grads, op.inputs[2])] + [None] * (len(op.inputs) - 1)


def _concat_axis(op, values, axis_tensor):
    """The non-negative concat axis when static (else None)."""
    axis = constant_value(axis_tensor)
    rank = values[0].shape.ndims
    if axis is None or (int(axis) < 0 and rank is None):
        return None
    return int(axis) % rank if rank else int(axis)


def _concat_grad(op, grad, values, axis_tensor):
    if len(values) == 1:
        return [grad]
    axis = _concat_axis(op, values, axis_tensor)
    if isinstance(grad, IndexedSlices):
        return _concat_sparse_grad(grad, values, axis)
    sizes = [v.shape.as_tuple()[axis] if axis is not None and v.shape.ndims is not None
             else None for v in values]
    if axis is not None and None not in sizes:
        return _op("SplitV", grad, np.asarray(sizes, np.int32), axis, num_split=len(sizes))[0]
    axis_t = axis if axis is not None else _op("FloorMod", axis_tensor, _op("Rank", values[0]))
    shapes = _op("ShapeN", list(values))[0]
    sizes_t = _op("Pack", [_op("GatherV2", s, axis_t, 0) for s in shapes])
    return _op("SplitV", grad, sizes_t, axis_t, num_split=len(values))[0]


def _concat_sparse_grad(grad, values, axis):
    """TF's IndexedSlices case: rows (axis 0) picked by index range, else values sliced."""
    if axis is None:
        raise ValueError("Can only compute IndexedSlices gradient with statically-known "
                         "concat_dim")
    out = []
    if axis == 0:
        start = constant(0, dtype=grad.indices.dtype.base_dtype)
        for v in values:
            size = _op("Cast", _op("GatherV2", shape_tensor(v), 0, 0),
                       DstT=grad.indices.dtype.base_dtype)
            end = start + size
            keep = _op("LogicalAnd", grad.indices >= start, grad.indices < end)
            rows = _op("Squeeze", _op("Where", keep), squeeze_dims=[1])
            out.append(IndexedSlices(_op("GatherV2", grad.values, rows, 0),
                                     _op("GatherV2", grad.indices, rows, 0) - start,
                                     shape_tensor(v)))
            start = end
        return out
    begin = 0
    for v in values:
        width = v.shape.as_tuple()[axis] if v.shape.ndims is not None else None
        if width is None:
            raise ValueError("IndexedSlices concat gradient needs static widths")
        rank = v.shape.ndims
        starts = [0] * rank
        starts[axis] = begin
        sizes = [-1] * rank
        sizes[axis] = width
        out.append(IndexedSlices(_op("Slice", grad.values, starts, sizes), grad.indices,
                                 shape_tensor(v)))
        begin += width
    return out


@RegisterGradient("ConcatV2")
def _concat_v2_grad(op, grad):
    values = op.inputs[:-1]
    return _concat_grad(op, grad, values, op.inputs[-1]) + [None]


@RegisterGradient("Concat")
def _concat_v1_grad(op, grad):
    return [None] + _concat_grad(op, grad, op.inputs[1:], op.inputs[0])


@RegisterGradient("Tile")
def _tile_grad(op, grad):
    """Sums the tiled copies: grad reshaped to [m0, d0, m1, d1, ...], summed over the m axes."""
    x, multiples = op.inputs
    grad = to_dense(grad)
    dims, reps = static_dims(x), constant_value(multiples)
    if dims is not None and reps is not None:
        split = [int(v) for pair in zip(np.reshape(reps, [-1]), dims) for v in pair]
        axes = np.arange(0, len(split), 2, dtype=np.int32)
        if all(int(r) == 1 for r in np.reshape(reps, [-1])):
            return [grad, None]
        return [_op("Sum", _op("Reshape", grad, split), axes), None]
    input_shape = _op("Shape", x, out_type=multiples.dtype.base_dtype)
    split = _op("Reshape", _op("Transpose", _op("Pack", [multiples, input_shape]), [1, 0]), [-1])
    axes = _op("Range", 0, _op("Size", split), 2)
    out = _op("Sum", _op("Reshape", grad, split), axes)
    out.set_shape(x.shape)
    return [out, None]


@RegisterGradient("BroadcastTo")
def _broadcast_to_grad(op, grad):
    x, shape = op.inputs
    target = constant_value(shape)
    if target is not None and x.shape.ndims is not None:
        from tensorweave.shapes import TensorShape

        x_axes, _ = reduction_axes(x.shape, TensorShape([int(d) for d in target]))
        if x_axes is not None:
            return [sum_to(grad, x, x_axes, len(target)), None]
    x_shape = _op("Shape", x, out_type=shape.dtype.base_dtype)
    _, axes = _op("BroadcastGradientArgs", shape, x_shape)
    return [_op("Reshape", _op("Sum", grad, axes, keep_dims=True), x_shape), None]


@RegisterGradient("Fill")
def _fill_grad(op, grad):
    return None, _op("Sum", grad, _all_axes(grad))


# == slicing and padding =======================================================================
@RegisterGradient("Slice")
def _slice_grad(op, grad):
    """A Pad of the gradient back to the input's shape."""
    x, begin = op.inputs[0], op.inputs[1]
    b, xd, od = constant_value(begin), static_dims(x), static_dims(op.outputs[0])
    if b is not None and xd is not None and od is not None:
        b = np.reshape(b, [-1]).astype(np.int64)
        after = np.asarray(xd, np.int64) - np.asarray(od, np.int64) - b
        paddings = np.stack([b, after], axis=1).astype(begin.dtype.base_dtype.np_dtype)
        return _op("Pad", grad, paddings), None, None
    index_dtype = begin.dtype.base_dtype
    rank = _op("Rank", x)
    size = _op("Shape", op.outputs[0], out_type=index_dtype)
    column = _op("Pack", [rank, 1])
    before = _op("Reshape", begin, column)
    after = _op("Reshape", _op("Shape", x, out_type=index_dtype) - size - begin, column)
    return _op("Pad", grad, _op("ConcatV2", [before, after], 1)), None, None


@RegisterGradient("StridedSlice")
def _strided_slice_grad(op, grad):
    begin, end, strides = op.inputs[1:4]
    shape = shape_tensor(op.inputs[0], out_type=begin.dtype.base_dtype)
    masks = {k: op.get_attr(k) for k in _MASKS}
    return [_op("StridedSliceGrad", shape, begin, end, strides, grad, **masks), None, None, None]


@RegisterGradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, grad):
    begin, end, strides = op.inputs[1:4]
    masks = {k: op.get_attr(k) for k in _MASKS}
    return None, None, None, None, _op("StridedSlice", grad, begin, end, strides, **masks)


@RegisterGradient("Pad")
@RegisterGradient("PadV2")
def _pad_grad(op, grad):
    """The gradient sliced back out of the padding."""
    x, paddings = op.inputs[0], op.inputs[1]
    pads, xd = constant_value(paddings), static_dims(x)
    if pads is not None and xd is not None:
        begin = np.asarray(pads)[:, 0].astype(paddings.dtype.base_dtype.np_dtype)
        x_grad = _op("Slice", grad, begin, np.asarray(xd, begin.dtype))
    else:
        begin = _op("StridedSlice", paddings, [0, 0], [0, 1], [1, 1], begin_mask=1, end_mask=1,
                    shrink_axis_mask=2)
        x_grad = _op("Slice", grad, begin, shape_tensor(x, out_type=begin.dtype.base_dtype))
    return (x_grad, None, None) if len(op.inputs) == 3 else (x_grad, None)


@RegisterGradient("MirrorPad")
def _mirror_pad_grad(op, grad):
    return [_op("MirrorPadGrad", grad, op.inputs[1], mode=op.get_attr("mode").decode()), None]


@RegisterGradient("MirrorPadGrad")
def _mirror_pad_grad_grad(op, grad):
    return [_op("MirrorPad", grad, op.inputs[1], mode=op.get_attr("mode").decode()), None]


@RegisterGradient("ReverseV2")
@RegisterGradient("Reverse")
def _reverse_grad(op, grad):
    return _op(op.type, grad, op.inputs[1]), None


# == diagonals =================================================================================
@RegisterGradient("Diag")
def _diag_grad(op, grad):
    return _op("DiagPart", grad)


@RegisterGradient("DiagPart")
def _diag_part_grad(op, grad):
    return _op("Diag", grad)


@RegisterGradient("MatrixDiag")
def _matrix_diag_grad(op, grad):
    return _op("MatrixDiagPart", grad)


@RegisterGradient("MatrixDiagPart")
def _matrix_diag_part_grad(op, grad):
    """MatrixDiag of the gradient, zero-padded to the input's (possibly non-square) shape."""
    dims = op.inputs[0].shape.as_tuple()
    if dims is not None and None not in dims[-2:]:
        rows, cols = dims[-2:]
        out = _op("MatrixDiag", grad)
        if rows == cols:
            return out
        k = min(rows, cols)
        pads = [[0, 0]] * (len(dims) - 2) + [[0, rows - k], [0, cols - k]]
        return _op("Pad", out, np.asarray(pads, np.int32))
    if "MatrixSetDiag" in OPS:
        return _op("MatrixSetDiag", zeros_like(op.inputs[0]), grad)
    return _op("Pad", _op("MatrixDiag", grad), _matrix_pads(op.inputs[0]))


def _matrix_pads(x):
    """Paddings taking a [..., k, k] matrix (k = min(m, n)) to x's shape [..., m, n]."""
    shape = _op("Shape", x)
    m = _op("StridedSlice", shape, [-2], [-1], [1], shrink_axis_mask=1)
    n = _op("StridedSlice", shape, [-1], [0], [1], end_mask=1, shrink_axis_mask=1)
    k = _op("Minimum", m, n)
    tail = _op("Pack", [_op("Pack", [0, m - k]), _op("Pack", [0, n - k])])
    head = _op("Fill", _op("Pack", [_op("Rank", x) - 2, 2]), 0)
    return _op("ConcatV2", [head, tail], 0)


@RegisterGradient("MatrixBandPart")
def _matrix_band_part_grad(op, grad):
    return _op("MatrixBandPart", grad, op.inputs[1], op.inputs[2]), None, None


# == gathers and scatters ======================================================================
def _flat_size(indices):
    """`[size(indices)]`: a list when static, else an ExpandDims of Size."""
    dims = static_dims(indices)
    if dims is not None:
        return [int(np.prod(dims, dtype=np.int64))]
    return _op("ExpandDims", _op("Size", indices), 0)


def _rows_grad(grad, params, indices):
    """The IndexedSlices gradient of gathering rows `indices` of `params` (axis 0)."""
    with params.graph.colocate_with(params.op):
        params_shape = shape_tensor(params)
    size = _flat_size(indices)
    pdims = params.shape.as_tuple()
    if isinstance(size, list) and pdims is not None and None not in pdims[1:]:
        values = reshape(to_dense(grad), size + list(pdims[1:]))
        flat_indices = reshape(indices, size)
    else:
        tail = _op("StridedSlice", params_shape, [1], [0], [1], end_mask=1)
        values = _op("Reshape", to_dense(grad), _op("ConcatV2", [size, tail], 0))
        flat_indices = _op("Reshape", indices, size)
    return IndexedSlices(values, flat_indices, params_shape)


@RegisterGradient("Gather")
def _gather_grad(op, grad):
    return [_rows_grad(grad, op.inputs[0], op.inputs[1]), None]


@RegisterGradient("GatherV2")
def _gather_v2_grad(op, grad):
    params, indices, axis_t = op.inputs
    axis = constant_value(axis_t)
    batch_dims = int(op.get_attr("batch_dims"))
    if batch_dims < 0:
        if indices.shape.ndims is None:
            raise ValueError("Currently, it is unsupported to take the gradient of tf.gather "
                             "when batch_dims < 0 and the rank of the indices is unknown.")
        batch_dims += indices.shape.ndims
    if axis is not None and int(axis) == 0 and batch_dims == 0:
        return [_rows_grad(grad, params, indices), None, None]
    rank = params.shape.ndims
    if axis is not None and rank is not None:
        axis = int(axis) % rank
    else:
        axis = _op("FloorMod", _op("Cast", axis_t, DstT=dtypes.int32), _op("Rank", params))
    return [_gather_axis_grad(to_dense(grad), params, indices, axis, batch_dims), None, None]


def _ints(a, b):
    """range(a, b): a constant when both are ints, else a Range op."""
    if isinstance(a, int) and isinstance(b, int):
        return np.arange(a, b, dtype=np.int32)
    return _op("Range", a, b, 1)


def _vec(v):
    return [v] if isinstance(v, int) else _op("ExpandDims", v, 0)


def _at(shape, i):
    """shape[i] of a 1-D shape tensor, for an int or scalar-tensor `i`."""
    if isinstance(i, int):
        return _op("StridedSlice", shape, [i], [i + 1], [1], shrink_axis_mask=1)
    return _op("GatherV2", shape, i, 0)


def _gather_axis_grad(grad, params, indices, axis, batch_dims: int):
    """TF's GatherV2 gradient off axis 0 (or with batch dims): the gathered axis is moved
    after the batch dims, summed by index (UnsortedSegmentSum), and moved back."""
    params_shape = shape_tensor(params)
    rank = params.shape.ndims
    outer = _op("Slice", params_shape, [0], _vec(axis))
    inner = _op("StridedSlice", params_shape, _vec(axis + 1), [0], [1], end_mask=1)
    values = _op("Reshape", grad, _op("ConcatV2", [outer, [-1], inner], 0))
    values_dims = rank if isinstance(axis, int) and rank is not None else _op("Rank", values)
    b = batch_dims
    after = _ints(axis + 1, values_dims)
    perm = _concat_ints([_ints(0, b), _vec(axis), _ints(b, axis), after])
    moved = _op("Transpose", values, perm)
    size = _at(params_shape, axis)
    if b == 0:
        summed = _op("UnsortedSegmentSum", moved, _op("Reshape", indices, [-1]), size)
    else:
        moved_shape = _op("GatherV2", params_shape, perm, 0)
        summed = _batch_gather_grad(moved_shape, moved, indices, b, size)
    inverse = _concat_ints([_ints(0, b), _ints(b + 1, axis + 1), [b], after])
    return reshape_like(_op("Transpose", summed, inverse), params)


def _concat_ints(parts):
    if all(isinstance(p, (list, np.ndarray)) for p in parts):
        return np.concatenate([np.asarray(p, np.int32).reshape(-1) for p in parts])
    return _op("ConcatV2", [p if not isinstance(p, list) else np.asarray(p, np.int32)
                            for p in parts], 0)


def _batch_gather_grad(params_shape, values, indices, b: int, gather_dim_size):
    values_shape = _op("Shape", values)
    outer = _op("StridedSlice", values_shape, [0], [b], [1])
    inner = _op("StridedSlice", values_shape, [b + 1], [0], [1], end_mask=1)
    flat_shape = _op("ConcatV2", [[-1], inner], 0)
    num = gather_dim_size * _op("Prod", outer, [0])
    flat_indices = _op("Reshape", _batch_indices(params_shape, indices, b), [-1])
    summed = _op("UnsortedSegmentSum", _op("Reshape", values, flat_shape), flat_indices, num)
    return _op("Reshape", summed, _op("ConcatV2", [outer, flat_shape], 0))


def _batch_indices(params_shape, indices, b: int):
    """`indices` offset by each batch position (TF's _GetBatchIndices)."""
    idt = indices.dtype.base_dtype
    shape = _op("Cast", params_shape, DstT=idt)
    accum = constant(1, dtype=idt)
    rank = _op("Rank", indices)
    for dim in range(b, 0, -1):
        dim_value = _at(shape, dim - 1)
        accum = accum * _at(shape, dim)
        dim_indices = _op("Range", constant(0, dtype=idt), dim_value, constant(1, dtype=idt))
        tail = _op("Fill", _op("ExpandDims", rank - dim, 0), 1)
        dim_shape = _op("ConcatV2", [np.ones(dim - 1, np.int32), _op("ExpandDims", _op(
            "Cast", dim_value, DstT=dtypes.int32), 0), tail], 0)
        indices = indices + _op("Reshape", dim_indices * accum, dim_shape)
    return indices


@RegisterGradient("GatherNd")
def _gather_nd_grad(op, grad):
    ref, indices = op.inputs
    ref_shape = shape_tensor(ref, out_type=indices.dtype.base_dtype)
    dims = indices.shape.as_tuple()
    if dims is not None and len(dims) == 2 and dims[-1] == 1:
        return [IndexedSlices(grad, _op("Squeeze", indices, squeeze_dims=[-1]), ref_shape),
                None]
    return [_op("ScatterNd", indices, to_dense(grad), ref_shape), None]


@RegisterGradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    return [None, _op("GatherNd", grad, op.inputs[0]), None]


# == segment reductions ========================================================================
def _gather_rows(params, ids):
    return _op("GatherV2", params, ids, 0)


def _column(t, data):
    """`t` (1-D, one entry per segment) reshaped to broadcast against `data`'s rows."""
    rank = data.shape.ndims
    if rank is not None:
        return reshape(t, [-1] + [1] * (rank - 1)) if rank > 1 else t
    ones = _op("Fill", _op("ExpandDims", _op("Rank", data) - 1, 0), 1)
    return _op("Reshape", t, _op("ConcatV2", [[-1], ones], 0))


@RegisterGradient("SegmentSum")
def _segment_sum_grad(op, grad):
    return _gather_rows(grad, op.inputs[1]), None


@RegisterGradient("SegmentMean")
def _segment_mean_grad(op, grad):
    data, ids = op.inputs
    ones = _op("OnesLike", _op("Cast", ids, DstT=grad.dtype.base_dtype))
    counts = _column(_op("SegmentSum", ones, ids), data)
    return _gather_rows(grad / counts, ids), None


@RegisterGradient("SegmentMin")
@RegisterGradient("SegmentMax")
def _segment_min_max_grad(op, grad):
    data, ids = op.inputs
    is_selected = _op("Equal", data, _gather_rows(op.outputs[0], ids))
    num_selected = _op("SegmentSum", _op("Cast", is_selected, DstT=grad.dtype.base_dtype), ids)
    gathered = _gather_rows(_op("RealDiv", grad, num_selected), ids)
    return _op("SelectV2", is_selected, gathered, zeros_like(data)), None


@RegisterGradient("SegmentProd")
def _segment_prod_grad(op, grad):
    data, ids = op.inputs
    is_zero = _op("Equal", data, constant(0, dtype=data.dtype.base_dtype))
    num_zeros = _op("SegmentSum", _op("Cast", is_zero, DstT=dtypes.int32), ids)
    grad = _op("SelectV2", _op("Greater", num_zeros, 1), zeros_like(grad), grad)
    non_zero = _op("SelectV2", is_zero, _op("OnesLike", data), data)
    non_zero_prod = _op("SegmentProd", non_zero, ids)
    partial = _op("SelectV2", is_zero, _gather_rows(non_zero_prod, ids),
                  _gather_rows(op.outputs[0], ids) / non_zero)
    return _gather_rows(grad, ids) * partial, None


def _gather_drop_negatives(params, ids, clipped=None, is_positive=None):
    """Rows `ids` of `params`, with zeros for negative ids; also (clipped ids, mask)."""
    if clipped is None:
        clipped = _op("Maximum", ids, zeros_like(ids))
    gathered = _gather_rows(params, clipped)
    if is_positive is None:
        is_positive = _row_mask(_op("GreaterEqual", ids, 0), ids, gathered)
    return (_op("SelectV2", is_positive, gathered, zeros_like(gathered)), clipped, is_positive)


def _row_mask(mask, ids, gathered):
    """`mask` (shaped like `ids`) with trailing 1s so it broadcasts against `gathered`."""
    g, i = gathered.shape.ndims, ids.shape.ndims
    extra = None if g is None or i is None else g - i
    if extra == 0:
        return mask
    if extra is not None and static_dims(ids) is not None:
        return reshape(mask, list(static_dims(ids)) + [1] * extra)
    ones = [1] * extra if extra is not None else \
        _op("Fill", _op("ExpandDims", _op("Rank", gathered) - _op("Rank", ids), 0), 1)
    return _op("Reshape", mask, _op("ConcatV2", [_op("Shape", ids), ones], 0))


@RegisterGradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    return _gather_drop_negatives(grad, op.inputs[1])[0], None, None


@RegisterGradient("UnsortedSegmentMax")
@RegisterGradient("UnsortedSegmentMin")
def _unsorted_segment_min_max_grad(op, grad):
    data, ids, num = op.inputs
    gathered, clipped, is_positive = _gather_drop_negatives(op.outputs[0], ids)
    is_selected = _op("LogicalAnd", _op("Equal", data, gathered), is_positive)
    num_selected = _op("UnsortedSegmentSum",
                       _op("Cast", is_selected, DstT=grad.dtype.base_dtype), ids, num)
    weighted = _op("RealDiv", grad, num_selected)
    gathered_grads, _, _ = _gather_drop_negatives(weighted, ids, clipped, is_positive)
    return _op("SelectV2", is_selected, gathered_grads, zeros_like(gathered_grads)), None, None


@RegisterGradient("UnsortedSegmentProd")
def _unsorted_segment_prod_grad(op, grad):
    data, ids, num = op.inputs
    is_zero = _op("Equal", data, constant(0, dtype=data.dtype.base_dtype))
    num_zeros = _op("UnsortedSegmentSum", _op("Cast", is_zero, DstT=dtypes.int32), ids, num)
    grad = _op("SelectV2", _op("Greater", num_zeros, 1), zeros_like(grad), grad)
    non_zero = _op("SelectV2", is_zero, _op("OnesLike", data), data)
    non_zero_prod = _op("UnsortedSegmentProd", non_zero, ids, num)
    clipped = _op("Maximum", ids, zeros_like(ids))
    partial = _op("SelectV2", is_zero, _gather_rows(non_zero_prod, clipped),
                  _gather_rows(op.outputs[0], clipped) / data)
    gathered_grad = _gather_drop_negatives(grad, ids, clipped)[0]
    return gathered_grad * partial, None, None




@RegisterGradient("SparseToDense")
def _sparse_to_dense_grad(op, grad):
    """The values' gradient is grad at their indices; the default's, the sum of the rest."""
    indices = op.inputs[0]
    values_grad = _op("GatherNd", grad, indices)
    rest = _op("Sum", grad, _all_axes(grad)) - _op("Sum", values_grad, _all_axes(values_grad))
    return [None, None, values_grad, rest]


def _all_axes(t):
    rank = t.shape.ndims
    if rank is not None:
        return np.arange(rank, dtype=np.int32)
    return _op("Range", 0, _op("Rank", t), 1)


__all__: list[str] = []
