"""Convolution and pooling ops: Conv2D (+ backprops), DepthwiseConv2dNative (+ backprops),
MaxPool/AvgPool (+ V2 and grads), and the `tf.nn` wrappers built on them.

Shape functions follow TF's (Conv2DShapeWithExplicitPadding, MaxPoolShape, ...), including
its messages, e.g. "Depth of input (3) is not a multiple of input depth of filter (4)".
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.nn_geometry import (
    GeometryError,
    check_explicit_padding,
    check_list_attr,
    spatial_axes,
    windowed_output_size,
)
from tensorweave.ops.nn_util import channel_index, convert_padding, get_sequence
from tensorweave.ops.op_scope import OpScope
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

_FORMAT = "data_format: {'NHWC', 'NCHW'} = 'NHWC'"
_PADDING_EXPLICIT = ["padding: {'SAME', 'VALID', 'EXPLICIT'}", "explicit_paddings: list(int) = []"]
_CONV_ATTRS = ["strides: list(int)", *_PADDING_EXPLICIT, _FORMAT,
               "dilations: list(int) = [1, 1, 1, 1]"]
_FLOATS = "{half, bfloat16, float, double}"
_POOL_TYPES = "{half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16, " \
              "qint8} = DT_FLOAT"


# -- shape helpers ------------------------------------------------------------------------------
def with_rank(ctx, i: int, rank: int) -> tuple:
    """Input i's dims, which must have `rank` (unknown rank → all None)."""
    dims = ctx.input_dims(i)
    if dims is None:
        return (None,) * rank
    if len(dims) != rank:
        raise ctx.fail(f"Shape must be rank {rank} but is rank {len(dims)}")
    return dims


