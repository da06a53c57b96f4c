"""Gradients of the sparse ops (TF's math_grad.py sparse segment part, sparse_grad.py).

    SparseSegmentSum(data, indices, ids):   d data = UnsortedSegmentSum(grad[ids], indices, rows)
    SparseSegmentMean / SqrtN:              d data = SparseSegment{Mean,SqrtN}Grad(grad, ...)
    SparseFillEmptyRows:                    d values, d default = SparseFillEmptyRowsGrad(...)
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.autodiff.registry import NotDifferentiable, RegisterGradient
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op


def _dim0(x):
    return apply_op("StridedSlice", apply_op("Shape", x), [0], [1], [1], shrink_axis_mask=1)


def _sum_grad(op, grad):
    data, indices, ids = op.inputs[:3]
    rows = apply_op("UnsortedSegmentSum", apply_op("GatherV2", grad, ids, 0), indices,
                    _dim0(data))
    return [rows, None, None] + [None] * (len(op.inputs) - 3)


def _scaled_grad(kind):
    def fn(op, grad):
        data, indices, ids = op.inputs[:3]
        d = apply_op(f"SparseSegment{kind}Grad", grad, indices, ids, _dim0(data))
        return [d, None, None] + [None] * (len(op.inputs) - 3)

    return fn


RegisterGradient("SparseSegmentSum")(_sum_grad)
RegisterGradient("SparseSegmentSumWithNumSegments")(_sum_grad)
for _kind in ("Mean", "SqrtN"):
    RegisterGradient(f"SparseSegment{_kind}")(_scaled_grad(_kind))
    RegisterGradient(f"SparseSegment{_kind}WithNumSegments")(_scaled_grad(_kind))
    NotDifferentiable(f"SparseSegment{_kind}Grad")


@RegisterGradient("SparseFillEmptyRows")
def _sparse_fill_empty_rows_grad(op, *grads):
    reverse_index_map = op.outputs[3]
    d_values, d_default = apply_op("SparseFillEmptyRowsGrad", reverse_index_map, grads[1])
    return [None, d_values, None, d_default]


NotDifferentiable("SparseReshape")
NotDifferentiable("SparseFillEmptyRowsGrad")


# -- reorder, reduce, matmul, add, slice, softmax ------------------------------------------
def _column(indices, i):
    return apply_op("StridedSlice", indices, [0, i], [0, i + 1], [1, 1], begin_mask=1,
                    end_mask=1, shrink_axis_mask=2)


@RegisterGradient("SparseReorder")
def _sparse_reorder_grad(op, _indices_grad, values_grad):
    """The reordered values' gradient, permuted back (TF's _SparseReorderGrad)."""
    indices, shape = op.inputs[0], op.inputs[2]
    n = apply_op("StridedSlice", apply_op("Shape", indices), [0], [1], [1], shrink_axis_mask=1)
    positions = apply_op("Cast", apply_op("Range", 0, n, 1), DstT=dtypes.int64)
    _, order = apply_op("SparseReorder", indices, positions, shape)
    return [None, apply_op("GatherV2", values_grad, apply_op("InvertPermutation", order), 0),
            None]


@RegisterGradient("SparseReduceSum")
def _sparse_reduce_sum_grad(op, grad):
    """Each entry gets the gradient of the output cell it was summed into."""
    indices, shape, axes = op.inputs[0], op.inputs[2], op.inputs[3]
    rank = apply_op("Size", shape)
    axes = apply_op("FloorMod", axes, rank)
    positions = apply_op("Range", 0, rank, 1)
    hit = apply_op("Any", apply_op("Equal", apply_op("ExpandDims", positions, 1),
                                   apply_op("ExpandDims", axes, 0)), [1])
    everything = apply_op("Equal", apply_op("Size", axes), 0)
    reduced = apply_op("LogicalOr", hit, everything)
    kept = apply_op("SelectV2", reduced, apply_op("OnesLike", shape), shape)
    reshaped = apply_op("Reshape", grad, kept)
    scale = apply_op("FloorDiv", shape, kept)
    return [None, apply_op("GatherNd", reshaped, apply_op("FloorDiv", indices, scale)), None,
            None]


@RegisterGradient("SparseTensorDenseMatMul")
def _sparse_dense_matmul_grad(op, grad):
    indices, values, shape, b = op.inputs
    adj_a, adj_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    b_grad = apply_op("SparseTensorDenseMatMul", indices, values, shape, grad,
                      adjoint_a=not adj_a)
    if adj_b:
        b_grad = apply_op("Transpose", b_grad, [1, 0])
    rows, cols = _column(indices, 0), _column(indices, 1)
    parts_a = apply_op("GatherV2", grad, cols if adj_a else rows, 0)
    b_rows = apply_op("Transpose", b, [1, 0]) if adj_b else b
    parts_b = apply_op("GatherV2", b_rows, rows if adj_a else cols, 0)
    values_grad = apply_op("Sum", apply_op("Mul", parts_a, parts_b), [1])
    return [None, values_grad, None, b_grad]


@RegisterGradient("SparseAdd")
def _sparse_add_grad(op, *grads):
    a_grad, b_grad = apply_op("SparseAddGrad", grads[1], op.inputs[0], op.inputs[3],
                              op.outputs[0])
    return [None, a_grad, None, None, b_grad, None, None]


@RegisterGradient("SparseTensorDenseAdd")
def _sparse_dense_add_grad(op, grad):
    return [None, apply_op("GatherNd", grad, op.inputs[0]), None, grad]


@RegisterGradient("SparseSlice")
def _sparse_slice_grad(op, *grads):
    """Slicing the entries' positions tells where each output value came from."""
    indices, _, shape, start, size = op.inputs
    n = apply_op("StridedSlice", apply_op("Shape", indices), [0], [1], [1], shrink_axis_mask=1)
    positions = apply_op("Cast", apply_op("Range", 0, n, 1), DstT=dtypes.int64)
    _, picked, _ = apply_op("SparseSlice", indices, positions, shape, start, size)
    values_grad = apply_op("UnsortedSegmentSum", grads[1], picked, n)
    return [None, values_grad, None, None, None]


@RegisterGradient("SparseSoftmax")
def _sparse_softmax_grad(op, grad):
    """(grad - sum_row(grad * softmax)) * softmax, per row of the last dimension."""
    indices, shape, out = op.inputs[0], op.inputs[2], op.outputs[0]
    product = apply_op("Mul", out, grad)
    row_sums = apply_op("SparseReduceSum", indices, product, shape, [-1], keep_dims=True)
    rank = apply_op("StridedSlice", apply_op("Shape", indices), [1], [2], [1],
                    shrink_axis_mask=1)
    last = apply_op("OneHot", rank - 1, rank, convert_to_tensor(True), convert_to_tensor(False))
    row_index = apply_op("SelectV2", last, apply_op("ZerosLike", indices), indices)
    per_entry = apply_op("GatherNd", row_sums, row_index)
    return [None, apply_op("Mul", apply_op("Sub", grad, per_entry), out), None]


NotDifferentiable("SparseAddGrad")
