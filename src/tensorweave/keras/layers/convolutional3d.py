"""Keras 3-D layers over (batch, depth, rows, cols, channels): Conv3D, Conv3DTranspose,
MaxPooling3D, AveragePooling3D, GlobalAveragePooling3D/GlobalMaxPooling3D, ZeroPadding3D,
UpSampling3D, Cropping1D/3D."""

from __future__ import annotations

from typing import Any

from tensorweave.keras import activations, initializers
from tensorweave.keras import backend as K
from tensorweave.keras.engine.base_layer import Layer, keras_layer
from tensorweave.keras.layers.convolutional import _pairs, _repeat_axis, _weight_args
from tensorweave.keras.layers.pooling import _Global
from tensorweave.ops import array_ops, joining_ops, nn_conv3d, nn_ops


def _deconv_length(size, kernel, stride, padding):
    if size is None:
        return None
    return size * stride if padding == "SAME" else size * stride + max(kernel - stride, 0)


@keras_layer
class Conv3D(Layer):
    """3-D convolution: `kernel` [kd, kh, kw, in, filters], `bias` [filters]."""

    transpose = False

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format=None, dilation_rate=(1, 1, 1), activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        if kwargs.pop("output_padding", None) is not None:
            raise NotImplementedError("Conv3DTranspose: output_padding is not supported")
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self._weight_args = _weight_args(kernel=(kernel_regularizer, kernel_constraint),
                                         bias=(bias_regularizer, bias_constraint))
        self.filters = int(filters)
        self.kernel_size, self.strides = _pairs(kernel_size, 3), _pairs(strides, 3)
        self.dilation_rate = _pairs(dilation_rate, 3)
        self.padding = padding.upper()
        self.activation, self.use_bias = activations.get(activation), use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)

    def build(self, input_shape) -> None:
        channels = int(input_shape[-1])
        shape = [*self.kernel_size, self.filters, channels] if self.transpose else \
            [*self.kernel_size, channels, self.filters]
        self.kernel = self.add_weight("kernel", shape, initializer=self.kernel_initializer,
                                      **self._weight_args["kernel"])
        self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                    **self._weight_args["bias"]) if self.use_bias else None
        self.built = True

    def _convolve(self, inputs):
        return nn_conv3d.conv3d(inputs, self.kernel, [1, *self.strides, 1], self.padding,
                                dilations=[1, *self.dilation_rate, 1])

    def call(self, inputs):
        y = self._convolve(inputs)
        if self.bias is not None:
            y = nn_ops.bias_add(y, self.bias)
        return self.activation(y)


@keras_layer
class Conv3DTranspose(Conv3D):
    """The adjoint of Conv3D: `kernel` [kd, kh, kw, filters, in]."""

    transpose = True

    def _convolve(self, inputs):
        static = inputs.shape.as_list()
        dynamic = array_ops.shape(inputs)
        dims = [static[i + 1] for i in range(3)]
        out = [_deconv_length(d, k, s, self.padding) if d is not None else
               dynamic[i + 1] * s + (0 if self.padding == "SAME" else max(k - s, 0))
               for i, (d, k, s) in enumerate(zip(dims, self.kernel_size, self.strides))]
        shape = joining_ops.stack([dynamic[0], *out, self.filters])
        return nn_conv3d.conv3d_transpose(inputs, self.kernel, shape, [1, *self.strides, 1],
                                          self.padding)


class _Pool3D(Layer):
    pool: Any = None

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.pool_size = _pairs(pool_size, 3)
        self.strides = _pairs(strides, 3) if strides is not None else self.pool_size
        self.padding = padding.upper()

    def call(self, inputs):
        return type(self).pool(inputs, [1, *self.pool_size, 1], [1, *self.strides, 1],
                               self.padding)


@keras_layer
class MaxPooling3D(_Pool3D):
    pool = staticmethod(nn_conv3d.max_pool3d)


@keras_layer
class AveragePooling3D(_Pool3D):
    pool = staticmethod(nn_conv3d.avg_pool3d)


@keras_layer
class GlobalAveragePooling3D(_Global):
    axes = [1, 2, 3]


@keras_layer
class GlobalMaxPooling3D(_Global):
    axes = [1, 2, 3]
    reduce = staticmethod(K.max)


@keras_layer
class ZeroPadding3D(Layer):
    def __init__(self, padding=(1, 1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.padding = tuple(_pairs(p) for p in _pairs(padding, 3))

    def call(self, inputs):
        return joining_ops.pad(inputs, [[0, 0], *map(list, self.padding), [0, 0]])


@keras_layer
class UpSampling3D(Layer):
    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.size = _pairs(size, 3)

    def call(self, inputs):
        out = inputs
        for axis, times in zip((1, 2, 3), self.size):
            out = _repeat_axis(out, times, axis)
        return out


@keras_layer
class Cropping1D(Layer):
    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = _pairs(cropping)

    def call(self, inputs):
        start, end = self.cropping
        steps = inputs.shape.as_list()[1]
        return inputs[:, start:steps - end, :] if steps is not None else \
            inputs[:, start:array_ops.shape(inputs)[1] - end, :]


@keras_layer
class Cropping3D(Layer):
    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.cropping = tuple(_pairs(c) for c in _pairs(cropping, 3))

    def call(self, inputs):
        dims = inputs.shape.as_list()[1:4]
        (a, b), (c, d), (e, f) = self.cropping
        return inputs[:, a:dims[0] - b, c:dims[1] - d, e:dims[2] - f, :]


Convolution3D, MaxPool3D, AvgPool3D = Conv3D, MaxPooling3D, AveragePooling3D
GlobalAvgPool3D, GlobalMaxPool3D = GlobalAveragePooling3D, GlobalMaxPooling3D
