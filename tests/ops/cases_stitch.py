"""Harness cases for DynamicStitch, ParallelDynamicStitch, DynamicPartition
(ops/stitch_ops.py) and ReverseSequence (ops/sequence_ops.py)."""

import numpy as np

from tensorweave.ops.apply import apply_op
from tests.ops.harness import OpCase

F32 = np.arange(24, dtype=np.float32).reshape(4, 3, 2) * 0.5 - 3.0
F64 = np.linspace(-1, 1, 15).reshape(5, 3)
I64 = np.arange(10, dtype=np.int64).reshape(2, 5) - 4


def i32(v):
    return np.array(v, dtype=np.int32)


def _stitch_ref(*xs):
    n = len(xs) // 2
    idx, data = xs[:n], xs[n:]
    rest = data[0].shape[np.ndim(idx[0]):]
    size = max(int(np.max(i)) for i in idx if np.size(i)) + 1
    out = np.zeros((size,) + rest, dtype=data[0].dtype)
    for i, d in zip(idx, data):
        for k, row in zip(np.reshape(i, -1), d.reshape((-1,) + rest)):
            out[k] = row
    return out


def _stitch(op_type):
    def build(*xs):
        n = len(xs) // 2
        return apply_op(op_type, list(xs[:n]), list(xs[n:]))

    return build


def _partition_ref(n):
    def ref(data, parts):
        rows = data.reshape((parts.size,) + data.shape[parts.ndim:])
        return [rows[parts.reshape(-1) == i] for i in range(n)]

    return ref


def _partition(n):
    return lambda d, p: apply_op("DynamicPartition", d, p, num_partitions=n)[0]


def _reverse_ref(seq_dim, batch_dim):
    def ref(x, lengths):
        out = x.copy()
        for b, n in enumerate(lengths):
            src = [slice(None)] * x.ndim
            src[batch_dim], src[seq_dim] = b, slice(0, n)
            dst = list(src)
            dst[seq_dim] = slice(n - 1, None, -1) if n else slice(0, 0)
            out[tuple(src)] = x[tuple(dst)]
        return out

    return ref


def _reverse(seq_dim, batch_dim):
    return lambda x, n: apply_op("ReverseSequence", x, n, seq_dim=seq_dim,
                                 batch_dim=batch_dim)


_STITCH_INPUTS = [i32([[0, 4], [6, 1]]), i32([2, 5, 3]), F32[:4].reshape(2, 2, 3, 2)[:, :, 0],
                  np.full((3, 2), 9.0, np.float32)]
CASES = [
    OpCase("DynamicStitch", _stitch("DynamicStitch"), _STITCH_INPUTS, _stitch_ref,
           name="matrix_indices"),
    OpCase("DynamicStitch", _stitch("DynamicStitch"),
           [i32([0, 2]), i32([2, 1]), I64, I64 * 3], _stitch_ref, name="duplicates_int64"),
    OpCase("DynamicStitch", _stitch("DynamicStitch"), [i32(3), i32([0, 1]), F64[0],
                                                        F64[1:3]], _stitch_ref,
           name="scalar_index_gap"),
    OpCase("ParallelDynamicStitch", _stitch("ParallelDynamicStitch"),
           [i32([1, 3]), i32([0, 2, 4]), F64[:2], F64[2:]], _stitch_ref),
    OpCase("DynamicPartition", _partition(3), [F32, i32([2, 0, 2, 1])], _partition_ref(3),
           exact_static_shape=False),
    OpCase("DynamicPartition", _partition(2), [I64, i32([[0, 1, 1, 0, 1], [1, 1, 1, 1, 0]])],
           _partition_ref(2), name="matrix_partitions", exact_static_shape=False),
    OpCase("ReverseSequence", _reverse(1, 0), [F32, np.array([2, 0, 3, 1], np.int64)],
           _reverse_ref(1, 0)),
    OpCase("ReverseSequence", _reverse(0, 2), [F32, i32([4, 3])], _reverse_ref(0, 2),
           name="batch_last_int32"),
]


