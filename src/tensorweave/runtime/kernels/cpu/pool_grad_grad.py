"""CPU kernels for MaxPoolGradGrad and MaxPoolGradGradV2 (see ops/nn_pool_grad_ops.py).

Each output element is `grad` at the first position (row-major in the window) where
`orig_input` equals the window's `orig_output`, as TF's CPU kernel picks it.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tensorweave.ops.nn_geometry import GeometryError, windowed_output_size
from tensorweave.ops.nn_pool_grad_ops import pool_output_dims
from tensorweave.runtime.kernels.cpu.array import fmt_shape, invalid
from tensorweave.runtime.kernels.registry import register_kernel


def max_pool_grad_grad(op: str, x, y, g, ksize, strides, padding: str, fmt: str):
    """The MaxPoolGradGrad result on numpy arrays (NHWC or NCHW).

    Raises:
      InvalidArgumentError: bad ranks/shapes or window geometry.
    """
    x, y, g = np.asarray(x), np.asarray(y), np.asarray(g)
    if x.ndim != 4 or y.ndim != 4 or g.ndim != 4:
        raise invalid(f"{op}: orig_input, orig_output and grad must be 4-dimensional")
    try:
        want = pool_output_dims(op, x.shape, list(ksize), list(strides), padding, fmt)
    except GeometryError as e:
        raise invalid(str(e)) from None
    if g.shape != x.shape or y.shape != want:
        raise invalid(f"{op}: expected orig_output of shape {fmt_shape(want)} and grad of "
                      f"shape {fmt_shape(x.shape)}, got {fmt_shape(y.shape)} and "
                      f"{fmt_shape(g.shape)}")
    if fmt == "NCHW":
        x, y, g = (np.transpose(a, (0, 2, 3, 1)) for a in (x, y, g))
        ksize, strides = [ksize[i] for i in (0, 2, 3, 1)], [strides[i] for i in (0, 2, 3, 1)]
    out = _nhwc(x, y, g, ksize, strides, padding)
    return np.ascontiguousarray(np.transpose(out, (0, 3, 1, 2))) if fmt == "NCHW" else out


def _nhwc(x, y, g, ksize, strides, padding: str):
    kh, kw, sh, sw = ksize[1], ksize[2], strides[1], strides[2]
    oh, top, bottom = windowed_output_size(x.shape[1], kh, sh, 1, padding)
    ow, left, right = windowed_output_size(x.shape[2], kw, sw, 1, padding)
    pads = ((0, 0), (top, bottom), (left, right), (0, 0))
    xp = np.pad(x, pads, constant_values=_lowest(x.dtype))
    gp = np.pad(g, pads)
    # windows: [n, oh, ow, c, kh, kw] -> [n, oh, ow, c, kh * kw]
    xw = sliding_window_view(xp, (kh, kw), axis=(1, 2))[:, ::sh, ::sw][:, :oh, :ow]
    gw = sliding_window_view(gp, (kh, kw), axis=(1, 2))[:, ::sh, ::sw][:, :oh, :ow]
    shape = xw.shape[:4] + (kh * kw,)
    first = np.argmax(xw.reshape(shape) == y[..., None], axis=-1)
    return np.take_along_axis(gw.reshape(shape), first[..., None], axis=-1)[..., 0]


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


@register_kernel("MaxPoolGradGrad")
def _max_pool_grad_grad(node):
    ksize, strides = list(node.attr("ksize")), list(node.attr("strides"))
    padding, fmt = node.attr("padding"), node.attr("data_format")

    def run(x, y, g):
        return max_pool_grad_grad("MaxPoolGradGrad", x, y, g, ksize, strides, padding, fmt)

    return run


@register_kernel("MaxPoolGradGradV2")
def _max_pool_grad_grad_v2(node):
    padding, fmt = node.attr("padding"), node.attr("data_format")

    def run(x, y, g, ksize, strides):
        ksize = [int(k) for k in np.reshape(ksize, -1)]
        strides = [int(s) for s in np.reshape(strides, -1)]
        return max_pool_grad_grad("MaxPoolGradGradV2", x, y, g, ksize, strides, padding, fmt)

    return run