def _merge_dim(ctx, a, b):
    if a is not None and b is not None and a != b:
        raise ctx.fail(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _out_dim(ctx, size, k, stride, dilation, padding, pads):
    if padding == "SAME" and size is not None:
        k = 1 if k is None else k
    if size is None or k is None:
        return None
    try:
        return windowed_output_size(size, k, stride, dilation, padding, pads)[0]
    except GeometryError as e:
        raise ctx.fail(str(e)) from None


def _nhwc_to_format(n, h, w, c, fmt: str) -> TensorShape:
    return TensorShape([n, c, h, w] if fmt.startswith("NC") else [n, h, w, c])


def _spatial_out(ctx, op: str, x, k_hw, attrs: dict, ksize_name: str = "") -> tuple:
    """(out_h, out_w) of a conv/pool from input dims `x` (in data_format) and window sizes."""
    fmt = attrs.get("data_format") or "NHWC"
    h, w, _ = spatial_axes(fmt)
    strides = attrs["strides"]
    dil = attrs.get("dilations") or [1, 1, 1, 1]
    try:
        check_list_attr(op, "strides", strides, "stride")
        check_list_attr(op, "dilations", dil, "dilation")
        check_explicit_padding(attrs["padding"], attrs.get("explicit_paddings") or [], fmt)
    except GeometryError as e:
        raise ctx.fail(str(e)) from None
    ex = attrs.get("explicit_paddings") or [0] * 8
    pad = attrs["padding"]
    return (_out_dim(ctx, x[h], k_hw[0], strides[h], dil[h], pad, (ex[2 * h], ex[2 * h + 1])),
            _out_dim(ctx, x[w], k_hw[1], strides[w], dil[w], pad, (ex[2 * w], ex[2 * w + 1])))


def _check_unit_strides(ctx, attrs: dict) -> None:
    _, _, c = spatial_axes(attrs.get("data_format") or "NHWC")
    for name in ("strides", "dilations"):
        v = attrs.get(name) or [1, 1, 1, 1]
        if len(v) == 4 and (v[0] != 1 or v[c] != 1):
            raise ctx.fail(f"Current implementation does not yet support {name} in the batch "
                           f"and depth dimensions.")


# -- Conv2D -------------------------------------------------------------------------------------
def _conv2d_shape(ctx):
    x, f = with_rank(ctx, 0, 4), with_rank(ctx, 1, 4)
    attrs = ctx.attrs
    _check_unit_strides(ctx, attrs)
    fmt = attrs.get("data_format") or "NHWC"
    h, w, c = spatial_axes(fmt)
    _check_groups(ctx, x[c], f[2], f[3])
    oh, ow = _spatial_out(ctx, "Conv2D", x, (f[0], f[1]), attrs)
    return _nhwc_to_format(x[0], oh, ow, f[3], fmt)


def _check_groups(ctx, in_depth, f_depth, out_depth) -> None:
    if in_depth is None or f_depth is None:
        return
    if f_depth == 0:
        raise ctx.fail("Depth of filter must not be 0")
    if in_depth % f_depth:
        raise ctx.fail(f"Depth of input ({in_depth}) is not a multiple of input depth of "
                       f"filter ({f_depth})")
    groups = in_depth // f_depth
    if out_depth is not None and out_depth % groups:
        raise ctx.fail(f"Depth of output ({out_depth}) is not a multiple of the number of "
                       f"groups ({groups})")


def _sizes_shape(ctx, i: int, batch=None, depth=None) -> TensorShape:
    """A rank-4 shape from the `input_sizes` input i (4 values, or 2 spatial values)."""
    dims = ctx.input_dims(i)
    if dims is not None and len(dims) != 1:
        raise ctx.fail(f"Shape must be rank 1 but is rank {len(dims)}")
    shape = ctx.shape_from_tensor(i)
    n = shape.ndims
    if n == 2:
        fmt = ctx.attr("data_format") or "NHWC"
        hw = shape.as_tuple()
        return _nhwc_to_format(batch, hw[0], hw[1], depth, fmt)
    if n is None:
        return TensorShape([None] * 4)
    if n != 4:
        raise ctx.fail(f"Conv2DBackpropInput requires input_sizes to contain 4 values or 2 "
                       f"values, but got: {n}")
    return shape


def _conv2d_backprop_input_shape(ctx):
    f = with_rank(ctx, 1, 4)
    dy = with_rank(ctx, 2, 4)
    _check_unit_strides(ctx, ctx.attrs)
    return _sizes_shape(ctx, 0, dy[0], f[2])


def _conv2d_backprop_filter_shape(ctx):
    with_rank(ctx, 0, 4)
    with_rank(ctx, 2, 4)
    _check_unit_strides(ctx, ctx.attrs)
    shape = _sizes_shape(ctx, 1)
    return shape


register_op("Conv2D", inputs=["input: T", "filter: T"], outputs=["output: T"],
            attrs=["T: {half, bfloat16, float, double, int32}", "strides: list(int)",
                   "use_cudnn_on_gpu: bool = true", *_CONV_ATTRS[1:]],
            shape_fn=_conv2d_shape)
register_op("Conv2DBackpropInput", inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
            outputs=["output: T"],
            attrs=["T: {half, bfloat16, float, double, int32}", "strides: list(int)",
                   "use_cudnn_on_gpu: bool = true", *_CONV_ATTRS[1:]],
            shape_fn=_conv2d_backprop_input_shape)
register_op("Conv2DBackpropFilter", inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
            outputs=["output: T"],
            attrs=[f"T: {_FLOATS}", "strides: list(int)", "use_cudnn_on_gpu: bool = true",
                   *_CONV_ATTRS[1:]],
            shape_fn=_conv2d_backprop_filter_shape)


# -- DepthwiseConv2dNative ----------------------------------------------------------------------
def _depthwise_shape(ctx):
    x, f = with_rank(ctx, 0, 4), with_rank(ctx, 1, 4)
    attrs = ctx.attrs
    _check_unit_strides(ctx, attrs)
    fmt = attrs.get("data_format") or "NHWC"
    _, _, c = spatial_axes(fmt)
    depth = _merge_dim(ctx, x[c], f[2])
    oh, ow = _spatial_out(ctx, "DepthwiseConv2D", x, (f[0], f[1]), attrs)
    out_c = None if depth is None or f[3] is None else depth * f[3]
    return _nhwc_to_format(x[0], oh, ow, out_c, fmt)


def _depthwise_backprop_input_shape(ctx):
    f = with_rank(ctx, 1, 4)
    dy = with_rank(ctx, 2, 4)
    return _sizes_shape(ctx, 0, dy[0], f[2])


def _depthwise_backprop_filter_shape(ctx):
    with_rank(ctx, 0, 4)
    with_rank(ctx, 2, 4)
    return _sizes_shape(ctx, 1)


_DW_ATTRS = [f"T: {_FLOATS}", *_CONV_ATTRS]
register_op("DepthwiseConv2dNative", inputs=["input: T", "filter: T"], outputs=["output: T"],
            attrs=_DW_ATTRS, shape_fn=_depthwise_shape)
register_op("DepthwiseConv2dNativeBackpropInput",
            inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
            outputs=["output: T"], attrs=_DW_ATTRS, shape_fn=_depthwise_backprop_input_shape)
register_op("DepthwiseConv2dNativeBackpropFilter",
            inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
            outputs=["output: T"], attrs=_DW_ATTRS, shape_fn=_depthwise_backprop_filter_shape)


# -- pooling ------------------------------------------------------------------------------------
def _pool_shape(op: str):
    def shape_fn(ctx):
        x = with_rank(ctx, 0, 4)
        attrs = ctx.attrs
        try:
            check_list_attr(op, "ksize", attrs["ksize"])
        except GeometryError as e:
            raise ctx.fail(str(e)) from None
        return _pool_out(ctx, op, x, attrs["ksize"], attrs)

    return shape_fn


def _pool_out(ctx, op: str, x, ksize, attrs) -> TensorShape:
    fmt = attrs.get("data_format") or "NHWC"
    h, w, c = spatial_axes(fmt)
    if ksize[0] != 1 or attrs["strides"][0] != 1:
        raise ctx.fail("Pooling is not yet supported on the batch dimension.")
    oh, ow = _spatial_out(ctx, op, x, (ksize[h], ksize[w]), attrs)
    return _nhwc_to_format(x[0], oh, ow, x[c], fmt)


def _max_pool_v2_shape(ctx):
    x = with_rank(ctx, 0, 4)
    ksize, strides = ctx.constant_value(1), ctx.constant_value(2)
    if ksize is None or strides is None:
        return TensorShape([None] * 4)
    ksize, strides = [int(v) for v in ksize.reshape(-1)], [int(v) for v in strides.reshape(-1)]
    if len(ksize) != 4 or len(strides) != 4:
        raise ctx.fail(f"MaxPool requires the ksize and stride attributes to contain 4 values, "
                       f"but got: {len(ksize)} and {len(strides)}")
    return _pool_out(ctx, "MaxPoolV2", x, ksize, {**ctx.attrs, "strides": strides})


def _rank4_input0(ctx):
    return TensorShape(list(with_rank(ctx, 0, 4)))


_POOL_ATTRS = ["ksize: list(int) >= 4", "strides: list(int) >= 4"]
register_op("MaxPool", inputs=["input: T"], outputs=["output: T"],
            attrs=[f"T: {_POOL_TYPES}", *_POOL_ATTRS, *_PADDING_EXPLICIT,
                   "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"],
            shape_fn=_pool_shape("MaxPool"))
register_op("MaxPoolV2", inputs=["input: T", "ksize: int32", "strides: int32"],
            outputs=["output: T"],
            attrs=[f"T: {_POOL_TYPES}", "padding: {'SAME', 'VALID'}",
                   "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"],
            shape_fn=_max_pool_v2_shape)
register_op("AvgPool", inputs=["value: T"], outputs=["output: T"],
            attrs=[*_POOL_ATTRS, "padding: {'SAME', 'VALID'}", _FORMAT, f"T: {_FLOATS}"],
            shape_fn=_pool_shape("AvgPool"))
_GRAD_TYPES = "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, " \
              "uint32, uint64} = DT_FLOAT"
register_op("MaxPoolGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
            outputs=["output: T"],
            attrs=[*_POOL_ATTRS, *_PADDING_EXPLICIT, _FORMAT, f"T: {_GRAD_TYPES}"],
            shape_fn=_rank4_input0)
register_op("MaxPoolGradV2",
            inputs=["orig_input: T", "orig_output: T", "grad: T", "ksize: int32",
                    "strides: int32"],
            outputs=["output: T"],
            attrs=["padding: {'SAME', 'VALID'}", _FORMAT, f"T: {_GRAD_TYPES}"],
            shape_fn=_rank4_input0)
register_op("AvgPoolGrad", inputs=["orig_input_shape: int32", "grad: T"], outputs=["output: T"],
            attrs=[*_POOL_ATTRS, "padding: {'SAME', 'VALID'}", _FORMAT, f"T: {_FLOATS}"],
            shape_fn=lambda ctx: _sizes_shape(ctx, 0))


# -- Python API ---------------------------------------------------------------------------------
def _conv2d_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu=True) -> dict:
    data_format = data_format or "NHWC"
    ci = channel_index(data_format)
    padding, explicit = convert_padding(padding)
    return {"strides": get_sequence(strides, 2, ci, "strides"), "padding": padding,
            "explicit_paddings": explicit, "use_cudnn_on_gpu": use_cudnn_on_gpu,
            "data_format": data_format, "dilations": get_sequence(dilations, 2, ci, "dilations")}


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002
           data_format="NHWC", dilations=[1, 1, 1, 1], name=None, filters=None):  # noqa: B006
    """TF1 `tf.nn.conv2d`: a Conv2D op named "Conv2D".

    `strides`/`dilations` may be an int or a list of 1, 2 or 4 ints; `padding` is "SAME",
    "VALID" or a list of four [before, after] pairs (explicit padding).

    Raises:
      ValueError: channels of input and filter that do not fit (at construction).
    """
    filter = filters if filter is None else filter  # noqa: A001
    return apply_op("Conv2D", input, filter, name=name,
                    **_conv2d_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu))


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None,  # noqa: A002
                          padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
                          dilations=[1, 1, 1, 1], name=None, filters=None):  # noqa: B006
    """TF1 `tf.nn.conv2d_backprop_input`."""
    filter = filters if filter is None else filter  # noqa: A001
    return apply_op("Conv2DBackpropInput", input_sizes, filter, out_backprop, name=name,
                    **_conv2d_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu))


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu=True, data_format="NHWC",
                           dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    """TF1 `tf.nn.conv2d_backprop_filter`."""
    return apply_op("Conv2DBackpropFilter", input, filter_sizes, out_backprop, name=name,
                    **_conv2d_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu))


