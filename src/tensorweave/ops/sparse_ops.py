"""Sparse ops (TF's sparse_ops.cc and the sparse segment reductions of math_ops.cc) with the
TF1 wrappers `sparse_reshape`, `sparse_fill_empty_rows`, `sparse_retain` and
`sparse_segment_sum/mean/sqrt_n`.

    SparseSegmentSum(data, indices, segment_ids)[s] = sum_{j: segment_ids[j] = s} data[indices[j]]

(Mean divides by the segment's size, SqrtN by its square root; empty segments are 0; the
output has last segment id + 1 rows, or `num_segments` for the WithNumSegments variants.)
A SparseTensor is (indices int64 [N, rank], values [N], dense_shape int64 [rank]).
Kernels: `runtime/kernels/cpu/sparse.py`; gradients: `autodiff/sparse_grad.py`.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import register_op
from tensorweave.ops.sparse_tensor import SparseTensor
from tensorweave.shapes import TensorShape

_IDX = "Tidx: {int32, int64} = DT_INT32"
_SEG = "Tsegmentids: {int32, int64} = DT_INT32"
_NUMSEG = "Tnumsegments: {int32, int64} = DT_INT32"


def _rank(ctx, i: int, want: int, what: str):
    dims = ctx.input_dims(i)
    if dims is not None and len(dims) != want:
        raise ctx.fail(f"Shape must be rank {want} but is rank {len(dims)} for '{what}'")
    return dims


# -- sparse segment reductions -----------------------------------------------------------------
def _sparse_segment_shape(ctx) -> TensorShape:
    data = ctx.input_dims(0)
    idx, seg = _rank(ctx, 1, 1, "indices"), _rank(ctx, 2, 1, "segment_ids")
    if idx and seg and None not in (idx[0], seg[0]) and idx[0] != seg[0]:
        raise ctx.fail(f"Dimensions must be equal, but are {idx[0]} and {seg[0]}")
    rows = None
    if ctx.num_inputs == 4:
        num = ctx.constant_value(3)
        rows = None if num is None else int(num)
    if data is None:
        return TensorShape(None)
    if not data:
        raise ctx.fail("Shape must be at least rank 1 but is rank 0")
    return TensorShape([rows] + list(data[1:]))


def _sparse_segment_grad_shape(ctx) -> TensorShape:
    dims = ctx.input_dims(0)
    n = ctx.constant_value(3)
    if dims is None:
        return TensorShape(None)
    return TensorShape([None if n is None else int(n)] + list(dims[1:]))


_SEGMENT_TYPES = {"Sum": "realnumbertype", "Mean": "{bfloat16, half, float, double}",
                  "SqrtN": "{bfloat16, half, float, double}"}
for _kind, _types in _SEGMENT_TYPES.items():
    _attrs = [f"T: {_types}", _IDX, _SEG, "sparse_gradient: bool = false"]
    register_op(f"SparseSegment{_kind}",
                inputs=["data: T", "indices: Tidx", "segment_ids: Tsegmentids"],
                outputs=["output: T"], attrs=_attrs, shape_fn=_sparse_segment_shape)
    register_op(f"SparseSegment{_kind}WithNumSegments",
                inputs=["data: T", "indices: Tidx", "segment_ids: Tsegmentids",
                        "num_segments: Tnumsegments"],
                outputs=["output: T"], attrs=_attrs + [_NUMSEG], shape_fn=_sparse_segment_shape)
for _kind in ("Mean", "SqrtN"):
    register_op(f"SparseSegment{_kind}Grad",
                inputs=["grad: T", "indices: Tidx", "segment_ids: Tsegmentids",
                        "output_dim0: int32"],
                outputs=["output: T"], attrs=["T: {bfloat16, half, float, double}", _IDX, _SEG],
                shape_fn=_sparse_segment_grad_shape)


# -- SparseReshape, SparseFillEmptyRows ---------------------------------------------------------
def _sparse_reshape_shape(ctx):
    indices = _rank(ctx, 0, 2, "input_indices")
    _rank(ctx, 1, 1, "input_shape")
    new = _rank(ctx, 2, 1, "new_shape")
    n = None if indices is None else indices[0]
    rank = None if new is None else new[0]
    return [TensorShape([n, rank]), TensorShape([rank])]


def _fill_empty_rows_shape(ctx):
    _rank(ctx, 0, 2, "indices")
    _rank(ctx, 1, 1, "values")
    _rank(ctx, 2, 1, "dense_shape")
    _rank(ctx, 3, 0, "default_value")
    dims = ctx.input_dims(0)
    rank = None if dims is None else dims[1]
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([None]),
            TensorShape([None])]


def _fill_empty_rows_grad_shape(ctx):
    return [ctx.input_shape(0), TensorShape([])]


register_op("SparseReshape", inputs=["input_indices: int64", "input_shape: int64",
                                     "new_shape: int64"],
            outputs=["output_indices: int64", "output_shape: int64"],
            shape_fn=_sparse_reshape_shape)
register_op("SparseFillEmptyRows", inputs=["indices: int64", "values: T", "dense_shape: int64",
                                           "default_value: T"],
            outputs=["output_indices: int64", "output_values: T", "empty_row_indicator: bool",
                     "reverse_index_map: int64"],
            attrs=["T: type"], shape_fn=_fill_empty_rows_shape)
register_op("SparseFillEmptyRowsGrad", inputs=["reverse_index_map: int64", "grad_values: T"],
            outputs=["d_values: T", "d_default_value: T"], attrs=["T: type"],
            shape_fn=_fill_empty_rows_grad_shape)


# -- reorder, reduce, matmul, add, concat, slice, softmax -----------------------------------
def _sparse_in(ctx, first: int):
    """(nnz, rank) of the SparseTensor given as inputs first..first+2, checking ranks."""
    idx = _rank(ctx, first, 2, "indices")
    _rank(ctx, first + 1, 1, "values")
    _rank(ctx, first + 2, 1, "shape")
    return (None, None) if idx is None else idx


def _reorder_shape(ctx):
    nnz, rank = _sparse_in(ctx, 0)
    return [TensorShape([nnz, rank]), TensorShape([nnz])]


def _reduce_sum_shape(ctx):
    _sparse_in(ctx, 0)
    shape, axes = ctx.constant_value(2), ctx.constant_value(3)
    if shape is None or axes is None:
        return TensorShape(None)
    rank = len(shape)
    picked = {int(a) % rank for a in list(axes.reshape(-1))} if rank else set()
    if not list(axes.reshape(-1)):
        picked = set(range(rank))
    if ctx.attr("keep_dims"):
        return TensorShape([1 if i in picked else int(d) for i, d in enumerate(shape)])
    return TensorShape([int(d) for i, d in enumerate(shape) if i not in picked])


def _dense_matmul_shape(ctx):
    _rank(ctx, 0, 2, "a_indices")
    _rank(ctx, 2, 1, "a_shape")
    b = _rank(ctx, 3, 2, "b")
    a_shape = ctx.constant_value(2)
    rows = None
    if a_shape is not None:
        if len(a_shape) != 2:
            raise ctx.fail(f"Shape must be rank 2 but is rank {len(a_shape)}")
        rows = int(a_shape[1] if ctx.attr("adjoint_a") else a_shape[0])
    cols = None if b is None else b[0 if ctx.attr("adjoint_b") else 1]
    return TensorShape([rows, cols])


def _add_shape(ctx):
    _sparse_in(ctx, 0)
    nnz, rank = _sparse_in(ctx, 3)
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


def _concat_shape(ctx):
    n = ctx.attr("N")
    rank = None
    for i in range(n):
        dims = _rank(ctx, i, 2, "indices")
        if dims is not None and dims[1] is not None:
            rank = dims[1]
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


def _slice_shape(ctx):
    nnz, rank = _sparse_in(ctx, 0)
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


def _softmax_shape(ctx):
    nnz, _ = _sparse_in(ctx, 0)
    return TensorShape([nnz])


_SP3 = ["input_indices: int64", "input_values: T", "input_shape: int64"]
register_op("SparseReorder", inputs=_SP3, outputs=["output_indices: int64",
                                                   "output_values: T"],
            attrs=["T: type"], shape_fn=_reorder_shape)
register_op("SparseReduceSum", inputs=_SP3 + ["reduction_axes: int32"], outputs=["output: T"],
            attrs=["keep_dims: bool = false", "T: numbertype"], shape_fn=_reduce_sum_shape)
register_op("SparseTensorDenseMatMul",
            inputs=["a_indices: Tindices", "a_values: T", "a_shape: int64", "b: T"],
            outputs=["product: T"],
            attrs=["T: type", "Tindices: {int32, int64} = DT_INT64",
                   "adjoint_a: bool = false", "adjoint_b: bool = false"],
            shape_fn=_dense_matmul_shape)
register_op("SparseAdd", inputs=["a_indices: int64", "a_values: T", "a_shape: int64",
                                 "b_indices: int64", "b_values: T", "b_shape: int64",
                                 "thresh: Treal"],
            outputs=["sum_indices: int64", "sum_values: T", "sum_shape: int64"],
            attrs=["T: numbertype", "Treal: realnumbertype"], shape_fn=_add_shape)
register_op("SparseAddGrad", inputs=["backprop_val_grad: T", "a_indices: int64",
                                     "b_indices: int64", "sum_indices: int64"],
            outputs=["a_val_grad: T", "b_val_grad: T"], attrs=["T: numbertype"],
            shape_fn=lambda ctx: [TensorShape([ctx.input_dims(1)[0] if ctx.input_dims(1)
                                               else None]),
                                  TensorShape([ctx.input_dims(2)[0] if ctx.input_dims(2)
                                               else None])])
register_op("SparseTensorDenseAdd", inputs=["a_indices: Tindices", "a_values: T",
                                            "a_shape: Tindices", "b: T"],
            outputs=["output: T"], attrs=["T: numbertype", "Tindices: {int32, int64}"],
            shape_fn=lambda ctx: ctx.input_shape(3))
register_op("SparseConcat", inputs=["indices: N * int64", "values: N * T",
                                    "shapes: N * int64"],
            outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
            attrs=["concat_dim: int", "N: int >= 2", "T: type"], shape_fn=_concat_shape)
register_op("SparseSlice", inputs=["indices: int64", "values: T", "shape: int64",
                                   "start: int64", "size: int64"],
            outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
            attrs=["T: type"], shape_fn=_slice_shape)
register_op("SparseSoftmax", inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64"],
            outputs=["output: T"], attrs=["T: {half, float, double}"],
            shape_fn=_softmax_shape)


def _split_shape(ctx):
    n = ctx.attr("num_split")
    _, rank = _sparse_in(ctx, 1)
    return ([TensorShape([None, rank])] * n + [TensorShape([None])] * n
            + [TensorShape([rank])] * n)


def _sparse_max_shape(ctx):
    _sparse_in(ctx, 0)
    _, rank = _sparse_in(ctx, 3)
    return [TensorShape([None, rank]), TensorShape([None])]


register_op("SparseReduceMax", inputs=_SP3 + ["reduction_axes: int32"], outputs=["output: T"],
            attrs=["keep_dims: bool = false", "T: realnumbertype"], shape_fn=_reduce_sum_shape)
for _name in ("SparseSparseMaximum", "SparseSparseMinimum"):
    register_op(_name, inputs=["a_indices: int64", "a_values: T", "a_shape: int64",
                               "b_indices: int64", "b_values: T", "b_shape: int64"],
                outputs=["output_indices: int64", "output_values: T"],
                attrs=["T: realnumbertype"], shape_fn=_sparse_max_shape)
register_op("SparseSplit", inputs=["split_dim: int64", "indices: int64", "values: T",
                                   "shape: int64"],
            outputs=["output_indices: num_split * int64", "output_values: num_split * T",
                     "output_shape: num_split * int64"],
            attrs=["num_split: int >= 1", "T: type"], shape_fn=_split_shape)


# -- Python API --------------------------------------------------------------------------------
def _sparse(sp_input, what: str = "sp_input") -> SparseTensor:
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {type(sp_input).__name__} for "
                        f"{what}")
    return sp_input


def sparse_reshape(sp_input, shape, name=None) -> SparseTensor:
    """`sp_input` with dense shape `shape` (one entry may be -1), the same values in row-major
    order (SparseReshape)."""
    sp_input = _sparse(sp_input)
    shape = convert_to_tensor(shape, dtype=dtypes.int64, name="shape")
    indices, out_shape = apply_op("SparseReshape", sp_input.indices, sp_input.dense_shape,
                                  shape, name=name)
    return SparseTensor(indices, apply_op("Identity", sp_input.values), out_shape)


def sparse_fill_empty_rows(sp_input, default_value, name=None):
    """(`sp_input` with a `default_value` entry at column 0 of each empty row, a bool vector
    of which rows were empty) (SparseFillEmptyRows)."""
    sp_input = _sparse(sp_input)
    default = convert_to_tensor(default_value, dtype=sp_input.values.dtype.base_dtype)
    indices, values, empty, _ = apply_op("SparseFillEmptyRows", sp_input.indices,
                                         sp_input.values, sp_input.dense_shape, default,
                                         name=name)
    return SparseTensor(indices, values, sp_input.dense_shape), empty


def sparse_retain(sp_input, to_retain) -> SparseTensor:
    """The entries of `sp_input` where the bool vector `to_retain` is true (Where + gathers,
    as TF builds it)."""
    sp_input = _sparse(sp_input)
    keep = apply_op("Reshape", apply_op("Where", to_retain), [-1])
    return SparseTensor(apply_op("GatherV2", sp_input.indices, keep, 0),
                        apply_op("GatherV2", sp_input.values, keep, 0),
                        apply_op("Identity", sp_input.dense_shape))


def sparse_reorder(sp_input, name=None) -> SparseTensor:
    """`sp_input` with its entries in row-major (canonical) order (SparseReorder)."""
    sp_input = _sparse(sp_input)
    indices, values = apply_op("SparseReorder", sp_input.indices, sp_input.values,
                               sp_input.dense_shape, name=name)
    return SparseTensor(indices, values, apply_op("Identity", sp_input.dense_shape))


def sparse_transpose(sp_input, perm=None, name=None) -> SparseTensor:
    """`sp_input` with its dimensions permuted by `perm` (default: reversed), reordered."""
    from tensorweave.framework.scopes import name_scope

    sp_input = _sparse(sp_input)
    with name_scope(name, "SparseTranspose", [sp_input]):
        if perm is None:
            n = apply_op("StridedSlice", apply_op("Shape", sp_input.dense_shape), [0], [1],
                         [1], shrink_axis_mask=1)
            perm = apply_op("Range", n - 1, -1, -1)
        perm = convert_to_tensor(perm, dtype=dtypes.int32, name="perm")
        indices = apply_op("Transpose", apply_op("GatherV2", apply_op(
            "Transpose", sp_input.indices, [1, 0]), perm, 0), [1, 0])
        shape = apply_op("GatherV2", sp_input.dense_shape, perm, 0)
        return sparse_reorder(SparseTensor(indices, sp_input.values, shape))


def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None,
                      keep_dims=None, name=None):
    """The dense sum of `sp_input` over `axis` (None: all) (SparseReduceSum)."""
    sp_input = _sparse(sp_input)
    axis = reduction_axes if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    if axis is None:
        axis = []
    return apply_op("SparseReduceSum", sp_input.indices, sp_input.values,
                    sp_input.dense_shape, convert_to_tensor(axis, dtype=dtypes.int32),
                    keep_dims=keep, name=name)


def sparse_tensor_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """The dense product op(sp_a) @ op(b) of a rank-2 SparseTensor and a dense matrix."""
    sp_a = _sparse(sp_a, "sp_a")
    b = convert_to_tensor(b, name="b", dtype=sp_a.values.dtype.base_dtype)
    return apply_op("SparseTensorDenseMatMul", sp_a.indices, sp_a.values, sp_a.dense_shape, b,
                    adjoint_a=adjoint_a, adjoint_b=adjoint_b, name=name)


def sparse_add(a, b, thresh=0, threshold=None, name=None):
    """a + b: a SparseTensor when both are sparse (entries with |sum| < thresh dropped), else
    a dense Tensor (SparseAdd / SparseTensorDenseAdd)."""
    thresh = thresh if threshold is None else threshold
    sa, sb = isinstance(a, SparseTensor), isinstance(b, SparseTensor)
    if not (sa or sb):
        raise TypeError("At least one input should be SparseTensor; do you mean to use "
                        "tf.add()?")
    if sa and sb:
        dt = a.values.dtype.base_dtype
        real = dt.real_dtype if hasattr(dt, "real_dtype") else dt
        indices, values, shape = apply_op(
            "SparseAdd", a.indices, a.values, a.dense_shape, b.indices, b.values,
            b.dense_shape, convert_to_tensor(thresh, dtype=real), name=name)
        return SparseTensor(indices, values, shape)
    sp, dense = (a, b) if sa else (b, a)
    dense = convert_to_tensor(dense, dtype=sp.values.dtype.base_dtype)
    return apply_op("SparseTensorDenseAdd", sp.indices, sp.values, sp.dense_shape, dense,
                    name=name)


def sparse_concat(axis, sp_inputs, name=None, expand_nonconcat_dim=False, concat_dim=None,
                  expand_nonconcat_dims=None) -> SparseTensor:
    """Concatenates SparseTensors along `axis` (SparseConcat); with expand_nonconcat_dim the
    other dimensions grow to the largest input's."""
    axis = concat_dim if concat_dim is not None else axis
    expand = expand_nonconcat_dims if expand_nonconcat_dims is not None else \
        expand_nonconcat_dim
    sp_inputs = [_sparse(s, "sp_inputs") for s in sp_inputs]
    shapes = [s.dense_shape for s in sp_inputs]
    if expand:
        biggest = apply_op("Max", apply_op("Pack", shapes), [0])
        shapes = [_expanded(s, biggest, axis) for s in shapes]
    indices, values, shape = apply_op("SparseConcat", [s.indices for s in sp_inputs],
                                      [s.values for s in sp_inputs], shapes,
                                      concat_dim=int(axis), name=name)
    return SparseTensor(indices, values, shape)


