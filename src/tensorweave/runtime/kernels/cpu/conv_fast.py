"""Cache-blocked fast paths for NHWC Conv2D and its two gradients (no kernel registration).

The generic `conv_impl` builds the whole (N*OH*OW, KH*KW*C) patch matrix, then multiplies:
for a mid-sized layer that matrix is several times larger than the input and goes out to main
memory and back, which costs about as much as the matmul itself. Here the batch is split into
chunks of images whose patch matrix (or tap products) fits in L2 (`conv_scratch.CHUNK_BYTES`);
each chunk is built in a per-thread scratch buffer and consumed by BLAS at once. The padded
input is a scratch too (its border is filled once). The arithmetic is the same as the generic
path's; only the order of the float sums across chunks differs (the filter gradient sums one
matmul per chunk).

Each public function takes the generic function's arguments and falls back to it where the
fast path does not apply (`fast_path` says which): grouped convolutions, integer dtypes, 1x1
windows that need no patch matrix, and empty shapes. Inputs are NHWC, never modified; every
result is a fresh array (never scratch).
"""

from __future__ import annotations

import functools

import numpy as np

from tensorweave.ops.nn_geometry import Window2D
from tensorweave.runtime.kernels.cpu import conv_impl as impl
from tensorweave.runtime.kernels.cpu.conv_scratch import chunks, flat_scratch, scratch


def fast_path(x_shape, w_shape, win: Window2D, dtype) -> bool:
    """Whether the fast path serves a conv of NHWC `x_shape` by `w_shape` (KH,KW,C/G,O)."""
    return (np.dtype(dtype).kind == "f" and x_shape[3] == w_shape[2] and
            not impl.is_pointwise(win) and min(x_shape) > 0 and min(w_shape) > 0 and
            win.out_h > 0 and win.out_w > 0)


def padded(x: np.ndarray, win: Window2D, fill=0) -> np.ndarray:
    """`impl.pad_nhwc(x, win, fill)` in a per-thread scratch buffer (`x` when no padding).

    The border is written once, when the buffer is made; each call copies only the interior.
    """
    n, h, w, c = x.shape
    hp, wp = impl.padded_hw(win)
    if not win.padded and (hp, wp) == (h, w):
        return x
    top, left = win.pad_top, win.pad_left
    rows, cols = min(h, hp - top), min(w, wp - left)
    xp = scratch(("pad", x.shape, top, left), (n, hp, wp, c), x.dtype, fill)
    xp[:, top:top + rows, left:left + cols] = x[:, :rows, :cols]
    return xp


def im2col_chunks(x: np.ndarray, win: Window2D):
    """Yields (n0, n1, cols): the (rows, KH*KW*C) patch matrix of images n0:n1, in scratch
    that the next step of the iteration overwrites."""
    n, _, _, c = x.shape
    view = impl.patches(padded(x, win), win)
    per_image = win.out_h * win.out_w * win.k_h * win.k_w * c
    parts = chunks(n, per_image * x.dtype.itemsize)
    buf = flat_scratch("cols", (parts[0][1] - parts[0][0]) * per_image, x.dtype)
    for n0, n1 in parts:
        cols = buf[:(n1 - n0) * per_image].reshape((n1 - n0,) + view.shape[1:])
        np.copyto(cols, view[n0:n1])
        yield n0, n1, cols.reshape(-1, win.k_h * win.k_w * c)


# -- forward and filter gradient ----------------------------------------------------------------
def conv2d(x: np.ndarray, w: np.ndarray, win: Window2D) -> np.ndarray:
    """`impl.conv2d`: x (N,H,W,C), w (KH,KW,C,O) → (N,OH,OW,O), one GEMM per chunk."""
    if not fast_path(x.shape, w.shape, win, x.dtype) or impl.few_channels(x, win):
        return impl.conv2d(x, w, win)
    out_c = w.shape[3]
    w2 = w.reshape(-1, out_c)
    y = np.empty((x.shape[0], win.out_h, win.out_w, out_c), np.result_type(x, w))
    for n0, n1, cols in im2col_chunks(x, win):
        np.dot(cols, w2, out=y[n0:n1].reshape(-1, out_c))
    return y


