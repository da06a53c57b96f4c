"""NHWC convolution and pooling on numpy, written for speed (no kernel registration here).

Convolution is im2col + one BLAS matmul: a strided view of the (padded) input with shape
(N, OH, OW, KH, KW, C) is copied once into an (N*OH*OW, KH*KW*C) matrix and multiplied by the
filter reshaped to (KH*KW*C, O) (with few channels the transposed matrix is cheaper to build,
tap by tap). The filter gradient is `cols.T @ dy`; the input gradient is one batched matmul
giving dy @ W[tap].T per tap, added into the input by KH*KW strided adds (no np.add.at).
Pooling reduces the KH*KW strided slices of the input with one vectorized op each. Arrays
stay in their dtype (float32 stays float32); half precision is computed in float32.

float32 work goes to the compiled loops of `native` where they apply (the patch matrix and
its adjoint, built a few images at a time by `conv_native`; max pooling and its gradient; a
direct convolution for inputs of few channels); the numpy code here is then the fallback and
the reference the tests compare them with.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorweave.ops.nn_geometry import Window2D
from tensorweave.runtime.kernels.cpu import conv_native, native, parallel

_UPCAST = {np.dtype(np.float16): np.dtype(np.float32)}


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype arithmetic runs in: float16 (and bfloat16) run in float32."""
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        return np.dtype(np.float32)
    return _UPCAST.get(dtype, dtype)


def to_nhwc(x: np.ndarray, data_format: str) -> np.ndarray:
    return x if data_format == "NHWC" else x.transpose(0, 2, 3, 1)


def from_nhwc(y: np.ndarray, data_format: str) -> np.ndarray:
    return y if data_format == "NHWC" else np.ascontiguousarray(y.transpose(0, 3, 1, 2))


# -- padding and windows ------------------------------------------------------------------------
def pad_nhwc(x: np.ndarray, win: Window2D, fill=0) -> np.ndarray:
    """`x` padded by the window's pads (and to cover every window); `x` itself when none."""
    n, h, w, c = x.shape
    hp, wp = padded_hw(win)
    if not win.padded and (hp, wp) == (h, w):
        return x
    out = np.full((n, hp, wp, c), fill, x.dtype)
    rows = min(h, hp - win.pad_top)
    cols = min(w, wp - win.pad_left)
    out[:, win.pad_top:win.pad_top + rows, win.pad_left:win.pad_left + cols] = x[:, :rows, :cols]
    return out


def padded_hw(win: Window2D) -> tuple[int, int]:
    """The padded extent that holds every window (VALID may leave trailing input unused)."""
    need_h = (win.out_h - 1) * win.stride_h + (win.k_h - 1) * win.dil_h + 1
    need_w = (win.out_w - 1) * win.stride_w + (win.k_w - 1) * win.dil_w + 1
    return (max(win.in_h + win.pad_top + win.pad_bottom, need_h),
            max(win.in_w + win.pad_left + win.pad_right, need_w))


def patches(xp: np.ndarray, win: Window2D) -> np.ndarray:
    """Read-only view (N, OH, OW, KH, KW, C) of the windows of padded NHWC `xp`."""
    n, _, _, c = xp.shape
    sn, sh, sw, sc = xp.strides
    shape = (n, win.out_h, win.out_w, win.k_h, win.k_w, c)
    strides = (sn, sh * win.stride_h, sw * win.stride_w, sh * win.dil_h, sw * win.dil_w, sc)
    return as_strided(xp, shape, strides, writeable=False)


def window_slice(win: Window2D, i: int, j: int) -> tuple[slice, slice]:
    """Rows and columns of the padded input seen by window tap (i, j) across all outputs."""
    r0, c0 = i * win.dil_h, j * win.dil_w
    return (slice(r0, r0 + win.stride_h * (win.out_h - 1) + 1, win.stride_h),
            slice(c0, c0 + win.stride_w * (win.out_w - 1) + 1, win.stride_w))


def _is_pointwise(win: Window2D) -> bool:
    return win.k_h == win.k_w == 1 and not win.padded