def _expanded(shape, biggest, axis):
    """`biggest` with `shape`'s size at `axis`."""
    rank = apply_op("Size", shape)
    hot = apply_op("OneHot", convert_to_tensor(axis, dtype=dtypes.int32), rank,
                   convert_to_tensor(True), convert_to_tensor(False))
    return apply_op("SelectV2", hot, shape, biggest)


def sparse_slice(sp_input, start, size, name=None) -> SparseTensor:
    """The entries of `sp_input` inside [start, start + size), re-based to start."""
    sp_input = _sparse(sp_input)
    indices, values, shape = apply_op(
        "SparseSlice", sp_input.indices, sp_input.values, sp_input.dense_shape,
        convert_to_tensor(start, dtype=dtypes.int64), convert_to_tensor(size, dtype=dtypes.int64),
        name=name)
    return SparseTensor(indices, values, shape)


def sparse_softmax(sp_input, name=None) -> SparseTensor:
    """Softmax over the last dimension's present entries of each row (SparseSoftmax)."""
    sp_input = _sparse(sp_input)
    values = apply_op("SparseSoftmax", sp_input.indices, sp_input.values, sp_input.dense_shape,
                      name=name)
    return SparseTensor(sp_input.indices, values, sp_input.dense_shape)


def sparse_reduce_max(sp_input, axis=None, keepdims=None, reduction_axes=None,
                      keep_dims=None, name=None):
    """The dense max of the present values of `sp_input` over `axis` (None: all); a cell
    with no present value is 0, as TF (SparseReduceMax)."""
    sp_input = _sparse(sp_input)
    axis = reduction_axes if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    return apply_op("SparseReduceMax", sp_input.indices, sp_input.values, sp_input.dense_shape,
                    convert_to_tensor([] if axis is None else axis, dtype=dtypes.int32),
                    keep_dims=keep, name=name)


