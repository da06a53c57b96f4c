"""The compiled float32 loops of `native/*.c`, behind numpy-shaped calls.

numpy runs one ufunc at a time over whole arrays, so a kernel of k ufuncs makes k trips
through memory; on the tensors of a training step (several MB, larger than the caches) that
traffic, not arithmetic, is the cost. These loops do the memory-bound kernels in one pass:
ReluGrad, bias + activation epilogues, ApplyAdam, max pooling and its gradient, the patch
matrix of a convolution and its adjoint, a direct convolution for inputs with few channels,
batch normalization (one pass for its statistics, summed in float64, one to apply), row
scatters (ScatterAdd/Sub, segment sums) and sparse softmax cross entropy (row by row in
cache, exp by a vectorized polynomial: not bit for bit numpy's, ~2e-7 relative). GEMMs
stay with numpy's BLAS. In pool mode (`parallel.pool_mode`) the loops over a big batch's
images (or a big ReluGrad's or batch norm's rows) are shared out to the kernel threads.

Callers check `usable(*arrays)` (the module built, all arrays float32 and C-contiguous) and
fall back to their numpy code otherwise; every loop computes what that numpy code computes
(bit for bit where the numpy code is elementwise, up to summation order in convolutions;
batch norm's statistics are summed in float64, so they are closer to exact than numpy's).
`TENSORWEAVE_NATIVE=0` in the environment, or `set_enabled(False)`, turns the loops off
(benchmarks and tests compare both paths). The calls release the GIL. Thread-safe.
"""

from __future__ import annotations

import os

import numpy as np

from tensorweave.ops.nn_geometry import Window2D
from tensorweave.runtime.kernels.cpu import parallel

try:
    from tensorweave.runtime.kernels.cpu import _native
except ImportError:  # NOTE: built without a C compiler; the numpy paths serve
    _native = None

BUILT = _native is not None
_F32 = np.dtype(np.float32)
_state = {"enabled": BUILT and os.environ.get("TENSORWEAVE_NATIVE", "1") != "0"}

ACT = {None: 0, "Relu": 1, "Relu6": 2}


def enabled() -> bool:
    """Whether the compiled loops are in use."""
    return _state["enabled"]


def set_enabled(on: bool) -> bool:
    """Turns the loops on (when built) or off; returns the previous setting."""
    old = _state["enabled"]
    _state["enabled"] = bool(on) and BUILT
    return old


def usable(*arrays) -> bool:
    """Whether the loops are on and every array is a C-contiguous float32 ndarray."""
    return _state["enabled"] and all(
        isinstance(a, np.ndarray) and a.dtype == _F32 and a.flags.c_contiguous for a in arrays)


def _window(win: Window2D, n: int, c: int) -> tuple:
    return (n, win.in_h, win.in_w, c, win.k_h, win.k_w, win.out_h, win.out_w,
            win.stride_h, win.stride_w, win.dil_h, win.dil_w, win.pad_top, win.pad_left)


