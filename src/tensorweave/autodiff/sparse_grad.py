"""Gradients of the sparse ops (TF's math_grad.py sparse segment part, sparse_grad.py).

    SparseSegmentSum(data, indices, ids):   d data = UnsortedSegmentSum(grad[ids], indices, rows)
    SparseSegmentMean / SqrtN:              d data = SparseSegment{Mean,SqrtN}Grad(grad, ...)
    SparseFillEmptyRows:                    d values, d default = SparseFillEmptyRowsGrad(...)
"""

from __future__ import annotations

from tensorweave.autodiff.registry import NotDifferentiable, RegisterGradient
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
