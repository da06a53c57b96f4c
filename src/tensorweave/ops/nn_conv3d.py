"""3-D convolution and pooling (TF's nn_ops.cc): Conv3D, Conv3DBackpropInputV2,
Conv3DBackpropFilterV2, MaxPool3D, AvgPool3D, MaxPool3DGrad, AvgPool3DGrad, and the wrappers
`tf.nn.conv3d`, `conv3d_transpose`, `max_pool3d`, `avg_pool3d`.

Layouts "NDHWC" (default) and "NCDHW"; filters are [d, h, w, in, out]. Output sizes follow
nn_geometry.windowed_output_size per spatial dimension. Kernels:
`runtime/kernels/cpu/conv3d.py`; gradients: `autodiff/conv3d_grad.py`.
"""

from __future__ import annotations

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.nn_geometry import GeometryError, windowed_output_size
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

_FLOATS = "T: {half, bfloat16, float, double}"
_FORMAT = "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'"
_PAD = "padding: {'SAME', 'VALID'}"


def _split(dims, fmt):
    """(n, [d, h, w], c) of a 5-D shape in `fmt`."""
    if dims is None:
        return None, [None] * 3, None
    if fmt == "NCDHW":
        return dims[0], list(dims[2:]), dims[1]
    return dims[0], list(dims[1:4]), dims[4]


def _join(n, spatial, c, fmt) -> TensorShape:
    return TensorShape([n, c, *spatial] if fmt == "NCDHW" else [n, *spatial, c])


def _rank5(ctx, i):
    dims = ctx.input_dims(i)
    if dims is not None and len(dims) != 5:
        raise ctx.fail(f"Shape must be rank 5 but is rank {len(dims)}")
    return dims


def _spatial_attr(values, fmt):
    return list(values[2:]) if fmt == "NCDHW" else list(values[1:4])


def _out_sizes(ctx, spatial, window, strides, dilations, padding):
    out = []
    for size, k, s, d in zip(spatial, window, strides, dilations):
        if size is None or k is None:
            out.append(None)
            continue
        try:
            out.append(windowed_output_size(size, k, s, d, padding)[0])
        except GeometryError as e:
            raise ctx.fail(str(e)) from None
    return out


def _conv3d_shape(ctx):
    fmt = ctx.attr("data_format")
    n, spatial, c = _split(_rank5(ctx, 0), fmt)
    f = _rank5(ctx, 1)
    window, out_c = ([None] * 3, None) if f is None else (list(f[:3]), f[4])
    if f is not None and c is not None and f[3] is not None and c % f[3]:
        raise ctx.fail(f"Depth of input ({c}) is not a multiple of filter depth ({f[3]})")
    strides = _spatial_attr(ctx.attr("strides"), fmt)
    dilations = _spatial_attr(ctx.attr("dilations"), fmt)
    out = _out_sizes(ctx, spatial, window, strides, dilations, ctx.attr("padding"))
    return _join(n, out, out_c, fmt)


def _pool3d_shape(ctx):
    fmt = ctx.attr("data_format")
    n, spatial, c = _split(_rank5(ctx, 0), fmt)
    window = _spatial_attr(ctx.attr("ksize"), fmt)
    strides = _spatial_attr(ctx.attr("strides"), fmt)
    out = _out_sizes(ctx, spatial, window, strides, [1, 1, 1], ctx.attr("padding"))
    return _join(n, out, c, fmt)


def _from_sizes(i):
    def fn(ctx):
        return ctx.shape_from_tensor(i)

    return fn


_CONV_ATTRS = [_FLOATS, "strides: list(int) >= 5", _PAD, _FORMAT,
               "dilations: list(int) = [1, 1, 1, 1, 1]"]
register_op("Conv3D", inputs=["input: T", "filter: T"], outputs=["output: T"],
            attrs=_CONV_ATTRS, shape_fn=_conv3d_shape)
register_op("Conv3DBackpropInputV2", inputs=["input_sizes: Tshape", "filter: T",
                                             "out_backprop: T"],
            outputs=["output: T"], attrs=_CONV_ATTRS + ["Tshape: {int32, int64} = DT_INT32"],
            shape_fn=_from_sizes(0))
register_op("Conv3DBackpropFilterV2", inputs=["input: T", "filter_sizes: int32",
                                              "out_backprop: T"],
            outputs=["output: T"], attrs=_CONV_ATTRS, shape_fn=_from_sizes(1))
_POOL_ATTRS = ["ksize: list(int) >= 5", "strides: list(int) >= 5", _PAD, _FORMAT]
register_op("MaxPool3D", inputs=["input: T"], outputs=["output: T"],
            attrs=_POOL_ATTRS + ["T: {half, bfloat16, float}"], shape_fn=_pool3d_shape)
register_op("AvgPool3D", inputs=["input: T"], outputs=["output: T"],
            attrs=_POOL_ATTRS + [_FLOATS], shape_fn=_pool3d_shape)
register_op("MaxPool3DGrad", inputs=["orig_input: TInput", "orig_output: TInput",
                                     "grad: T"],
            outputs=["output: T"],
            attrs=_POOL_ATTRS + ["T: {half, bfloat16, float} = DT_FLOAT",
                                 "TInput: {half, bfloat16, float} = DT_FLOAT"],
            shape_fn=lambda ctx: ctx.input_shape(0))
register_op("AvgPool3DGrad", inputs=["orig_input_shape: int32", "grad: T"],
            outputs=["output: T"], attrs=_POOL_ATTRS + [_FLOATS], shape_fn=_from_sizes(0))


# -- Python API --------------------------------------------------------------------------------
def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",  # noqa: A002
           dilations=(1, 1, 1, 1, 1), name=None, filters=None):
    """3-D convolution (Conv3D)."""
    filter = filters if filter is None else filter  # noqa: A001
    return apply_op("Conv3D", input, filter, strides=list(strides), padding=padding,
                    data_format=data_format, dilations=list(dilations), name=name)


def conv3d_transpose(value, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NDHWC", name=None, input=None, filters=None,
                     dilations=None):
    """The gradient of conv3d with respect to its input (Conv3DBackpropInputV2)."""
    value = input if value is None else value
    filter = filters if filter is None else filter  # noqa: A001
    sizes = convert_to_tensor(output_shape, name="output_shape")
    return apply_op("Conv3DBackpropInputV2", sizes, filter, value, strides=list(strides),
                    padding=padding, data_format=data_format,
                    dilations=list(dilations or [1] * 5), name=name)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """3-D max pooling (MaxPool3D)."""
    return apply_op("MaxPool3D", input, ksize=_five(ksize, data_format),
                    strides=_five(strides, data_format), padding=padding,
                    data_format=data_format, name=name)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """3-D average pooling over the non-padded entries of each window (AvgPool3D)."""
    return apply_op("AvgPool3D", input, ksize=_five(ksize, data_format),
                    strides=_five(strides, data_format), padding=padding,
                    data_format=data_format, name=name)


def _five(v, fmt):
    if isinstance(v, int):
        v = [v] * 3
    v = list(v)
    if len(v) == 3:
        return [1, 1, *v] if fmt == "NCDHW" else [1, *v, 1]
    return v


__all__ = ["conv3d", "conv3d_transpose", "max_pool3d", "avg_pool3d"]