# -- MaxPoolGradGrad, MaxPoolGradGradV2 (ops/nn_pool_grad_ops.py) ----------------------------
def _pool_ref(ksize, strides, padding, fmt="NHWC"):
    """Loop reference: grad at the first window position equal to the window's maximum."""
    def ref(x, g):
        if fmt == "NCHW":
            x, g = x.transpose(0, 2, 3, 1), g.transpose(0, 2, 3, 1)
        kh, kw, sh, sw = ksize[0], ksize[1], strides[0], strides[1]
        n, h, w, c = x.shape
        if padding == "SAME":
            oh, ow = -(-h // sh), -(-w // sw)
            top = max((oh - 1) * sh + kh - h, 0) // 2
            left = max((ow - 1) * sw + kw - w, 0) // 2
        else:
            oh, ow, top, left = (h - kh) // sh + 1, (w - kw) // sw + 1, 0, 0
        out = np.zeros((n, oh, ow, c), x.dtype)
        for b, i, j, d in np.ndindex(n, oh, ow, c):
            best = None
            for p, q in np.ndindex(kh, kw):
                r, s = i * sh - top + p, j * sw - left + q
                if 0 <= r < h and 0 <= s < w and (best is None or x[b, r, s, d] > x[best]):
                    best = (b, r, s, d)
            out[b, i, j, d] = g[best]
        return out.transpose(0, 3, 1, 2) if fmt == "NCHW" else out

    return ref


def _pool_build(v2, ksize, strides, padding, fmt="NHWC"):
    k4 = [1, 1] + list(ksize) if fmt == "NCHW" else [1] + list(ksize) + [1]
    s4 = [1, 1] + list(strides) if fmt == "NCHW" else [1] + list(strides) + [1]

    def build(x, g):
        y = apply_op("MaxPool", x, ksize=k4, strides=s4, padding=padding, data_format=fmt)
        if v2:
            return apply_op("MaxPoolGradGradV2", x, y, g, i32(k4), i32(s4), padding=padding,
                            data_format=fmt)
        return apply_op("MaxPoolGradGrad", x, y, g, ksize=k4, strides=s4, padding=padding,
                        data_format=fmt)

    return build


_TIES = np.array([[1, 3, 3, 0, 2], [3, 2, 1, 3, 2], [0, 0, 5, 5, 1], [5, 5, 1, 1, 0]],
                 np.float32).reshape(1, 4, 5, 1)
_IMG = np.random.default_rng(5).permutation(2 * 5 * 4 * 3).reshape(2, 5, 4, 3).astype(np.float64)
_G = np.arange(2 * 5 * 4 * 3, dtype=np.float64).reshape(2, 5, 4, 3) * 0.5 - 7


CASES += [
    OpCase("MaxPoolGradGrad", _pool_build(False, (2, 2), (2, 2), "VALID"),
           [_TIES, np.arange(20, dtype=np.float32).reshape(1, 4, 5, 1) + 1],
           _pool_ref((2, 2), (2, 2), "VALID"), name="ties_first_wins"),
    OpCase("MaxPoolGradGrad", _pool_build(False, (3, 2), (2, 1), "SAME"), [_IMG, _G],
           _pool_ref((3, 2), (2, 1), "SAME")),
    OpCase("MaxPoolGradGrad", _pool_build(False, (2, 3), (1, 2), "SAME", "NCHW"),
           [_IMG.transpose(0, 3, 1, 2), _G.transpose(0, 3, 1, 2)],
           _pool_ref((2, 3), (1, 2), "SAME", "NCHW"), name="NCHW"),
    OpCase("MaxPoolGradGradV2", _pool_build(True, (3, 3), (2, 2), "VALID"),
           [_IMG.astype(np.float32), _G.astype(np.float32)],
           _pool_ref((3, 3), (2, 2), "VALID")),
    OpCase("MaxPoolGradGradV2", _pool_build(True, (2, 2), (1, 1), "SAME"),
           [(_IMG * 3).astype(np.int32), _G.astype(np.int32)], _pool_ref((2, 2), (1, 1), "SAME"),
           name="int32"),
]
