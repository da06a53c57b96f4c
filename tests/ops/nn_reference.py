"""Straightforward numpy references for the nn ops (loops over windows, float64), written
independently of the kernels: their geometry is recomputed here from TF's definitions."""

from __future__ import annotations

import math

import numpy as np


# -- geometry -----------------------------------------------------------------------------------
def out_and_pad(size: int, k: int, stride: int, dilation: int, padding: str, pads=(0, 0)):
    """(output size, pad before) of one spatial dim, per TF's definition."""
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        out = math.ceil(size / stride)
        total = max((out - 1) * stride + eff - size, 0)
        return out, total // 2
    if padding == "EXPLICIT":
        return (size + pads[0] + pads[1] - eff) // stride + 1, pads[0]
    return (size - eff) // stride + 1, 0


def to_nhwc(x, fmt):
    return x if fmt == "NHWC" else np.transpose(x, (0, 2, 3, 1))


def from_nhwc(y, fmt):
    return y if fmt == "NHWC" else np.transpose(y, (0, 3, 1, 2))


def _hw(values, fmt):
    return (values[1], values[2]) if fmt == "NHWC" else (values[2], values[3])


def _geometry(in_hw, k_hw, strides, padding, dilations, explicit, fmt):
    sh, sw = _hw(strides, fmt)
    dh, dw = _hw(dilations or [1, 1, 1, 1], fmt)
    if explicit:
        pairs = [explicit[i:i + 2] for i in range(0, 8, 2)]
        ph, pw = _hw(pairs, fmt)
    else:
        ph = pw = (0, 0)
    oh, pt = out_and_pad(in_hw[0], k_hw[0], sh, dh, padding, ph)
    ow, pl = out_and_pad(in_hw[1], k_hw[1], sw, dw, padding, pw)
    return oh, ow, pt, pl, sh, sw, dh, dw


def _taps(i, j, k_hw, g):
    """(tap a, tap b, input row, input col) of output (i, j) under geometry g."""
    oh, ow, pt, pl, sh, sw, dh, dw = g
    for a in range(k_hw[0]):
        for b in range(k_hw[1]):
            yield a, b, i * sh + a * dh - pt, j * sw + b * dw - pl


# -- convolution --------------------------------------------------------------------------------
def conv2d(x, w, strides, padding, dilations=None, explicit=None, fmt="NHWC"):
    xh = to_nhwc(np.asarray(x, np.float64), fmt)
    n, h, wd, c = xh.shape
    kh, kw, cg, o = w.shape
    groups = c // cg
    og = o // groups
    g = _geometry((h, wd), (kh, kw), strides, padding, dilations, explicit, fmt)
    y = np.zeros((n, g[0], g[1], o))
    for i in range(g[0]):
        for j in range(g[1]):
            for a, b, r, q in _taps(i, j, (kh, kw), g):
                if 0 <= r < h and 0 <= q < wd:
                    for grp in range(groups):
                        xs = xh[:, r, q, grp * cg:(grp + 1) * cg]
                        y[:, i, j, grp * og:(grp + 1) * og] += xs @ w[a, b, :, grp * og:
                                                                      (grp + 1) * og]
    return from_nhwc(y, fmt).astype(x.dtype)


def conv2d_backprop_input(sizes, w, dy, strides, padding, dilations=None, explicit=None,
                          fmt="NHWC"):
    shape = to_nhwc(np.zeros(tuple(sizes)), fmt).shape
    n, h, wd, c = shape
    dyh = to_nhwc(np.asarray(dy, np.float64), fmt)
    kh, kw = w.shape[:2]
    g = _geometry((h, wd), (kh, kw), strides, padding, dilations, explicit, fmt)
    dx = np.zeros(shape)
    for i in range(g[0]):
        for j in range(g[1]):
            for a, b, r, q in _taps(i, j, (kh, kw), g):
                if 0 <= r < h and 0 <= q < wd:
                    dx[:, r, q, :] += dyh[:, i, j, :] @ w[a, b].T
    return from_nhwc(dx, fmt).astype(dy.dtype)


def conv2d_backprop_filter(x, filter_sizes, dy, strides, padding, dilations=None,
                           explicit=None, fmt="NHWC"):
    xh = to_nhwc(np.asarray(x, np.float64), fmt)
    dyh = to_nhwc(np.asarray(dy, np.float64), fmt)
    n, h, wd, c = xh.shape
    kh, kw = filter_sizes[:2]
    g = _geometry((h, wd), (kh, kw), strides, padding, dilations, explicit, fmt)
    dw = np.zeros(tuple(filter_sizes))
    for i in range(g[0]):
        for j in range(g[1]):
            for a, b, r, q in _taps(i, j, (kh, kw), g):
                if 0 <= r < h and 0 <= q < wd:
                    dw[a, b] += xh[:, r, q, :].T @ dyh[:, i, j, :]
    return dw.astype(x.dtype)


def depthwise_conv2d(x, f, strides, padding, dilations=None, fmt="NHWC"):
    xh = to_nhwc(np.asarray(x, np.float64), fmt)
    n, h, wd, c = xh.shape
    kh, kw, _, m = f.shape
    g = _geometry((h, wd), (kh, kw), strides, padding, dilations, None, fmt)
    y = np.zeros((n, g[0], g[1], c, m))
    for i in range(g[0]):
        for j in range(g[1]):
            for a, b, r, q in _taps(i, j, (kh, kw), g):
                if 0 <= r < h and 0 <= q < wd:
                    y[:, i, j] += xh[:, r, q, :, None] * f[a, b]
    return from_nhwc(y.reshape(n, g[0], g[1], c * m), fmt).astype(x.dtype)