def _shape_tensor(shape, name: str):
    """An int32 shape tensor; a list holding Tensors is packed (TF's auto-packing)."""
    if isinstance(shape, (list, tuple)) and any(isinstance(d, Tensor) for d in shape):
        dims = [convert_to_tensor(d, dtype=dtypes.int32) for d in shape]
        return apply_op("Pack", dims, axis=0, name=name)
    return convert_to_tensor(shape, dtype=dtypes.int32, name=name)


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NHWC", name=None, input=None,  # noqa: A002
                     filters=None, dilations=None):
    """TF1 `tf.nn.conv2d_transpose`: the gradient of conv2d w.r.t. its input, as a
    Conv2DBackpropInput op named "conv2d_transpose".

    Raises:
      ValueError: `value`'s channels do not match the filter's output channels (axis 3).
    """
    value = input if value is None else value
    filter = filters if filter is None else filter  # noqa: A001
    attrs = _conv2d_attrs(strides, padding, data_format, dilations)
    with OpScope(name, "conv2d_transpose", [value, filter, output_shape]) as s:
        sizes = _shape_tensor(output_shape, "input_sizes")
        filter = convert_to_tensor(filter, name="filter")  # noqa: A001
        value = convert_to_tensor(value, name="out_backprop")
        have, want = value.shape.as_tuple(), filter.shape.as_tuple()
        ci = channel_index(attrs["data_format"])
        if have is not None and want is not None and None not in (have[ci], want[3]) \
                and have[ci] != want[3]:
            raise ValueError(f"input channels does not match filter's input channels, "
                             f"{have[ci]} != {want[3]}")
        return s.apply("Conv2DBackpropInput", sizes, filter, value, **attrs)