# -- elementwise --------------------------------------------------------------------------------
def relu_grad(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """g * (x > 0), TF's ReluGrad (same shapes)."""
    out = np.empty_like(g)
    fg, fx, fo = g.reshape(-1), x.reshape(-1), out.reshape(-1)
    parallel.spread(g.size, lambda lo, hi: _native.relu_grad(fg[lo:hi], fx[lo:hi], fo[lo:hi],
                                                             hi - lo), g.size)
    return out


def bias_act(y: np.ndarray, bias: np.ndarray | None, act: str | None) -> np.ndarray:
    """y += bias over the last axis (when given), then Relu/Relu6/None, in place; returns y."""
    cols = y.shape[-1] if y.ndim else 1
    _native.bias_act(y, bias, y.size // max(cols, 1), cols, ACT[act])
    return y


def adam(var, m, v, g, alpha, one_minus_beta1, one_minus_beta2, beta1, epsilon,
         nesterov: bool) -> None:
    """ApplyAdam in place on var, m, v (same size as g); scalars as `_adam_scalars` gives."""
    _native.adam(var, m, v, g, g.size, float(alpha), float(one_minus_beta1),
                 float(one_minus_beta2), float(beta1), float(epsilon), bool(nesterov))


def scatter_rows(params, indices, updates, rows: int, cols: int, subtract: bool,
                 wide: bool) -> None:
    """params[indices[i]] += updates[i] (-= when `subtract`) in order: params (rows, cols),
    indices (n,) int64, updates (n, cols), all C-contiguous, float64 when `wide` else
    float32. ValueError (nothing written) for an index outside [0, rows)."""
    _native.scatter_rows(params, indices, updates, rows, cols, indices.size, subtract, wide)


def sparse_xent(logits: np.ndarray, labels: np.ndarray) -> tuple:
    """SparseSoftmaxCrossEntropyWithLogits of (rows, cols) float32 logits and (rows,) labels
    in [0, cols) (checked by the caller; ValueError otherwise): (loss, backprop), each row's
    three passes in cache, exp by a vectorized polynomial (~2e-7 relative, as Eigen's), sums
    in float64. Rows are shared out in pool mode."""
    rows, cols = logits.shape
    loss, back = np.empty(rows, _F32), np.empty_like(logits)
    idx = np.ascontiguousarray(labels, np.int64)
    parallel.spread(rows, lambda lo, hi: _native.sparse_xent(
        logits[lo:hi], idx[lo:hi], loss[lo:hi], back[lo:hi], hi - lo, cols), logits.size)
    return loss, back


# -- batch normalization ----------------------------------------------------------------------
SUM_ROWS = 1 << 12   # rows per partial sum: a fixed split, so sums repeat on any thread count


def channel_sums(a: np.ndarray, b: np.ndarray, shift: np.ndarray) -> tuple:
    """(sum_r a[r], sum_r a[r] * (b[r] - shift)) per column of (rows, cols) arrays, float64.
    Partial sums over fixed blocks of SUM_ROWS rows, added in block order (threads in pool
    mode share the blocks): the result does not depend on the thread count."""
    rows, cols = a.shape
    shift = np.ascontiguousarray(shift, dtype=np.float32)
    blocks = max(-(-rows // SUM_ROWS), 1)
    s1, s2 = np.zeros((blocks, cols)), np.zeros((blocks, cols))

    def part(lo, hi):
        for k in range(lo, hi):
            r0, r1 = k * SUM_ROWS, min((k + 1) * SUM_ROWS, rows)
            _native.channel_sums(a[r0:r1], b[r0:r1], shift, s1[k], s2[k], r1 - r0, cols)
    parallel.spread(blocks, part, a.size)
    return s1.sum(axis=0), s2.sum(axis=0)


def _by_rows(out: np.ndarray, fn) -> np.ndarray:
    """fn(lo, hi) over row ranges of the (rows, cols) output, shared out in pool mode."""
    parallel.spread(out.shape[0], fn, out.size)
    return out


def bn_forward(x: np.ndarray, mean, k, offset) -> np.ndarray:
    """(x - mean) * k + offset per column of a (rows, cols) array (float32 vectors)."""
    y, cols = np.empty_like(x), x.shape[1]
    params = np.ascontiguousarray(np.stack([mean, k, offset]), dtype=np.float32)
    return _by_rows(y, lambda lo, hi: _native.bn_forward(x[lo:hi], y[lo:hi], params,
                                                         hi - lo, cols))


def bn_backward(dy: np.ndarray, x: np.ndarray, mean, inv, a, b, c) -> np.ndarray:
    """a * ((dy - b) - ((x - mean) * inv) * c) per column: FusedBatchNormGrad's dx."""
    dx, cols = np.empty_like(x), x.shape[1]
    params = np.ascontiguousarray(np.stack([mean, inv, a, b, c]), dtype=np.float32)
    return _by_rows(dx, lambda lo, hi: _native.bn_backward(dy[lo:hi], x[lo:hi], dx[lo:hi],
                                                           params, hi - lo, cols))


# -- pooling ------------------------------------------------------------------------------------
def max_pool(x: np.ndarray, win: Window2D) -> np.ndarray:
    """NHWC max pool; padding never wins, nan propagates."""
    n, _, _, c = x.shape
    y = np.empty((n, win.out_h, win.out_w, c), _F32)
    parallel.spread(n, lambda lo, hi: _native.max_pool(x[lo:hi], y[lo:hi],
                                                       _window(win, hi - lo, c)), x.size)
    return y


def max_pool_grad(x: np.ndarray, y: np.ndarray, dy: np.ndarray, win: Window2D,
                  relu_of: np.ndarray | None = None) -> np.ndarray:
    """Each window's gradient to its first maximum (row-major); times (relu_of > 0) when
    given (ReluGrad of the result against the pooled Relu's output)."""
    n, _, _, c = x.shape
    dx = np.empty(x.shape, _F32)

    def part(lo: int, hi: int) -> None:
        _native.max_pool_grad(x[lo:hi], y[lo:hi], dy[lo:hi], dx[lo:hi],
                              None if relu_of is None else relu_of[lo:hi],
                              _window(win, hi - lo, c))

    parallel.spread(n, part, x.size)
    return dx


# -- convolution --------------------------------------------------------------------------------
def im2col(x: np.ndarray, win: Window2D, out: np.ndarray | None = None) -> np.ndarray:
    """The (N*OH*OW, KH*KW*C) patch matrix of NHWC `x` (zeros for padding), written into
    `out` (C-contiguous float32 of that shape) when given."""
    n, _, _, c = x.shape
    shape = (n * win.out_h * win.out_w, win.k_h * win.k_w * c)
    cols = np.empty(shape, _F32) if out is None else out
    _native.im2col(x, cols, _window(win, n, c))
    return cols


def col2im(cols: np.ndarray, win: Window2D, n: int, c: int,
           out: np.ndarray | None = None) -> np.ndarray:
    """The adjoint of `im2col`: patch rows summed back into an (N, H, W, C) array (`out`, a
    C-contiguous float32 array of that shape, when given)."""
    dx = np.empty((n, win.in_h, win.in_w, c), _F32) if out is None else out
    _native.col2im(cols, dx, _window(win, n, c))
    return dx


def conv_direct(x: np.ndarray, w: np.ndarray, win: Window2D, bias: np.ndarray | None = None,
                act: str | None = None) -> np.ndarray:
    """act(conv2d(x, w) + bias) without a patch matrix: x NHWC, w (KH, KW, C, O)."""
    n, _, _, c = x.shape
    o = w.shape[3]
    y = np.empty((n, win.out_h, win.out_w, o), _F32)
    parallel.spread(n, lambda lo, hi: _native.conv_direct(
        x[lo:hi], w, bias, y[lo:hi], o, ACT[act], _window(win, hi - lo, c)), y.size)
    return y


def conv_filter_direct(x: np.ndarray, dy: np.ndarray, win: Window2D) -> np.ndarray:
    """d(conv2d)/d(filter) without a patch matrix (summed in double; in pool mode each range
    of images apart, the ranges' float32 sums then added in order): (KH, KW, C, O)."""
    n, _, _, c = x.shape
    o = dy.shape[3]
    parts: dict[int, np.ndarray] = {}

    def part(lo: int, hi: int) -> None:
        dw = parts[lo] = np.empty((win.k_h, win.k_w, c, o), _F32)
        _native.conv_filter_direct(x[lo:hi], dy[lo:hi], dw, o, _window(win, hi - lo, c))

    parallel.spread(n, part, dy.size)
    keys = sorted(parts)
    dw = parts[keys[0]]
    for k in keys[1:]:
        dw += parts[k]
    return dw
