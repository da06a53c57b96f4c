"""CPU kernels for the 3-D convolution and pooling ops (ops/nn_conv3d.py).

Everything runs in NDHWC (NCDHW is transposed in and out). Convolutions are sums over the
kernel's offsets of one strided slice of the padded input each, contracted with that
offset's [in, out] filter slice (einsum); their gradients scatter the same slices back.
Pooling reduces the same strided slices. Padding as TF: SAME pads (total // 2) before.
"""

from __future__ import annotations

import itertools

import numpy as np

from tensorweave.ops.nn_geometry import GeometryError, windowed_output_size
from tensorweave.runtime.kernels.cpu.array import invalid
from tensorweave.runtime.kernels.registry import register_kernel


def _spatial(v, fmt):
    return list(v[2:]) if fmt == "NCDHW" else list(v[1:4])


def _to_last(x, fmt):
    return np.transpose(x, (0, 2, 3, 4, 1)) if fmt == "NCDHW" else x


def _to_format(x, fmt):
    return np.transpose(x, (0, 4, 1, 2, 3)) if fmt == "NCDHW" else x


class _Geometry:
    """Output sizes and paddings of one op on one input shape (NDHWC)."""

    def __init__(self, in_spatial, window, strides, dilations, padding):
        try:
            dims = [windowed_output_size(int(n), int(k), int(s), int(d), padding)
                    for n, k, s, d in zip(in_spatial, window, strides, dilations)]
        except GeometryError as e:
            raise invalid(str(e)) from None
        self.out = [d[0] for d in dims]
        self.pads = [(d[1], d[2]) for d in dims]
        self.window, self.strides, self.dilations = window, strides, dilations

    def offsets(self):
        return itertools.product(*[range(k) for k in self.window])

    def window_slice(self, offset):
        """The slice of the padded input that offset `offset` of every window reads."""
        return (slice(None),) + tuple(
            slice(o * d, o * d + (n - 1) * s + 1, s)
            for o, d, n, s in zip(offset, self.dilations, self.out, self.strides)) + (
            slice(None),)

    def pad(self, x, value=0.0):
        return np.pad(x, [(0, 0)] + self.pads + [(0, 0)], constant_values=value)

    def crop(self, x_padded):
        return x_padded[(slice(None),) + tuple(
            slice(b, x_padded.shape[i + 1] - a) for i, (b, a) in enumerate(self.pads))]


def _conv_attrs(node):
    fmt = node.attr("data_format")
    return (fmt, _spatial(node.attr("strides"), fmt), _spatial(node.attr("dilations"), fmt),
            node.attr("padding"))


def _check_depth(x, w):
    if x.shape[-1] != w.shape[3]:
        raise invalid(f"Input depth must be evenly divisible by filter depth: "
                      f"{x.shape[-1]} vs {w.shape[3]}")


def conv3d_forward(x, w, strides, dilations, padding):
    _check_depth(x, w)
    g = _Geometry(x.shape[1:4], w.shape[:3], strides, dilations, padding)
    xp = g.pad(x)
    out = np.zeros((x.shape[0], *g.out, w.shape[4]), np.result_type(x, w))
    for off in g.offsets():
        out += np.einsum("ndhwc,co->ndhwo", xp[g.window_slice(off)], w[off])
    return out


def conv3d_input_grad(in_shape, w, dy, strides, dilations, padding):
    g = _Geometry(in_shape[1:4], w.shape[:3], strides, dilations, padding)
    dxp = np.zeros(g.pad(np.zeros((1, *in_shape[1:4], 1))).shape[1:4], dy.dtype)
    dxp = np.zeros((in_shape[0], *dxp.shape, in_shape[4]), dy.dtype)
    for off in g.offsets():
        dxp[g.window_slice(off)] += np.einsum("ndhwo,co->ndhwc", dy, w[off])
    return g.crop(dxp)


def conv3d_filter_grad(x, w_shape, dy, strides, dilations, padding):
    g = _Geometry(x.shape[1:4], w_shape[:3], strides, dilations, padding)
    xp = g.pad(x)
    dw = np.zeros(w_shape, dy.dtype)
    for off in g.offsets():
        dw[off] = np.einsum("ndhwc,ndhwo->co", xp[g.window_slice(off)], dy)
    return dw


@register_kernel("Conv3D")
def _conv3d(node):
    fmt, strides, dilations, padding = _conv_attrs(node)

    def run(x, w):
        x, w = _to_last(np.asarray(x), fmt), np.asarray(w)
        return _to_format(conv3d_forward(x, w, strides, dilations, padding).astype(x.dtype),
                          fmt)

    return run