def _depthwise_attrs(strides, padding, rate, data_format) -> dict:
    data_format = data_format or "NHWC"
    rate = [1, 1] if rate is None else list(rate) if isinstance(rate, (list, tuple)) \
        else [rate, rate]
    padding, explicit = convert_padding(padding)
    return {"strides": list(strides), "padding": padding, "explicit_paddings": explicit,
            "data_format": data_format,
            "dilations": get_sequence(rate, 2, channel_index(data_format), "dilations")}


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002
                            dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    """TF1 `tf.nn.depthwise_conv2d_native`: output channel c * M + m convolves input channel
    c with filter[:, :, c, m]."""
    padding, explicit = convert_padding(padding)
    return apply_op("DepthwiseConv2dNative", input, filter, strides=strides, padding=padding,
                    explicit_paddings=explicit, data_format=data_format or "NHWC",
                    dilations=dilations, name=name)


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format=None, dilations=None):
    """TF1 `tf.nn.depthwise_conv2d`: one DepthwiseConv2dNative op named "depthwise"
    (a dilation `rate` becomes the op's dilations rather than TF's space-to-batch)."""
    attrs = _depthwise_attrs(strides, padding, dilations if rate is None else rate,
                             data_format)
    with OpScope(name, "depthwise", [input, filter]) as s:
        input = convert_to_tensor(input, name="tensor_in")  # noqa: A001
        filter = convert_to_tensor(filter, name="filter_in")  # noqa: A001
        return s.apply("DepthwiseConv2dNative", input, filter, **attrs)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                     rate=None, name=None, data_format=None, dilations=None):
    """TF1 `tf.nn.separable_conv2d`: depthwise conv ("separable_conv2d/depthwise") then a
    1x1 Conv2D named "separable_conv2d".

    Raises:
      ValueError: the pointwise filter is not 1x1.
    """
    attrs = _depthwise_attrs(strides, padding, dilations if rate is None else rate,
                             data_format)
    with OpScope(name, "separable_conv2d",
                 [input, depthwise_filter, pointwise_filter]) as s:
        input = convert_to_tensor(input, name="tensor_in")  # noqa: A001
        depthwise_filter = convert_to_tensor(depthwise_filter, name="depthwise_filter")
        pointwise_filter = convert_to_tensor(pointwise_filter, name="pointwise_filter")
        pw = pointwise_filter.shape.with_rank(4).as_tuple()
        if pw[0] not in (1, None) or pw[1] not in (1, None):
            raise ValueError(f"Dimensions {pw[0]} and {pw[1]} are not compatible with 1 "
                             f"(pointwise_filter must be 1x1)")
        depthwise = apply_op("DepthwiseConv2dNative", input, depthwise_filter,
                             name="depthwise", **attrs)
        return s.apply("Conv2D", depthwise, pointwise_filter,
                       **_conv2d_attrs(1, "VALID", attrs["data_format"], 1))


