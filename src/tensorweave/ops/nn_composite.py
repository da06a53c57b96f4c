"""`tf.nn` functions built from the convolution and pooling ops: conv1d, atrous_conv2d,
convolution, pool, swish (TF's nn_ops.py / nn_impl.py). Shapes and names as TF builds them
(conv1d is ExpandDims -> Conv2D -> Squeeze)."""

from __future__ import annotations

from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None,
           data_format=None, name=None, input=None, dilations=None):  # noqa: A002
    """1-D convolution of [batch, width, in] ("NWC"; "NCW": [batch, in, width]) with
    filters [width, in, out], as a Conv2D over a height of 1.

    Raises:
      ValueError: an unknown data_format.
    """
    value = input if value is None else value
    if data_format not in (None, "NWC", "NHWC", "NCW", "NCHW"):
        raise ValueError(f'data_format must be "NWC" or "NCW", got {data_format}.')
    channels_last = data_format in (None, "NWC", "NHWC")
    with name_scope(name, "conv1d", [value, filters]) as scope:
        spatial = 1 if channels_last else 2
        value = apply_op("ExpandDims", convert_to_tensor(value), spatial, name="ExpandDims")
        filters = apply_op("ExpandDims", convert_to_tensor(filters), 0, name="ExpandDims_1")
        one = [1, 1, stride, 1] if channels_last else [1, 1, 1, stride]
        dil = 1 if dilations is None else (dilations if isinstance(dilations, int)
                                           else dilations[-1])
        rates = [1, 1, dil, 1] if channels_last else [1, 1, 1, dil]
        out = apply_op("Conv2D", value, filters, strides=one, padding=padding,
                       data_format="NHWC" if channels_last else "NCHW", dilations=rates,
                       use_cudnn_on_gpu=True if use_cudnn_on_gpu is None else use_cudnn_on_gpu,
                       name="Conv2D")
        return apply_op("Squeeze", out, squeeze_dims=[spatial], name=scope)


def atrous_conv2d(value, filters, rate, padding, name=None):
    """2-D convolution with holes: Conv2D with dilations [1, rate, rate, 1] (NHWC).

    Raises:
      ValueError: rate < 1.
    """
    if rate < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    return apply_op("Conv2D", value, filters, strides=[1, 1, 1, 1], padding=padding,
                    dilations=[1, rate, rate, 1], name=name)


def convolution(input, filter, padding, strides=None, dilation_rate=None,  # noqa: A002
                name=None, data_format=None, filters=None, dilations=None):
    """N-D convolution for N = 1 or 2 (conv1d / Conv2D with strides and dilations)."""
    filter = filters if filter is None else filter  # noqa: A001
    dilation_rate = dilations if dilation_rate is None else dilation_rate
    rank = convert_to_tensor(input).shape.ndims
    strides = list(strides or [1] * (rank - 2))
    rates = list(dilation_rate or [1] * (rank - 2))
    if rank == 3:
        return conv1d(input, filter, strides[0], padding, data_format=data_format, name=name,
                      dilations=rates[0])
    if rank != 4:
        raise ValueError(f"convolution supports 1-D and 2-D inputs here, got rank {rank}")
    last = data_format in (None, "NHWC")
    return apply_op("Conv2D", input, filter,
                    strides=[1, *strides, 1] if last else [1, 1, *strides],
                    dilations=[1, *rates, 1] if last else [1, 1, *rates], padding=padding,
                    data_format="NHWC" if last else "NCHW", name=name)


def pool(input, window_shape, pooling_type, padding, dilation_rate=None,  # noqa: A002
         strides=None, name=None, data_format=None, dilations=None):
    """N-D max or average pooling for N = 2 ("MAX"/"AVG"; no dilation).

    Raises:
      ValueError: an unknown pooling_type, a dilation, or N != 2.
    """
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"Invalid pooling_type: {pooling_type}")
    rates = dilation_rate or dilations
    if rates is not None and any(r != 1 for r in rates):
        raise ValueError("pool with a dilation_rate other than 1 is not supported yet")
    if len(window_shape) != 2:
        raise ValueError(f"pool supports 2-D windows here, got {window_shape}")
    strides = list(strides or [1, 1])
    last = data_format in (None, "NHWC")
    ksize = [1, *window_shape, 1] if last else [1, 1, *window_shape]
    step = [1, *strides, 1] if last else [1, 1, *strides]
    return apply_op("MaxPool" if pooling_type == "MAX" else "AvgPool", input, ksize=ksize,
                    strides=step, padding=padding, data_format="NHWC" if last else "NCHW",
                    name=name)


def swish(features, name=None):
    """features * sigmoid(features) (TF's nn.swish)."""
    with name_scope(name, "swish", [features]):
        x = convert_to_tensor(features, name="features")
        return apply_op("Mul", x, apply_op("Sigmoid", x))


__all__ = ["conv1d", "atrous_conv2d", "convolution", "pool", "swish"]


def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None,
                                         variance_epsilon=None, scale_after_normalization=None,
                                         name=None, input=None, mean=None,  # noqa: A002
                                         variance=None):
    """TF1's deprecated batch norm: batch_normalization(t, m, v, beta, gamma if
    scale_after_normalization else None, variance_epsilon)."""
    from tensorweave.ops.nn_norm import batch_normalization

    t = input if t is None else t
    m = mean if m is None else m
    v = variance if v is None else v
    return batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None,
                               variance_epsilon, name=name or
                               "BatchNormWithGlobalNormalization")


__all__ += ["batch_norm_with_global_normalization"]
