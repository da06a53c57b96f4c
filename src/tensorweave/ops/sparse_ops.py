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
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import register_op
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
           "sparse_segment_mean", "sparse_segment_sqrt_n"]
