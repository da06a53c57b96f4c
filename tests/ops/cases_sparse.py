"""Sparse ops in the harness: sparse segment reductions (+ grads), SparseReshape,
SparseFillEmptyRows(+Grad) against numpy references. (TF's numbers for the embedding
lookups built on them: test_sampled.py.)"""

import numpy as np

from tensorweave.ops.apply import apply_op
from tests.ops.harness import OpCase

_DATA = np.arange(15, dtype=np.float32).reshape(5, 3) - 4.0
_IDX = np.array([0, 3, 3, 1, 4], np.int32)
_SEG = np.array([0, 0, 2, 2, 3], np.int32)


def _segment_ref(kind, rows=None):
    def ref(data, idx, seg, *num):
        n = int(num[0]) if num else int(seg[-1]) + 1
        out = np.zeros((n,) + data.shape[1:], data.dtype)
        np.add.at(out, seg, data[idx])
        counts = np.maximum(np.bincount(seg, minlength=n), 1).astype(data.dtype)[:, None]
        return out / {"Sum": 1, "Mean": counts, "SqrtN": np.sqrt(counts)}[kind]

    return ref


def _segment_grad_ref(kind):
    def ref(grad, idx, seg, dim0):
        counts = np.maximum(np.bincount(seg, minlength=grad.shape[0]), 1).astype(grad.dtype)
        scale = counts if kind == "Mean" else np.sqrt(counts)
        out = np.zeros((int(dim0),) + grad.shape[1:], grad.dtype)
        np.add.at(out, idx, (grad / scale[:, None])[seg])
        return out

    return ref


def _reshape_ref(indices, shape, new):
    flat = np.ravel_multi_index(tuple(indices.T), tuple(shape))
    out_shape = np.array([2, 6], np.int64)
    return [np.stack(np.unravel_index(flat, tuple(out_shape)), 1).astype(np.int64), out_shape]


def _fill_ref(indices, values, shape, default):
    return [np.array([[0, 0], [1, 0], [2, 1], [3, 2]], np.int64),
            np.array([1.0, -1.0, 2.0, 3.0], np.float32),
            np.array([False, True, False, False]), np.array([0, 2, 3], np.int64)]


CASES = []
for _kind in ("Sum", "Mean", "SqrtN"):
    CASES.append(OpCase(f"SparseSegment{_kind}",
                        lambda d, i, s, k=_kind: apply_op(f"SparseSegment{k}", d, i, s),
                        [_DATA, _IDX, _SEG], _segment_ref(_kind), exact_static_shape=False))
    CASES.append(OpCase(f"SparseSegment{_kind}WithNumSegments",
                        lambda d, i, s, n, k=_kind: apply_op(
                            f"SparseSegment{k}WithNumSegments", d, i, s, n),
                        [_DATA, _IDX.astype(np.int64), _SEG, np.int32(6)], _segment_ref(_kind)))
for _kind in ("Mean", "SqrtN"):
    CASES.append(OpCase(f"SparseSegment{_kind}Grad",
                        lambda g, i, s, n, k=_kind: apply_op(f"SparseSegment{k}Grad", g, i, s, n),
                        [_DATA[:4], _IDX, _SEG, np.int32(7)], _segment_grad_ref(_kind)))
CASES += [
    OpCase("SparseReshape", lambda i, s, n: apply_op("SparseReshape", i, s, n),
           [np.array([[0, 1, 1], [1, 0, 2], [1, 1, 0]], np.int64), np.array([2, 2, 3], np.int64),
            np.array([2, -1], np.int64)], _reshape_ref, exact_static_shape=False),
    OpCase("SparseFillEmptyRows",
           lambda i, v, s, d: apply_op("SparseFillEmptyRows", i, v, s, d),
           [np.array([[0, 0], [2, 1], [3, 2]], np.int64), np.array([1.0, 2.0, 3.0], np.float32),
            np.array([4, 3], np.int64), np.float32(-1.0)], _fill_ref, exact_static_shape=False),
    OpCase("SparseFillEmptyRowsGrad",
           lambda r, g: apply_op("SparseFillEmptyRowsGrad", r, g),
           [np.array([0, 2, 4], np.int64), np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)],
           lambda r, g: [g[r], np.float32(g[1] + g[3])]),
]

EXEMPT: dict = {}

_I = np.array([[0, 1], [1, 0], [1, 2]], np.int64)
_V = np.array([1.0, -2.0, 3.0], np.float32)
_SH = np.array([2, 3], np.int64)


def _dense(idx, val, shape):
    out = np.zeros(tuple(shape), val.dtype)
    out[tuple(idx.T)] = val
    return out


def _softmax_ref(idx, val, shape):
    out = val.copy()
    for row in np.unique(idx[:, 0]):
        m = idx[:, 0] == row
        e = np.exp(val[m] - val[m].max())
        out[m] = e / e.sum()
    return out


CASES += [
    OpCase("SparseReorder", lambda i, v, s: apply_op("SparseReorder", i, v, s),
           [_I[::-1].copy(), _V[::-1].copy(), _SH], lambda i, v, s: [_I, _V]),
    OpCase("SparseReduceSum", lambda i, v, s, a: apply_op("SparseReduceSum", i, v, s, a),
           [_I, _V, _SH, np.array([1], np.int32)],
           lambda i, v, s, a: _dense(i, v, s).sum(axis=1), exact_static_shape=False),
    OpCase("SparseTensorDenseMatMul",
           lambda i, v, s, b: apply_op("SparseTensorDenseMatMul", i, v, s, b),
           [_I, _V, _SH, np.arange(12, dtype=np.float32).reshape(3, 4)],
           lambda i, v, s, b: _dense(i, v, s) @ b, exact_static_shape=False),
    OpCase("SparseAdd",
           lambda i, v, s, j, w, t, th: apply_op("SparseAdd", i, v, s, j, w, t, th),
           [_I, _V, _SH, _I[:1], np.array([5.0], np.float32), _SH, np.float32(0)],
           lambda *a: [_I, np.array([6.0, -2.0, 3.0], np.float32), _SH],
           exact_static_shape=False),
    OpCase("SparseAddGrad", lambda g, a, b, s: apply_op("SparseAddGrad", g, a, b, s),
           [np.array([1.0, 2.0, 3.0], np.float32), _I, _I[1:], _I],
           lambda g, a, b, s: [g, g[1:]], exact_static_shape=False),
    OpCase("SparseTensorDenseAdd",
           lambda i, v, s, b: apply_op("SparseTensorDenseAdd", i, v, s, b),
           [_I, _V, _SH, np.ones((2, 3), np.float32)],
           lambda i, v, s, b: _dense(i, v, s) + b),
    OpCase("SparseConcat",
           lambda i, v, s: apply_op("SparseConcat", [i, i], [v, v], [s, s], concat_dim=0),
           [_I, _V, _SH],
           lambda i, v, s: [np.concatenate([i, i + [2, 0]]), np.concatenate([v, v]),
                            np.array([4, 3], np.int64)], exact_static_shape=False),
    OpCase("SparseSlice",
           lambda i, v, s, b, z: apply_op("SparseSlice", i, v, s, b, z),
           [_I, _V, _SH, np.array([1, 0], np.int64), np.array([1, 2], np.int64)],
           lambda *a: [np.array([[0, 0]], np.int64), np.array([-2.0], np.float32),
                       np.array([1, 2], np.int64)], exact_static_shape=False),
    OpCase("SparseSoftmax", lambda i, v, s: apply_op("SparseSoftmax", i, v, s),
           [_I, _V, _SH], _softmax_ref),
]
