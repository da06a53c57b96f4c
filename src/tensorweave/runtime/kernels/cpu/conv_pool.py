"""Faster max pooling (forward and gradient) and average-pooling gradient, no registration.

The generic `conv_impl` pools walk the KH*KW window taps one strided slice at a time, each a
pass over the whole batch. Here:
- MaxPool runs the generic pool a chunk of images at a time (`conv_scratch.chunks`), so the
  passes after the first re-read a chunk that is still in cache. (Reducing a reshaped view
  was measured too: not faster once the input is not already in cache, as in a training step.)
- MaxPoolGrad, when the windows tile the input (stride == window, no padding: the usual
  2x2/2), works on the (N, OH, KH, OW, KW, C) view of the input, per chunk: one comparison
  with the broadcast max, TF's first-maximum rule applied on the booleans (cheap), one
  multiply writing the result.
- AvgPoolGrad, when the windows tile, is one broadcast copy.

Each function takes the generic function's arguments and falls back to it where its path does
not apply. Results equal the generic ones exactly (max pooling, including which input a
MaxPoolGrad routes each gradient to) or up to float rounding (average pooling).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorweave.ops.nn_geometry import Window2D
from tensorweave.runtime.kernels.cpu import conv_impl as impl
from tensorweave.runtime.kernels.cpu.conv_scratch import chunks, flat_scratch


def tiling(win: Window2D) -> bool:
    """Whether the windows tile the input: stride == window, no padding, no dilation."""
    return not win.padded and (win.stride_h, win.stride_w) == (win.k_h, win.k_w) and \
        (win.dil_h, win.dil_w) == (1, 1)


def tiles(x: np.ndarray, win: Window2D, writeable: bool = False) -> np.ndarray | None:
    """The (N, OH, KH, OW, KW, C) view of NHWC `x` when the windows tile it (trailing rows
    and columns that no window reaches are left out), else None (also when `x` is empty)."""
    if not tiling(win) or x.size == 0:
        return None
    sn, sh, sw, sc = x.strides
    shape = (x.shape[0], win.out_h, win.k_h, win.out_w, win.k_w, x.shape[3])
    strides = (sn, sh * win.k_h, sh, sw * win.k_w, sw, sc)
    return as_strided(x, shape, strides, writeable=writeable)


def _covers(win: Window2D, shape) -> bool:
    """Whether the tiles cover every input (no trailing rows or columns)."""
    return (win.out_h * win.k_h, win.out_w * win.k_w) == tuple(shape[1:3])


def _spread(tile_values, shape, dtype, win: Window2D) -> np.ndarray:
    """A fresh NHWC array of `shape` holding `tile_values` (broadcast to the tiles) and zeros
    where no window reaches."""
    if _covers(win, shape):
        out = np.empty(shape, dtype)
        dst = out.reshape(shape[0], win.out_h, win.k_h, win.out_w, win.k_w, shape[3])
    else:
        out = np.zeros(shape, dtype)
        dst = tiles(out, win, writeable=True)
    dst[...] = tile_values
    return out


def max_pool(x: np.ndarray, win: Window2D) -> np.ndarray:
    """`impl.max_pool`, a chunk of images at a time: the generic pass per window tap then
    re-reads a chunk that is still in cache."""
    parts = chunks(x.shape[0], x[:1].nbytes)
    if len(parts) <= 1:
        return impl.max_pool(x, win)
    out = np.empty((x.shape[0], win.out_h, win.out_w, x.shape[3]), x.dtype)
    for n0, n1 in parts:
        out[n0:n1] = impl.max_pool(x[n0:n1], win)
    return out


def max_pool_grad(x: np.ndarray, y: np.ndarray, dy: np.ndarray, win: Window2D) -> np.ndarray:
    """`impl.max_pool_grad`: each dy goes to the first input of its window, in row-major
    window order, equal to the window's max (the last one when none is, e.g. NaN)."""
    v = tiles(x, win)
    if v is None:
        return impl.max_pool_grad(x, y, dy, win)
    dx = np.empty(x.shape, dy.dtype) if _covers(win, x.shape) else np.zeros(x.shape, dy.dtype)
    dv = tiles(dx, win, writeable=True)
    parts = chunks(x.shape[0], x[:1].nbytes)
    first = flat_scratch("pool_first", (parts[0][1] - parts[0][0]) * v[0].size, bool)
    for n0, n1 in parts:
        hit = first[:(n1 - n0) * v[0].size].reshape(v[n0:n1].shape)
        np.equal(v[n0:n1], y[n0:n1, :, None, :, None, :], out=hit)
        _keep_first(hit, win.k_h * win.k_w, win.k_w)
        np.multiply(hit, dy[n0:n1, :, None, :, None, :], out=dv[n0:n1])
    return dx


def _keep_first(hit: np.ndarray, taps: int, k_w: int) -> None:
    """In place on (N, OH, KH, OW, KW, C) booleans: keeps, per window, only the first True in
    row-major tap order; a window with none gets its last tap."""
    def tap(t):
        i, j = divmod(t, k_w)
        return hit[:, :, i, :, j]

    if taps == 1:
        hit[...] = True
        return
    seen = tap(0).copy()
    for t in range(1, taps - 1):
        np.greater(tap(t), seen, out=tap(t))       # hit and not seen before
        np.logical_or(seen, tap(t), out=seen)
    np.logical_not(seen, out=tap(taps - 1))


def avg_pool_grad(dy: np.ndarray, input_shape, win: Window2D) -> np.ndarray:
    """`impl.avg_pool_grad`: dy / (k_h*k_w) copied to every input of its window."""
    if not tiling(win) or dy.dtype.kind != "f" or 0 in tuple(input_shape):
        return impl.avg_pool_grad(dy, input_shape, win)
    g = dy / np.asarray(win.k_h * win.k_w, dy.dtype)
    return _spread(g[:, :, None, :, None, :], tuple(input_shape), dy.dtype, win)