def _nhwc_shape(sizes, fmt):
    s = [int(v) for v in np.asarray(sizes).reshape(-1)]
    return [s[0], s[2], s[3], s[4], s[1]] if fmt == "NCDHW" else s


@register_kernel("Conv3DBackpropInputV2")
def _conv3d_backprop_input(node):
    fmt, strides, dilations, padding = _conv_attrs(node)

    def run(sizes, w, dy):
        w, dy = np.asarray(w), _to_last(np.asarray(dy), fmt)
        dx = conv3d_input_grad(_nhwc_shape(sizes, fmt), w, dy, strides, dilations, padding)
        return _to_format(dx.astype(dy.dtype), fmt)

    return run


@register_kernel("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter(node):
    fmt, strides, dilations, padding = _conv_attrs(node)

    def run(x, sizes, dy):
        x, dy = _to_last(np.asarray(x), fmt), _to_last(np.asarray(dy), fmt)
        shape = [int(v) for v in np.asarray(sizes).reshape(-1)]
        return conv3d_filter_grad(x, shape, dy, strides, dilations, padding).astype(x.dtype)

    return run


# -- pooling -----------------------------------------------------------------------------------
def _pool_attrs(node):
    fmt = node.attr("data_format")
    return (fmt, _spatial(node.attr("ksize"), fmt), _spatial(node.attr("strides"), fmt),
            node.attr("padding"))


def _max_pool(x, ksize, strides, padding):
    g = _Geometry(x.shape[1:4], ksize, strides, [1, 1, 1], padding)
    xp = g.pad(x, -np.inf)
    out = np.full((x.shape[0], *g.out, x.shape[4]), -np.inf, x.dtype)
    for off in g.offsets():
        np.maximum(out, xp[g.window_slice(off)], out=out)
    return out, g


def _avg_counts(g, in_spatial):
    ones = g.pad(np.ones((1, *in_spatial, 1), np.float64))
    counts = np.zeros((1, *g.out, 1))
    for off in g.offsets():
        counts += ones[g.window_slice(off)]
    return counts


@register_kernel("MaxPool3D")
def _max_pool3d(node):
    fmt, ksize, strides, padding = _pool_attrs(node)

    def run(x):
        x = _to_last(np.asarray(x), fmt)
        return _to_format(_max_pool(x, ksize, strides, padding)[0], fmt)

    return run


@register_kernel("AvgPool3D")
def _avg_pool3d(node):
    fmt, ksize, strides, padding = _pool_attrs(node)

    def run(x):
        x = _to_last(np.asarray(x), fmt)
        g = _Geometry(x.shape[1:4], ksize, strides, [1, 1, 1], padding)
        xp = g.pad(x)
        total = np.zeros((x.shape[0], *g.out, x.shape[4]), np.float64)
        for off in g.offsets():
            total += xp[g.window_slice(off)]
        return _to_format((total / _avg_counts(g, x.shape[1:4])).astype(x.dtype), fmt)

    return run


@register_kernel("MaxPool3DGrad")
def _max_pool3d_grad(node):
    fmt, ksize, strides, padding = _pool_attrs(node)

    def run(x, y, dy):
        x, dy = _to_last(np.asarray(x), fmt), _to_last(np.asarray(dy), fmt)
        out, g = _max_pool(x, ksize, strides, padding)
        xp = g.pad(x, -np.inf)
        dxp = np.zeros(xp.shape, dy.dtype)
        taken = np.zeros(out.shape, bool)
        for off in g.offsets():  # NOTE: the first maximum of a window gets the gradient
            hit = (xp[g.window_slice(off)] == out) & ~taken
            dxp[g.window_slice(off)] += np.where(hit, dy, 0)
            taken |= hit
        return _to_format(g.crop(dxp), fmt)

    return run


@register_kernel("AvgPool3DGrad")
def _avg_pool3d_grad(node):
    fmt, ksize, strides, padding = _pool_attrs(node)

    def run(sizes, dy):
        shape = _nhwc_shape(sizes, fmt)
        dy = _to_last(np.asarray(dy), fmt)
        g = _Geometry(shape[1:4], ksize, strides, [1, 1, 1], padding)
        share = dy / _avg_counts(g, shape[1:4])
        dxp = np.zeros(g.pad(np.zeros(shape)).shape, np.float64)
        for off in g.offsets():
            dxp[g.window_slice(off)] += share
        return _to_format(g.crop(dxp).astype(dy.dtype), fmt)

    return run
