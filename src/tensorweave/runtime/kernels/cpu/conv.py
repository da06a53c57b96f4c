"""CPU kernels for convolution and pooling ops (the math lives in `conv_impl.py`).

Each factory reads the node's attrs once; per step a kernel converts to NHWC (a view for
NCHW), resolves the window geometry (cached per input shape) and makes the few numpy calls of
`conv_impl`. Half precision is computed in float32 and cast back to the op's dtype.
"""

from __future__ import annotations

import numpy as np

from tensorweave import errors
from tensorweave.ops.nn_geometry import spatial_axes, window_2d
from tensorweave.runtime.kernels.cpu import conv_impl as impl
from tensorweave.runtime.kernels.cpu import native
from tensorweave.runtime.kernels.registry import register_kernel


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


class _Windows:
    """Resolves (and caches) the Window2D of a node for given spatial input/filter sizes."""

    def __init__(self, attrs: dict):
        self._attrs = attrs
        self._cache: dict = {}

    def __call__(self, in_hw, k_hw):
        key = (tuple(in_hw), tuple(k_hw))
        win = self._cache.get(key)
        if win is None:
            win = self._cache[key] = window_2d(key[0], key[1], self._attrs)
        return win


class _Conv:
    """What every conv-like factory precomputes: format, dtypes, windows."""

    def __init__(self, node, op: str):
        self.op = op
        self.fmt = node.attr("data_format") or "NHWC"
        self.dtype = node.output_dtypes[0].np_dtype
        self.cdtype = impl.compute_dtype(self.dtype)
        attrs = dict(node.attrs)
        self.windows = _Windows(attrs)
        _check_strides(op, attrs, self.fmt)

    def nhwc(self, x) -> np.ndarray:
        x = np.asarray(x)
        if x.ndim != 4:
            raise _invalid(f"{self.op}: input must be 4-dimensional{list(x.shape)}")
        return impl.to_nhwc(x.astype(self.cdtype, copy=False), self.fmt)

    def out(self, y: np.ndarray) -> np.ndarray:
        return impl.from_nhwc(y, self.fmt).astype(self.dtype, copy=False)

    def sizes(self, sizes, batch: int, depth: int) -> tuple:
        """NHWC shape from an `input_sizes` tensor (4 values, or 2 spatial ones)."""
        s = [int(v) for v in np.asarray(sizes).reshape(-1)]
        if len(s) == 2:
            return (batch, s[0], s[1], depth)
        if len(s) != 4:
            raise _invalid(f"{self.op} requires input_sizes to contain 4 values or 2 values, "
                           f"but got: {len(s)}")
        h, w, c = spatial_axes(self.fmt)
        return (s[0], s[h], s[w], s[c])


def _check_strides(op: str, attrs: dict, fmt: str) -> None:
    _, _, c = spatial_axes(fmt)
    for name in ("strides", "dilations"):
        v = attrs.get(name) or [1, 1, 1, 1]
        if len(v) == 4 and (v[0] != 1 or v[c] != 1):
            raise _invalid(f"{op}: current implementation does not yet support {name} in the "
                           f"batch and depth dimensions.")


def _check_filter(op: str, x_depth: int, w: np.ndarray) -> None:
    if w.ndim != 4:
        raise _invalid(f"{op}: filter must be 4-dimensional: {list(w.shape)}")
    if w.shape[2] == 0 or x_depth % w.shape[2]:
        raise _invalid(f"{op}: input depth must be evenly divisible by filter depth: "
                       f"{x_depth} vs {w.shape[2]}")


def _check_out(op: str, dy: np.ndarray, win) -> None:
    if dy.shape[1:3] != (win.out_h, win.out_w):
        raise _invalid(f"{op}: Size of out_backprop doesn't match computed: actual = "
                       f"{list(dy.shape[1:3])}, computed = {[win.out_h, win.out_w]}")


