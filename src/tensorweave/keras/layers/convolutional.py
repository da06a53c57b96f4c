"""Keras convolution layers: Conv1D (as a 2-D convolution over a height of one), Conv2D,
Conv2DTranspose, SeparableConv2D/DepthwiseConv2D where the op exists, and the shape layers
ZeroPadding2D, Cropping2D, UpSampling2D (nearest), ZeroPadding1D, UpSampling1D."""

from __future__ import annotations

from tensorweave.keras import backend as K
from tensorweave.keras.engine.base_layer import Layer, keras_layer
from tensorweave.ops import array_ops, joining_ops
from tensorweave.training.layers import convolutional as tf_conv


def _pairs(value, n: int = 2) -> tuple:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,) * n


@keras_layer
class Conv2D(Layer, tf_conv.Conv2D):
    """2-D convolution; `kernel` [kh, kw, in, filters] glorot_uniform, `bias` zeros."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        Layer.__init__(self, filters=filters, kernel_size=kernel_size, strides=strides,
                       padding=padding, data_format=data_format or K.image_data_format(),
                       dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                       kernel_initializer=kernel_initializer,
                       bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                       bias_regularizer=bias_regularizer,
                       activity_regularizer=activity_regularizer,
                       kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                       **kwargs)


@keras_layer
class Conv2DTranspose(Layer, tf_conv.Conv2DTranspose):
    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format=None, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", **kwargs):
        Layer.__init__(self, filters=filters, kernel_size=kernel_size, strides=strides,
                       padding=padding, data_format=data_format or K.image_data_format(),
                       activation=activation, use_bias=use_bias,
                       kernel_initializer=kernel_initializer,
                       bias_initializer=bias_initializer, **kwargs)


@keras_layer
class Conv1D(Conv2D):
    """1-D convolution over (batch, steps, channels): `kernel` [k, in, filters], run as a
    2-D convolution over a height of one."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, **kwargs):
        super().__init__(filters, (1, _pairs(kernel_size, 1)[0]), (1, _pairs(strides, 1)[0]),
                         padding, None, (1, _pairs(dilation_rate, 1)[0]), activation,
                         use_bias, **kwargs)
        self.input_spec = None   # NOTE: 3-D inputs; the 2-D convolution sees them as 4-D

    def build(self, input_shape) -> None:
        shape = list(input_shape) if not hasattr(input_shape, "as_list") else \
            input_shape.as_list()
        super().build([shape[0], 1, *shape[1:]])
        self.input_spec = None

    def call(self, inputs):
        return array_ops.squeeze(super().call(array_ops.expand_dims(inputs, 1)), [1])


@keras_layer
class ZeroPadding2D(Layer):
    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        rows, cols = _pairs(padding)
        self.padding = (_pairs(rows), _pairs(cols))
        self.data_format = data_format or K.image_data_format()

    def call(self, inputs):
        rows, cols = self.padding
        pads = [[0, 0], list(rows), list(cols), [0, 0]]
        if self.data_format == "channels_first":
            pads = [[0, 0], [0, 0], list(rows), list(cols)]
        return joining_ops.pad(inputs, pads)


@keras_layer
class ZeroPadding1D(Layer):
    def __init__(self, padding=1, **kwargs):
        super().__init__(**kwargs)
        self.padding = _pairs(padding)

    def call(self, inputs):
        return joining_ops.pad(inputs, [[0, 0], list(self.padding), [0, 0]])


@keras_layer
class Cropping2D(Layer):
    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        rows, cols = _pairs(cropping)
        self.cropping = (_pairs(rows), _pairs(cols))

    def call(self, inputs):
        (top, bottom), (left, right) = self.cropping
        h, w = inputs.shape[1], inputs.shape[2]
        h = h if isinstance(h, int) else h.value
        w = w if isinstance(w, int) else w.value
        return inputs[:, top:h - bottom, left:w - right, :]


@keras_layer
class UpSampling2D(Layer):
    """Repeats rows and columns `size` times (nearest neighbour)."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.size = _pairs(size)

    def call(self, inputs):
        out = inputs
        for axis, times in ((1, self.size[0]), (2, self.size[1])):
            out = _repeat_axis(out, times, axis)
        return out


@keras_layer
class UpSampling1D(Layer):
    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        self.size = int(size)

    def call(self, inputs):
        return _repeat_axis(inputs, self.size, 1)


def _repeat_axis(x, times: int, axis: int):
    """Each slice along `axis` repeated `times` times in place (K.repeat_elements)."""
    shape = x.shape.as_list()
    expanded = array_ops.expand_dims(x, axis + 1)
    multiples = [1] * (len(shape) + 1)
    multiples[axis + 1] = times
    tiled = joining_ops.tile(expanded, multiples)
    new_shape = [-1 if d is None else d for d in shape]
    new_shape[axis] = -1 if shape[axis] is None else shape[axis] * times
    new_shape[0] = -1
    if new_shape.count(-1) > 1:
        dyn = array_ops.shape(x)
        new_shape = [dyn[i] if d == -1 else d for i, d in enumerate(new_shape)]
        new_shape[axis] = dyn[axis] * times
        new_shape = joining_ops.stack(new_shape)
    return array_ops.reshape(tiled, new_shape)


Convolution2D, Convolution1D, Deconvolution2D, Conv2DTranspose_ = (Conv2D, Conv1D,
                                                                   Conv2DTranspose,
                                                                   Conv2DTranspose)