def im2col(x: np.ndarray, win: Window2D) -> np.ndarray:
    """The (N*OH*OW, KH*KW*C) patch matrix of NHWC `x` (a view when no copy is needed)."""
    n, _, _, c = x.shape
    if _is_pointwise(win):
        if win.stride_h != 1 or win.stride_w != 1 or \
                (win.out_h, win.out_w) != (x.shape[1], x.shape[2]):
            x = x[:, :win.stride_h * (win.out_h - 1) + 1:win.stride_h,
                  :win.stride_w * (win.out_w - 1) + 1:win.stride_w]
        return np.ascontiguousarray(x).reshape(-1, c)
    if native.usable(x):
        return native.im2col(x, win)
    cols = np.ascontiguousarray(patches(pad_nhwc(x, win), win))
    return cols.reshape(n * win.out_h * win.out_w, win.k_h * win.k_w * c)


def col2im(dcols: np.ndarray, win: Window2D, n: int, c: int) -> np.ndarray:
    """Adjoint of `im2col`: sums (N*OH*OW, KH*KW*C) patch gradients into an NHWC input."""
    if _is_pointwise(win) and (win.stride_h, win.stride_w) == (1, 1) and \
            (win.out_h, win.out_w) == (win.in_h, win.in_w):
        return dcols.reshape(n, win.in_h, win.in_w, c)
    if native.usable(dcols):
        return native.col2im(dcols, win, n, c)
    d6 = dcols.reshape(n, win.out_h, win.out_w, win.k_h, win.k_w, c)
    hp, wp = padded_hw(win)
    dxp = np.zeros((n, hp, wp, c), dcols.dtype)
    for i in range(win.k_h):
        for j in range(win.k_w):
            rows, cols = window_slice(win, i, j)
            dxp[:, rows, cols] += d6[:, :, :, i, j]
    return crop(dxp, win)


def crop(xp: np.ndarray, win: Window2D) -> np.ndarray:
    """The unpadded NHWC region of a padded array (contiguous)."""
    if xp.shape[1:3] == (win.in_h, win.in_w):
        return xp
    t, left = win.pad_top, win.pad_left
    out = xp[:, t:t + win.in_h, left:left + win.in_w]
    if out.shape[1:3] != (win.in_h, win.in_w):  # window never reached the input's tail
        full = np.zeros((xp.shape[0], win.in_h, win.in_w, xp.shape[3]), xp.dtype)
        full[:, :out.shape[1], :out.shape[2]] = out
        return full
    return np.ascontiguousarray(out)


# -- convolution --------------------------------------------------------------------------------
def conv2d(x: np.ndarray, w: np.ndarray, win: Window2D, bias=None, act=None) -> np.ndarray:
    """NHWC conv: x (N,H,W,C), w (KH,KW,C/G,O) → (N,OH,OW,O); G groups when C > w's depth.
    With `bias` (O,) and/or `act` (None, "Relu", "Relu6": float32 only) returns
    act(conv + bias), fused into the convolution where the direct loop runs."""
    n, _, _, c = x.shape
    groups = c // w.shape[2]
    out_c = w.shape[3]
    fast = groups == 1 and native.usable(x, w) and (bias is None or native.usable(bias))
    if fast and _few_channels(x, win):
        return native.conv_direct(x, w, win, bias, act)
    if fast and not _is_pointwise(win):
        return conv_native.conv2d(x, w, win, bias, act)
    if groups == 1 and _few_channels(x, win):
        y = parallel.matmul(im2col_t(x, win).T, w.reshape(-1, out_c))
    elif groups == 1:
        y = parallel.matmul(im2col(x, win), w.reshape(-1, out_c))
    else:
        y = _grouped(im2col(x, win), w, groups, lambda ci, wi: np.dot(ci, wi))
    y = y.reshape(n, win.out_h, win.out_w, out_c)
    return y if bias is None and act is None else bias_act(y, bias, act)


def bias_act(y: np.ndarray, bias, act) -> np.ndarray:
    """act(y + bias) over the last axis, in place on the fresh float32 `y`."""
    if native.usable(y) and (bias is None or native.usable(bias)):
        return native.bias_act(y, bias, act)
    if bias is not None:
        np.add(y, bias, out=y)
    if act is not None:
        np.maximum(y, 0, out=y)
    if act == "Relu6":
        np.minimum(y, 6, out=y)
    return y