# -- Conv2D -------------------------------------------------------------------------------------
@register_kernel("Conv2D")
def _conv2d(node):
    c = _Conv(node, "Conv2D")

    def run(x, w, bias=None, act=None):
        """conv2d(x, w); `_FusedConv2D` passes its float32 bias and activation along."""
        xh = c.nhwc(x)
        w = np.asarray(w, c.cdtype)
        _check_filter("Conv2D", xh.shape[3], w)
        if bias is not None and bias.shape != (w.shape[3],):
            raise _invalid(f"Must provide as many biases as the channel dimension of the output "
                           f"tensor: {list(bias.shape)} vs. {w.shape[3]}")
        return c.out(impl.conv2d(xh, w, c.windows(xh.shape[1:3], w.shape[:2]), bias, act))

    return run


@register_kernel("Conv2DBackpropInput")
def _conv2d_backprop_input(node):
    c = _Conv(node, "Conv2DBackpropInput")

    def run(input_sizes, w, dy):
        dyh = c.nhwc(dy)
        w = np.asarray(w, c.cdtype)
        shape = c.sizes(input_sizes, dyh.shape[0], w.shape[2])
        _check_filter(c.op, shape[3], w)
        win = c.windows(shape[1:3], w.shape[:2])
        _check_out(c.op, dyh, win)
        return c.out(impl.conv2d_backprop_input(dyh, w, shape, win))

    return run


@register_kernel("Conv2DBackpropFilter")
def _conv2d_backprop_filter(node):
    c = _Conv(node, "Conv2DBackpropFilter")

    def run(x, filter_sizes, dy):
        xh, dyh = c.nhwc(x), c.nhwc(dy)
        fshape = tuple(int(v) for v in np.asarray(filter_sizes).reshape(-1))
        if len(fshape) != 4:
            raise _invalid(f"{c.op}: filter_sizes must contain 4 values, got {list(fshape)}")
        win = c.windows(xh.shape[1:3], fshape[:2])
        _check_out(c.op, dyh, win)
        df = impl.conv2d_backprop_filter(xh, dyh, fshape, win)
        return df.astype(c.dtype, copy=False)

    return run


# -- DepthwiseConv2dNative ----------------------------------------------------------------------
@register_kernel("DepthwiseConv2dNative")
def _depthwise(node):
    c = _Conv(node, "DepthwiseConv2dNative")

    def run(x, f):
        xh = c.nhwc(x)
        f = np.asarray(f, c.cdtype)
        if f.ndim != 4 or f.shape[2] != xh.shape[3]:
            raise _invalid(f"input and filter must have the same depth: {xh.shape[3]} vs "
                           f"{f.shape[2] if f.ndim == 4 else list(f.shape)}")
        return c.out(impl.depthwise_conv2d(xh, f, c.windows(xh.shape[1:3], f.shape[:2])))

    return run


@register_kernel("DepthwiseConv2dNativeBackpropInput")
def _depthwise_backprop_input(node):
    c = _Conv(node, "DepthwiseConv2dNativeBackpropInput")

    def run(input_sizes, f, dy):
        dyh = c.nhwc(dy)
        f = np.asarray(f, c.cdtype)
        shape = c.sizes(input_sizes, dyh.shape[0], f.shape[2])
        win = c.windows(shape[1:3], f.shape[:2])
        _check_out(c.op, dyh, win)
        return c.out(impl.depthwise_backprop_input(dyh, f, shape, win))

    return run


@register_kernel("DepthwiseConv2dNativeBackpropFilter")
def _depthwise_backprop_filter(node):
    c = _Conv(node, "DepthwiseConv2dNativeBackpropFilter")

    def run(x, filter_sizes, dy):
        xh, dyh = c.nhwc(x), c.nhwc(dy)
        fshape = tuple(int(v) for v in np.asarray(filter_sizes).reshape(-1))
        win = c.windows(xh.shape[1:3], fshape[:2])
        _check_out(c.op, dyh, win)
        df = impl.depthwise_backprop_filter(xh, dyh, fshape, win)
        return df.astype(c.dtype, copy=False)

    return run