def conv2d_backprop_filter(x: np.ndarray, dy: np.ndarray, filter_shape, win: Window2D):
    """`impl.conv2d_backprop_filter`: the sum over chunks of cols.T @ dy."""
    if not fast_path(x.shape, filter_shape, win, x.dtype) or impl.few_channels(x, win):
        return impl.conv2d_backprop_filter(x, dy, filter_shape, win)
    out_c = dy.shape[3]
    total = None
    for n0, n1, cols in im2col_chunks(x, win):
        part = np.dot(cols.T, dy[n0:n1].reshape(-1, out_c))
        total = part if total is None else np.add(total, part, out=total)
    return total.reshape(filter_shape)


# -- input gradient -----------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def tap_plan(win: Window2D) -> tuple:
    """(full, rest): the tap (flat index) that covers the input one-to-one (None if none),
    and ((tap, (dst rows, dst cols, src rows, src cols)), ...) for the others that land."""
    full, rest = None, []
    for t in range(win.k_h * win.k_w):
        span = impl.tap_span(win, *divmod(t, win.k_w))
        if span == impl.FULL and full is None:
            full = t
        elif span == impl.FULL:
            rest.append((t, _whole(win)))
        elif span is not None:
            rest.append((t, span))
    return full, tuple(rest)


def _whole(win: Window2D) -> tuple:
    rows, cols = slice(0, win.in_h, 1), slice(0, win.in_w, 1)
    return rows, cols, rows, cols


def conv2d_backprop_input(dy: np.ndarray, w: np.ndarray, input_shape, win: Window2D):
    """`impl.conv2d_backprop_input`, a chunk of images at a time: the products dy @ W[tap].T
    of every tap, added at each tap's input positions (the tap that covers the input
    one-to-one, if any, written instead of added)."""
    if not fast_path(input_shape, w.shape, win, dy.dtype):
        return impl.conv2d_backprop_input(dy, w, input_shape, win)
    full, rest = tap_plan(win)
    dtype = np.result_type(dy, w)
    dx = np.empty(input_shape, dtype) if full is not None else np.zeros(input_shape, dtype)
    if input_shape[3] <= impl.FEW_CHANNELS:
        _products_one_gemm(dx, dy, w, win, full, rest)
    else:
        _products_per_tap(dx, dy, w, win, full, rest)
    return dx


def _products_per_tap(dx, dy, w, win, full, rest) -> None:
    """Tap-major products (one matmul per tap): each add then moves runs of OW*C values."""
    kh, kw, c, out_c = w.shape
    wt = w.reshape(kh * kw, c, out_c)
    w_rest = np.ascontiguousarray(wt[[t for t, _ in rest]].transpose(0, 2, 1))
    per_image = win.out_h * win.out_w * c
    parts = chunks(dx.shape[0], max(len(rest), 1) * per_image * dx.itemsize)
    buf = flat_scratch("taps", len(rest) * (parts[0][1] - parts[0][0]) * per_image, dx.dtype)
    for n0, n1 in parts:
        dy2 = dy[n0:n1].reshape(-1, out_c)
        if full is not None:
            np.dot(dy2, wt[full].T, out=dx[n0:n1].reshape(-1, c))
        if rest:
            blocks = buf[:len(rest) * (n1 - n0) * per_image]
            np.matmul(dy2, w_rest, out=blocks.reshape(len(rest), -1, c))
            blocks = blocks.reshape(len(rest), n1 - n0, win.out_h, win.out_w, c)
            for r, (_, span) in enumerate(rest):
                _add_at(dx[n0:n1], blocks[r], span)


def _products_one_gemm(dx, dy, w, win, full, rest) -> None:
    """One (rows, KH*KW*C) product for all taps: with few input channels a per-tap matmul
    would be a matrix-vector product."""
    kh, kw, c, out_c = w.shape
    taps = kh * kw * c
    w2t = w.reshape(taps, out_c).T
    per_image = win.out_h * win.out_w
    parts = chunks(dx.shape[0], per_image * taps * dx.itemsize)
    buf = flat_scratch("taps", (parts[0][1] - parts[0][0]) * per_image * taps, dx.dtype)
    for n0, n1 in parts:
        prod = buf[:(n1 - n0) * per_image * taps].reshape(-1, taps)
        np.dot(dy[n0:n1].reshape(-1, out_c), w2t, out=prod)
        prod = prod.reshape(n1 - n0, win.out_h, win.out_w, kh * kw, c)
        if full is not None:
            dx[n0:n1] = prod[:, :, :, full]
        for t, span in rest:
            _add_at(dx[n0:n1], prod[:, :, :, t], span)


def _add_at(dx: np.ndarray, block: np.ndarray, span: tuple) -> None:
    dst_r, dst_c, src_r, src_c = span
    dx[:, dst_r, dst_c] += block[:, src_r, src_c]