def _sparse_pair(op_type):
    def fn(sp_a, sp_b, name=None):
        sp_a, sp_b = _sparse(sp_a, "sp_a"), _sparse(sp_b, "sp_b")
        indices, values = apply_op(op_type, sp_a.indices, sp_a.values, sp_a.dense_shape,
                                   sp_b.indices, sp_b.values, sp_b.dense_shape, name=name)
        return SparseTensor(indices, values, sp_a.dense_shape)

    fn.__name__ = f"sparse_{op_type[12:].lower()}"
    fn.__doc__ = (f"Element-wise {op_type[12:].lower()} of two SparseTensors of one shape (an "
                  f"absent entry counts as 0) ({op_type}).")
    return fn


sparse_maximum = _sparse_pair("SparseSparseMaximum")
sparse_minimum = _sparse_pair("SparseSparseMinimum")


def sparse_split(keyword_required=None, sp_input=None, num_split=None, axis=None, name=None,
                 split_dim=None) -> list:
    """`sp_input` cut into `num_split` SparseTensors along `axis`; the first
    (size % num_split) pieces are one longer (SparseSplit)."""
    del keyword_required
    axis = split_dim if axis is None else axis
    sp_input = _sparse(sp_input)
    indices, values, shapes = apply_op(
        "SparseSplit", convert_to_tensor(axis, dtype=dtypes.int64), sp_input.indices,
        sp_input.values, sp_input.dense_shape, num_split=int(num_split), name=name)
    return [SparseTensor(i, v, s) for i, v, s in zip(indices, values, shapes)]


