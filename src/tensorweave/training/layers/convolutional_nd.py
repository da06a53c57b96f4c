"""`tf.layers` 1-D and 3-D convolutions: Conv1D / conv1d (a Conv2D over a height of 1, as
TF builds it) and Conv3D / conv3d (Conv3D). Variables as TF1's: `<name>/kernel`
[k..., in, filters] and `<name>/bias`."""

from __future__ import annotations

from tensorweave.training.layers.convolutional import Conv2D


class Conv1D(Conv2D):
    """1-D convolution layer over [batch, width, channels] (or channels_first)."""

    rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, **kwargs)

    def _convolution(self, inputs):
        from tensorweave.ops import nn_composite

        return nn_composite.conv1d(inputs, self.kernel, self.strides[0], self.padding.upper(),
                                   data_format=self._tf_data_format,
                                   dilations=self.dilation_rate[0], name="conv1d")


class Conv3D(Conv2D):
    """3-D convolution layer over [batch, depth, height, width, channels]."""

    rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, **kwargs)

    def _convolution(self, inputs):
        from tensorweave.ops import nn_conv3d

        first = self.data_format == "channels_first"
        five = (lambda v: [1, 1, *v]) if first else (lambda v: [1, *v, 1])
        return nn_conv3d.conv3d(inputs, self.kernel, strides=five(self.strides),
                                padding=self.padding.upper(), data_format=self._tf_data_format,
                                dilations=five(self.dilation_rate), name="Conv3D")


def _functional(cls):
    def fn(inputs, filters, kernel_size, strides=1, padding="valid",
           data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
        layer = cls(filters=filters, kernel_size=kernel_size, strides=strides, padding=padding,
                    data_format=data_format, dilation_rate=dilation_rate,
                    activation=activation, use_bias=use_bias,
                    kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                    kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                    activity_regularizer=activity_regularizer,
                    kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                    trainable=trainable, name=name, _reuse=reuse, _scope=name)
        return layer.apply(inputs)

    fn.__name__ = f"conv{cls.rank}d"
    fn.__doc__ = f"TF1 `tf.layers.conv{cls.rank}d`: a {cls.rank}-D convolution layer applied."
    return fn


conv1d = _functional(Conv1D)
conv3d = _functional(Conv3D)
Convolution1D, Convolution3D, convolution1d, convolution3d = Conv1D, Conv3D, conv1d, conv3d

__all__ = ["Conv1D", "conv1d", "Conv3D", "conv3d"]