def _pool_args(ksize, strides, data_format):
    data_format = data_format or "NHWC"
    ci = channel_index(data_format)
    return (get_sequence(ksize, 2, ci, "ksize"), get_sequence(strides, 2, ci, "strides"),
            data_format)


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None,
             input=None):  # noqa: A002
    """TF1 `tf.nn.max_pool`: a MaxPool op named "MaxPool".

    Raises:
      ValueError: a zero in `ksize`, or a malformed explicit padding.
    """
    value = input if value is None else value
    return _max_pool(value, ksize, strides, padding, data_format, name, "MaxPool")


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """`tf.nn.max_pool2d`: as max_pool, named "MaxPool2d"."""
    return _max_pool(input, ksize, strides, padding, data_format, name, "MaxPool2d")


def _max_pool(value, ksize, strides, padding, data_format, name, default_name):
    ksize, strides, data_format = _pool_args(ksize, strides, data_format)
    if any(k == 0 for k in ksize):
        raise ValueError(f"`ksize` cannot be zero. Received: ksize={ksize}")
    padding, explicit = convert_padding(padding)
    with OpScope(name, default_name, [value]) as s:
        value = convert_to_tensor(value, name="input")
        return s.apply("MaxPool", value, ksize=ksize, strides=strides, padding=padding,
                       explicit_paddings=explicit, data_format=data_format)


def max_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """`tf.nn.max_pool_v2` on 4-D inputs (a MaxPool op)."""
    return _max_pool(input, ksize, strides, padding, data_format, name, "MaxPool2d")


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None,
             input=None):  # noqa: A002
    """TF1 `tf.nn.avg_pool` (also `avg_pool2d`): an AvgPool op named "AvgPool"; padding is
    excluded from each window's mean."""
    value = input if value is None else value
    ksize, strides, data_format = _pool_args(ksize, strides, data_format)
    with OpScope(name, "AvgPool", [value]) as s:
        value = convert_to_tensor(value, name="value")
        return s.apply("AvgPool", value, ksize=ksize, strides=strides, padding=padding,
                       data_format=data_format)


avg_pool2d = avg_pool

__all__ = [
    "conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "conv2d_transpose",
    "depthwise_conv2d", "depthwise_conv2d_native", "separable_conv2d", "max_pool",
    "max_pool2d", "max_pool_v2", "avg_pool", "avg_pool2d",
]