# -- pooling ------------------------------------------------------------------------------------
def _pool_windows(x, ksize, strides, padding, fmt, explicit=None):
    """Yields (i, j, [(r, q) valid input positions in row-major window order]) and the
    NHWC input and output spatial size."""
    xh = to_nhwc(np.asarray(x), fmt)
    h, wd = xh.shape[1:3]
    g = _geometry((h, wd), _hw(ksize, fmt), strides, padding, None, explicit, fmt)
    wins = []
    for i in range(g[0]):
        for j in range(g[1]):
            taps = [(r, q) for _, _, r, q in _taps(i, j, _hw(ksize, fmt), g)
                    if 0 <= r < h and 0 <= q < wd]
            wins.append((i, j, taps))
    return xh, (g[0], g[1]), wins


def max_pool(x, ksize, strides, padding, fmt="NHWC", explicit=None):
    xh, (oh, ow), wins = _pool_windows(x, ksize, strides, padding, fmt, explicit)
    y = np.zeros((xh.shape[0], oh, ow, xh.shape[3]), x.dtype)
    for i, j, taps in wins:
        y[:, i, j] = np.max([xh[:, r, q] for r, q in taps], axis=0)
    return from_nhwc(y, fmt)


def avg_pool(x, ksize, strides, padding, fmt="NHWC"):
    xh, (oh, ow), wins = _pool_windows(x, ksize, strides, padding, fmt)
    y = np.zeros((xh.shape[0], oh, ow, xh.shape[3]))
    for i, j, taps in wins:
        y[:, i, j] = np.mean([xh[:, r, q] for r, q in taps], axis=0)
    return from_nhwc(y, fmt).astype(x.dtype)


def max_pool_grad(x, y, dy, ksize, strides, padding, fmt="NHWC", explicit=None):
    """Each output's gradient goes to the FIRST (row-major) max of its window."""
    xh, _, wins = _pool_windows(x, ksize, strides, padding, fmt, explicit)
    dyh = to_nhwc(dy, fmt)
    dx = np.zeros(xh.shape, np.float64)
    n, c = xh.shape[0], xh.shape[3]
    for i, j, taps in wins:
        for b in range(n):
            for ch in range(c):
                vals = [xh[b, r, q, ch] for r, q in taps]
                r, q = taps[int(np.argmax(vals))]
                dx[b, r, q, ch] += dyh[b, i, j, ch]
    return from_nhwc(dx, fmt).astype(dy.dtype)


def avg_pool_grad(sizes, dy, ksize, strides, padding, fmt="NHWC"):
    x = np.zeros(tuple(sizes), dy.dtype)
    xh, _, wins = _pool_windows(x, ksize, strides, padding, fmt)
    dyh = to_nhwc(np.asarray(dy, np.float64), fmt)
    dx = np.zeros(xh.shape)
    for i, j, taps in wins:
        for r, q in taps:
            dx[:, r, q] += dyh[:, i, j] / len(taps)
    return from_nhwc(dx, fmt).astype(dy.dtype)


# -- normalization, losses, misc ----------------------------------------------------------------
def _channels_last(x, fmt):
    return np.moveaxis(np.asarray(x, np.float64), 1, -1) if fmt.startswith("NC") else \
        np.asarray(x, np.float64)


def _channels_back(y, fmt):
    return np.moveaxis(y, -1, 1) if fmt.startswith("NC") else y


def batch_norm_train(x, scale, offset, eps, fmt="NHWC", factor=1.0, run_mean=None,
                     run_var=None):
    """(y, mean output, variance output, batch mean, biased batch variance)."""
    xc = _channels_last(x, fmt)
    axes = tuple(range(xc.ndim - 1))
    n = xc.size // xc.shape[-1]
    mean = xc.mean(axis=axes)
    var = xc.var(axis=axes)
    y = (xc - mean) / np.sqrt(var + eps) * scale + offset
    unbiased = var * n / (n - 1)
    if factor != 1.0:
        out_mean = (1 - factor) * run_mean + factor * mean
        out_var = (1 - factor) * run_var + factor * unbiased
    else:
        out_mean, out_var = mean, unbiased
    return _channels_back(y, fmt), out_mean, out_var, mean, var


def batch_norm_infer(x, scale, offset, mean, var, eps, fmt="NHWC"):
    xc = _channels_last(x, fmt)
    return _channels_back((xc - mean) / np.sqrt(var + eps) * scale + offset, fmt)


def log_softmax(z, axis=-1):
    z = np.asarray(z, np.float64)
    s = z - z.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def softmax(z, axis=-1):
    return np.exp(log_softmax(z, axis))


def lrn(x, radius, bias, alpha, beta):
    x = np.asarray(x, np.float64)
    c = x.shape[-1]
    out = np.zeros_like(x)
    for d in range(c):
        lo, hi = max(0, d - radius), min(c, d + radius + 1)
        sq = np.sum(x[..., lo:hi] ** 2, axis=-1)
        out[..., d] = x[..., d] / (bias + alpha * sq) ** beta
    return out


def top_k(x, k):
    """Per row: indices sorted by value descending, ties by lower index (Python's stable
    sort on the negated value)."""
    x = np.asarray(x)
    flat = x.reshape(-1, x.shape[-1])
    idx = np.array([sorted(range(len(row)), key=lambda i, row=row: -float(row[i]))[:k]
                    for row in flat]).reshape(x.shape[:-1] + (k,))
    return np.take_along_axis(x, idx, -1), idx.astype(np.int32)


def in_top_k(pred, targets, k):
    out = []
    for row, t in zip(pred, targets):
        ok = 0 <= t < len(row) and np.all(np.isfinite(row))
        out.append(bool(ok and np.sum(row > row[t]) < k))
    return np.array(out)