def _few_channels(x: np.ndarray, win: Window2D) -> bool:
    """Whether the transposed patch matrix is cheaper to build (runs of OW, not of C)."""
    return x.shape[3] <= 4 and not _is_pointwise(win)


def im2col_t(x: np.ndarray, win: Window2D) -> np.ndarray:
    """The transposed patch matrix (KH*KW*C, N*OH*OW), built tap by tap from a channel-first
    copy of x: long contiguous runs when C is small (e.g. a grayscale input layer)."""
    n, _, _, c = x.shape
    xp = pad_nhwc(x, win)
    xc = np.moveaxis(xp, 3, 0)
    if c > 1:
        xc = np.ascontiguousarray(xc)
    out = np.empty((win.k_h, win.k_w, c, n, win.out_h, win.out_w), x.dtype)
    for i in range(win.k_h):
        for j in range(win.k_w):
            rows, cols = window_slice(win, i, j)
            out[i, j] = xc[:, :, rows, cols]
    return out.reshape(win.k_h * win.k_w * c, -1)


def _grouped(cols, w, groups, fn):
    kh, kw, cg, out_c = w.shape
    og = out_c // groups
    c4 = cols.reshape(cols.shape[0], kh * kw, groups, cg)
    parts = [fn(np.ascontiguousarray(c4[:, :, g]).reshape(cols.shape[0], -1),
                w[..., g * og:(g + 1) * og].reshape(-1, og)) for g in range(groups)]
    return np.concatenate(parts, axis=1)


def conv2d_backprop_filter(x: np.ndarray, dy: np.ndarray, filter_shape, win: Window2D):
    """d(conv2d)/d(filter): cols.T @ dy, shaped `filter_shape` (KH,KW,C/G,O)."""
    out_c = dy.shape[3]
    dy2 = dy.reshape(-1, out_c)
    groups = x.shape[3] // filter_shape[2]
    fast = groups == 1 and native.usable(x, dy)
    if fast and _few_channels(x, win):
        return native.conv_filter_direct(x, dy, win)
    if fast and not _is_pointwise(win):
        return conv_native.backprop_filter(x, dy, win)
    if groups == 1 and _few_channels(x, win):
        return parallel.matmul(im2col_t(x, win), dy2).reshape(filter_shape)
    cols = im2col(x, win)
    if groups == 1:
        return parallel.matmul(cols.T, dy2).reshape(filter_shape)
    kh, kw, cg, _ = filter_shape
    og = out_c // groups
    c4 = cols.reshape(cols.shape[0], kh * kw, groups, cg)
    parts = [np.dot(c4[:, :, g].reshape(cols.shape[0], -1).T, dy2[:, g * og:(g + 1) * og])
             for g in range(groups)]
    return np.concatenate([p.reshape(kh, kw, cg, og) for p in parts], axis=3)


def conv2d_backprop_input(dy: np.ndarray, w: np.ndarray, input_shape, win: Window2D):
    """d(conv2d)/d(input): per filter tap, dy @ W[tap].T added into the input at the tap's
    (clipped) positions.

    One batched matmul writes the (KH*KW, N*OH*OW, C) tap-major products, so each add moves
    long contiguous runs; the adds go straight into the unpadded result, starting from a copy
    of a tap that covers all of it when there is one (the centre tap of a stride-1 SAME conv).
    """
    n, _, _, c = input_shape
    kh, kw, cg, out_c = w.shape
    groups = c // cg
    dy2 = dy.reshape(-1, out_c)
    if groups == 1 and _is_pointwise(win):
        return col2im(parallel.matmul(dy2, w.reshape(-1, out_c).T), win, n, c)
    if groups == 1 and native.usable(dy, w):
        return conv_native.backprop_input(dy, w, input_shape, win)
    blocks = _tap_products(dy2, w, groups).reshape(kh, kw, n, win.out_h, win.out_w, c)
    taps = [(i, j, _tap_span(win, i, j)) for i in range(kh) for j in range(kw)]
    full = next((t for t in taps if t[2] == _FULL), None)
    if full is not None:
        dx = blocks[full[0], full[1]].copy()
        taps.remove(full)
    else:
        dx = np.zeros((n, win.in_h, win.in_w, c), dy.dtype)
    for i, j, span in taps:
        if span is not None:
            dst_r, dst_c, src_r, src_c = span
            dx[:, dst_r, dst_c] += blocks[i, j][:, src_r, src_c]
    return dx