# -- pooling ------------------------------------------------------------------------------------
class _Pool(_Conv):
    """Pooling geometry: the window is `ksize`, given as an attr or (V2 ops) per step."""

    def __init__(self, node, op: str):
        super().__init__(node, op)
        if self.fmt not in ("NHWC", "NCHW"):
            raise errors.UnimplementedError(None, None, f"{op} does not support data_format "
                                                        f"{self.fmt} on CPU")
        self.ksize = node.attr("ksize")
        if self.ksize is not None:
            self._check_ksize(self.ksize)

    def _check_ksize(self, ksize) -> None:
        _, _, c = spatial_axes(self.fmt)
        if ksize[0] != 1:
            raise _invalid("Pooling is not yet supported on the batch dimension.")
        if ksize[c] != 1:
            raise errors.UnimplementedError(None, None, f"{self.op}: pooling across depth is "
                                                        f"not supported.")

    def window(self, in_hw, ksize=None, strides=None):
        if ksize is None:
            k = self.ksize
            h, w, _ = spatial_axes(self.fmt)
            return self.windows(in_hw, (k[h], k[w]))
        ksize = [int(v) for v in np.asarray(ksize).reshape(-1)]
        strides = [int(v) for v in np.asarray(strides).reshape(-1)]
        if len(ksize) != 4 or len(strides) != 4:
            raise _invalid("Sliding window ksize and strides fields must specify 4 dimensions")
        self._check_ksize(ksize)
        h, w, _ = spatial_axes(self.fmt)
        return window_2d(in_hw, (ksize[h], ksize[w]),
                         {**self.windows._attrs, "strides": strides})


@register_kernel("MaxPool")
def _max_pool(node):
    p = _Pool(node, "MaxPool")

    def run(x):
        xh = p.nhwc(x)
        return p.out(impl.max_pool(xh, p.window(xh.shape[1:3])))

    return run


@register_kernel("MaxPoolV2")
def _max_pool_v2(node):
    p = _Pool(node, "MaxPoolV2")

    def run(x, ksize, strides):
        xh = p.nhwc(x)
        return p.out(impl.max_pool(xh, p.window(xh.shape[1:3], ksize, strides)))

    return run


@register_kernel("AvgPool")
def _avg_pool(node):
    p = _Pool(node, "AvgPool")

    def run(x):
        xh = p.nhwc(x)
        return p.out(impl.avg_pool(xh, p.window(xh.shape[1:3])))

    return run


def _max_pool_grad_run(p: _Pool, x, y, dy, ksize=None, strides=None, relu=False):
    """MaxPoolGrad; with `relu`, times (x > 0) (ReluGrad against the pooled Relu output)."""
    xh, yh, dyh = p.nhwc(x), p.nhwc(y), p.nhwc(dy)
    win = p.window(xh.shape[1:3], ksize, strides)
    if yh.shape != dyh.shape or yh.shape[1:3] != (win.out_h, win.out_w):
        raise _invalid(f"{p.op}: expected orig_output and grad of shape "
                       f"{[xh.shape[0], win.out_h, win.out_w, xh.shape[3]]} (NHWC), got "
                       f"{list(yh.shape)} and {list(dyh.shape)}")
    if relu and native.usable(xh, yh, dyh):
        return p.out(native.max_pool_grad(xh, yh, dyh, win, relu_of=xh))
    dx = impl.max_pool_grad(xh, yh, dyh, win)
    return p.out(dx * (xh > 0) if relu else dx)


@register_kernel("MaxPoolGrad")
def _max_pool_grad(node):
    p = _Pool(node, "MaxPoolGrad")
    return lambda x, y, dy: _max_pool_grad_run(p, x, y, dy)


@register_kernel("_TwFusedMaxPoolGradReluGrad")
def _max_pool_grad_relu_grad(node):
    p = _Pool(node, "_TwFusedMaxPoolGradReluGrad")
    return lambda x, y, dy: _max_pool_grad_run(p, x, y, dy, relu=True)


@register_kernel("MaxPoolGradV2")
def _max_pool_grad_v2(node):
    p = _Pool(node, "MaxPoolGradV2")
    return lambda x, y, dy, ksize, strides: _max_pool_grad_run(p, x, y, dy, ksize, strides)


@register_kernel("AvgPoolGrad")
def _avg_pool_grad(node):
    p = _Pool(node, "AvgPoolGrad")

    def run(orig_input_shape, dy):
        dyh = p.nhwc(dy)
        shape = p.sizes(orig_input_shape, dyh.shape[0], dyh.shape[3])
        win = p.window(shape[1:3])
        _check_out(p.op, dyh, win)
        return p.out(impl.avg_pool_grad(dyh, shape, win))

    return run
