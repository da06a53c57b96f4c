"""`tf.layers` separable convolutions: SeparableConv2D / separable_conv2d and
SeparableConv1D / separable_conv1d (a depthwise convolution per input channel, then a 1x1
convolution). Variables as TF1's: `<name>/depthwise_kernel` [k..., in, depth_multiplier],
`<name>/pointwise_kernel` [1..., in * depth_multiplier, filters], `<name>/bias`."""

from __future__ import annotations

from tensorweave.training.layers.convolutional import Conv2D
from tensorweave.training.layers.utils import InputSpec, get_initializer


class SeparableConv2D(Conv2D):
    """Depthwise-separable 2-D convolution (tf.nn.separable_conv2d)."""

    rank = 2

    def __init__(self, filters, kernel_size, strides=None, padding="valid",
                 data_format="channels_last", dilation_rate=None, depth_multiplier=1,
                 depthwise_initializer=None, pointwise_initializer=None,
                 depthwise_regularizer=None, pointwise_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, **kwargs):
        ones = (1,) * self.rank
        super().__init__(filters, kernel_size, strides=strides or ones, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate or ones,
                         **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = get_initializer(depthwise_initializer)
        self.pointwise_initializer = get_initializer(pointwise_initializer)
        self.depthwise_regularizer, self.pointwise_regularizer = (depthwise_regularizer,
                                                                  pointwise_regularizer)
        self.depthwise_constraint, self.pointwise_constraint = (depthwise_constraint,
                                                                pointwise_constraint)
        self.depthwise_kernel = self.pointwise_kernel = None

    def build(self, input_shape) -> None:
        channels = self._input_channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=(*self.kernel_size, channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint, trainable=True, dtype=self.dtype)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            shape=((1,) * self.rank + (channels * self.depth_multiplier, self.filters)),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint, trainable=True, dtype=self.dtype)
        if self.use_bias:
            self.bias = self.add_weight(
                "bias", shape=(self.filters,), initializer=self.bias_initializer,
                regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                trainable=True, dtype=self.dtype)
        self.input_spec = InputSpec(min_ndim=self.rank + 2, axes={self._channel_axis: channels})
        self.built = True

    def _four(self, values):
        first = self.data_format == "channels_first"
        return [1, 1, *values] if first else [1, *values, 1]

    def _convolution(self, inputs):
        from tensorweave.ops import nn_conv

        return nn_conv.separable_conv2d(
            inputs, self.depthwise_kernel, self.pointwise_kernel,
            strides=self._four(self.strides), padding=self.padding.upper(),
            rate=list(self.dilation_rate), data_format=self._tf_data_format)


class SeparableConv1D(SeparableConv2D):
    """Depthwise-separable 1-D convolution: the 2-D one over a height of 1, as TF builds it."""

    rank = 1

    def _convolution(self, inputs):
        from tensorweave.ops import nn_conv
        from tensorweave.ops.apply import apply_op

        first = self.data_format == "channels_first"
        axis = 2 if first else 1
        x = apply_op("ExpandDims", inputs, axis)
        depthwise = apply_op("ExpandDims", self.depthwise_kernel, 0)
        pointwise = apply_op("ExpandDims", self.pointwise_kernel, 0)
        strides = [1, 1, 1, self.strides[0]] if first else [1, 1, self.strides[0], 1]
        out = nn_conv.separable_conv2d(x, depthwise, pointwise, strides=strides,
                                       padding=self.padding.upper(),
                                       rate=[1, self.dilation_rate[0]],
                                       data_format="NCHW" if first else "NHWC")
        return apply_op("Squeeze", out, squeeze_dims=[axis])


def _functional(cls, fn_name):
    def fn(inputs, filters, kernel_size, strides=None, padding="valid",
           data_format="channels_last", dilation_rate=None, depth_multiplier=1,
           activation=None, use_bias=True, depthwise_initializer=None,
           pointwise_initializer=None, bias_initializer=None, depthwise_regularizer=None,
           pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
           trainable=True, name=None, reuse=None):
        layer = cls(filters=filters, kernel_size=kernel_size, strides=strides, padding=padding,
                    data_format=data_format, dilation_rate=dilation_rate,
                    depth_multiplier=depth_multiplier, activation=activation,
                    use_bias=use_bias, depthwise_initializer=depthwise_initializer,
                    pointwise_initializer=pointwise_initializer,
                    bias_initializer=bias_initializer,
                    depthwise_regularizer=depthwise_regularizer,
                    pointwise_regularizer=pointwise_regularizer,
                    bias_regularizer=bias_regularizer,
                    activity_regularizer=activity_regularizer,
                    depthwise_constraint=depthwise_constraint,
                    pointwise_constraint=pointwise_constraint,
                    bias_constraint=bias_constraint, trainable=trainable, name=name,
                    _reuse=reuse, _scope=name)
        return layer.apply(inputs)

    fn.__name__ = fn_name
    fn.__doc__ = f"TF1 `tf.layers.{fn_name}`."
    return fn


separable_conv2d = _functional(SeparableConv2D, "separable_conv2d")
separable_conv1d = _functional(SeparableConv1D, "separable_conv1d")

__all__ = ["SeparableConv2D", "separable_conv2d", "SeparableConv1D", "separable_conv1d"]