_FULL = "full"


def _tap_span(win: Window2D, i: int, j: int):
    """Where tap (i, j) lands in the unpadded input: (dst rows, dst cols, src rows, src cols)
    slices, `_FULL` when it covers the input one-to-one, None when it never does."""
    rows = _axis_span(win.out_h, win.stride_h, i * win.dil_h - win.pad_top, win.in_h)
    cols = _axis_span(win.out_w, win.stride_w, j * win.dil_w - win.pad_left, win.in_w)
    if rows is None or cols is None:
        return None
    if rows[0] == slice(0, win.in_h, 1) == rows[1] and cols[0] == slice(0, win.in_w, 1) \
            == cols[1]:
        return _FULL
    return rows[0], cols[0], rows[1], cols[1]


def _axis_span(out: int, stride: int, offset: int, size: int):
    """Outputs o in [lo, hi) with 0 <= o * stride + offset < size, as (input slice, output
    slice); None when there are none."""
    lo = max(0, -(offset // stride))                 # ceil(-offset / stride), at least 0
    hi = min(out, (size - 1 - offset) // stride + 1)
    if hi <= lo:
        return None
    start = lo * stride + offset
    return slice(start, start + (hi - lo - 1) * stride + 1, stride), slice(lo, hi, 1)


def _tap_products(dy2: np.ndarray, w: np.ndarray, groups: int) -> np.ndarray:
    """(KH*KW, M, C): dy2 @ W[i, j].T for every tap, per group when grouped."""
    kh, kw, cg, out_c = w.shape
    wt = w.reshape(kh * kw, cg, out_c)
    if groups == 1:
        return np.matmul(dy2, wt.transpose(0, 2, 1))
    og = out_c // groups
    parts = [np.matmul(dy2[:, g * og:(g + 1) * og], wt[:, :, g * og:(g + 1) * og]
                       .transpose(0, 2, 1)) for g in range(groups)]
    return np.concatenate(parts, axis=2)


# -- depthwise convolution ----------------------------------------------------------------------
def depthwise_conv2d(x: np.ndarray, f: np.ndarray, win: Window2D) -> np.ndarray:
    """x (N,H,W,C), f (KH,KW,C,M) → (N,OH,OW,C*M): channel c convolved with f[..., c, m]."""
    n, _, _, c = x.shape
    m = f.shape[3]
    xp = pad_nhwc(x, win)
    out = np.zeros((n, win.out_h, win.out_w, c, m), x.dtype)
    for i in range(win.k_h):
        for j in range(win.k_w):
            rows, cols = window_slice(win, i, j)
            out += xp[:, rows, cols, :, None] * f[i, j]
    return out.reshape(n, win.out_h, win.out_w, c * m)


def depthwise_backprop_input(dy: np.ndarray, f: np.ndarray, input_shape, win: Window2D):
    n, _, _, c = input_shape
    dy5 = dy.reshape(n, win.out_h, win.out_w, c, f.shape[3])
    hp, wp = padded_hw(win)
    dxp = np.zeros((n, hp, wp, c), dy.dtype)
    for i in range(win.k_h):
        for j in range(win.k_w):
            rows, cols = window_slice(win, i, j)
            dxp[:, rows, cols] += np.einsum("nhwcm,cm->nhwc", dy5, f[i, j])
    return crop(dxp, win)


def depthwise_backprop_filter(x: np.ndarray, dy: np.ndarray, filter_shape, win: Window2D):
    kh, kw, c, m = filter_shape
    xp = pad_nhwc(x, win)
    dy5 = dy.reshape(dy.shape[0], win.out_h, win.out_w, c, m)
    df = np.zeros(filter_shape, dy.dtype)
    for i in range(kh):
        for j in range(kw):
            rows, cols = window_slice(win, i, j)
            df[i, j] = np.einsum("nhwc,nhwcm->cm", xp[:, rows, cols], dy5)
    return df


# -- pooling ------------------------------------------------------------------------------------
def _lowest(dtype: np.dtype):
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def max_pool(x: np.ndarray, win: Window2D) -> np.ndarray:
    """Max over each window; padding never wins (it is -inf)."""
    if native.usable(x):
        return native.max_pool(x, win)
    xp = pad_nhwc(x, win, _lowest(x.dtype))
    out = None
    for i in range(win.k_h):
        for j in range(win.k_w):
            rows, cols = window_slice(win, i, j)
            v = xp[:, rows, cols]
            out = v.copy() if out is None else np.maximum(out, v, out=out)
    return out


def max_pool_grad(x: np.ndarray, y: np.ndarray, dy: np.ndarray, win: Window2D) -> np.ndarray:
    """Routes each output gradient to the first input (row-major in its window) equal to the
    window's max, as TF's CPU kernel does."""
    if native.usable(x, y, dy):
        return native.max_pool_grad(x, y, dy, win)
    xp = pad_nhwc(x, win, _lowest(x.dtype))
    tiled = _tiles_exactly(win, xp.shape)
    dxp = np.empty(xp.shape, dy.dtype) if tiled else np.zeros(xp.shape, dy.dtype)
    disjoint = win.stride_h >= win.k_h and win.stride_w >= win.k_w
    free = None                            # windows whose max was not routed yet
    last = win.k_h * win.k_w - 1
    for t in range(last + 1):
        rows, cols = window_slice(win, *divmod(t, win.k_w))
        if t == last:
            hit = free if free is not None else np.ones(y.shape, bool)
        else:
            hit = np.equal(xp[:, rows, cols], y)
            if free is None:
                free = ~hit
            else:
                hit &= free
                np.bitwise_xor(free, hit, out=free)    # hit ⊆ free: removes the routed ones
        if disjoint:
            np.multiply(dy, hit, out=dxp[:, rows, cols])
        else:
            dxp[:, rows, cols] += dy * hit
    return crop(dxp, win)


def _tiles_exactly(win: Window2D, padded_shape) -> bool:
    """Windows partition the padded input: every element is written exactly once."""
    return (win.stride_h == win.k_h and win.stride_w == win.k_w and
            win.out_h * win.k_h == padded_shape[1] and win.out_w * win.k_w == padded_shape[2])


def _valid_counts(win: Window2D, dtype) -> np.ndarray | float:
    """Per-output count of non-padding elements (TF's AvgPool excludes padding)."""
    if not win.padded:
        return float(win.k_h * win.k_w)

    def axis(out, stride, k, pad, size):
        start = np.arange(out) * stride - pad
        return np.minimum(start + k, size) - np.maximum(start, 0)

    rows = axis(win.out_h, win.stride_h, win.k_h, win.pad_top, win.in_h)
    cols = axis(win.out_w, win.stride_w, win.k_w, win.pad_left, win.in_w)
    return np.outer(rows, cols).astype(dtype)[:, :, None]


def avg_pool(x: np.ndarray, win: Window2D) -> np.ndarray:
    xp = pad_nhwc(x, win, 0)
    out = None
    for i in range(win.k_h):
        for j in range(win.k_w):
            rows, cols = window_slice(win, i, j)
            v = xp[:, rows, cols]
            out = v.copy() if out is None else np.add(out, v, out=out)
    out /= _valid_counts(win, x.dtype)
    return out


def avg_pool_grad(dy: np.ndarray, input_shape, win: Window2D) -> np.ndarray:
    n, _, _, c = input_shape
    g = dy / _valid_counts(win, dy.dtype)
    hp, wp = padded_hw(win)
    dxp = np.zeros((n, hp, wp, c), dy.dtype)
    for i in range(win.k_h):
        for j in range(win.k_w):
            rows, cols = window_slice(win, i, j)
            dxp[:, rows, cols] += g
    return crop(dxp, win)