def _segment_wrapper(kind: str):
    def fn(data, indices, segment_ids, name=None, num_segments=None):
        if num_segments is None:
            return apply_op(f"SparseSegment{kind}", data, indices, segment_ids, name=name)
        return apply_op(f"SparseSegment{kind}WithNumSegments", data, indices, segment_ids,
                        num_segments, name=name)

    fn.__name__ = {"Sum": "sparse_segment_sum", "Mean": "sparse_segment_mean",
                   "SqrtN": "sparse_segment_sqrt_n"}[kind]
    fn.__doc__ = (f"Reduces rows `data[indices]` by sorted `segment_ids` "
                  f"(SparseSegment{kind}; with `num_segments`: ...WithNumSegments).")
    return fn


sparse_segment_sum = _segment_wrapper("Sum")
sparse_segment_mean = _segment_wrapper("Mean")
sparse_segment_sqrt_n = _segment_wrapper("SqrtN")

__all__ = ["sparse_reshape", "sparse_fill_empty_rows", "sparse_retain", "sparse_segment_sum",
           "sparse_segment_mean", "sparse_segment_sqrt_n", "sparse_reorder",
           "sparse_transpose", "sparse_reduce_sum", "sparse_tensor_dense_matmul", "sparse_add",
           "sparse_concat", "sparse_slice", "sparse_softmax", "sparse_reduce_max",
           "sparse_maximum", "sparse_minimum", "sparse_split"]
