"""Keras convolution layers: Conv1D (as a 2-D convolution over a height of one), Conv2D,
Conv2DTranspose, SeparableConv2D/DepthwiseConv2D where the op exists, and the shape layers
ZeroPadding2D, Cropping2D, UpSampling2D (nearest), ZeroPadding1D, UpSampling1D."""

from __future__ import annotations

from tensorweave.keras import backend as K
from tensorweave.keras.engine.base_layer import Layer, keras_layer
from tensorweave.ops import array_ops, joining_ops, nn_conv, nn_ops
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
class Conv1D(Layer):
    """1-D convolution over (batch, steps, channels): `kernel` [k, in, filters] (Keras's
    shape, so weights cross with tf-keras), `bias` [filters]; run as a 2-D convolution over a
    height of one."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.filters, self.kernel_size = int(filters), _pairs(kernel_size, 1)[0]
        self.strides, self.dilation_rate = _pairs(strides, 1)[0], _pairs(dilation_rate, 1)[0]
        self.padding = padding.upper()
        self.activation = _activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = _initializer(kernel_initializer)
        self.bias_initializer = _initializer(bias_initializer)
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint

    def build(self, input_shape) -> None:
        channels = int(input_shape[-1])
        self.kernel = self.add_weight("kernel", [self.kernel_size, channels, self.filters],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    def call(self, inputs):
        y = nn_conv.conv2d(array_ops.expand_dims(inputs, 1),
                           array_ops.expand_dims(self.kernel, 0),
                           strides=[1, 1, self.strides, 1], padding=self.padding,
                           dilations=[1, 1, self.dilation_rate, 1])
        y = array_ops.squeeze(y, [1])
        if self.bias is not None:
            y = nn_ops.bias_add(y, self.bias)
        return self.activation(y) if self.activation is not None else y


def _activation(identifier):
    from tensorweave.keras import activations

    return activations.get(identifier)


def _initializer(identifier):
    from tensorweave.keras import initializers

    return initializers.get(identifier)


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


Convolution2D, Convolution1D, Deconvolution2D = Conv2D, Conv1D, Conv2DTranspose


@keras_layer
class DepthwiseConv2D(Layer):
    """Per-channel 2-D convolution: `depthwise_kernel` [kh, kw, in, depth_multiplier]."""

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1,
                 data_format=None, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, depthwise_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self._weight_args = _weight_args(depthwise=(depthwise_regularizer, depthwise_constraint),
                                         bias=(bias_regularizer, bias_constraint))
        self.kernel_size, self.strides = _pairs(kernel_size), _pairs(strides)
        self.padding, self.depth_multiplier = padding.upper(), int(depth_multiplier)
        self.activation, self.use_bias = _activation(activation), use_bias
        self.depthwise_initializer = _initializer(depthwise_initializer)
        self.bias_initializer = _initializer(bias_initializer)

    def build(self, input_shape) -> None:
        channels = int(input_shape[-1])
        self.depthwise_kernel = _depthwise_kernel(self, channels)
        self.bias = self.add_weight("bias", [channels * self.depth_multiplier],
                                    initializer=self.bias_initializer,
                                    **self._weight_args["bias"]) if self.use_bias else None
        self.built = True

    def call(self, inputs):
        y = nn_conv.depthwise_conv2d(inputs, self.depthwise_kernel,
                                     [1, *self.strides, 1], self.padding)
        return _finish(self, y)


@keras_layer
class SeparableConv2D(Layer):
    """A depthwise convolution then a 1x1 one: `depthwise_kernel` [kh, kw, in, m],
    `pointwise_kernel` [1, 1, in * m, filters], `bias` [filters]."""

    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self._weight_args = _weight_args(depthwise=(depthwise_regularizer, depthwise_constraint),
                                         pointwise=(pointwise_regularizer, pointwise_constraint),
                                         bias=(bias_regularizer, bias_constraint))
        self.filters, self.depth_multiplier = int(filters), int(depth_multiplier)
        self.kernel_size = _pairs(kernel_size, self.rank)
        self.strides = _pairs(strides, self.rank)
        self.padding = padding.upper()
        self.activation, self.use_bias = _activation(activation), use_bias
        self.depthwise_initializer = _initializer(depthwise_initializer)
        self.pointwise_initializer = _initializer(pointwise_initializer)
        self.bias_initializer = _initializer(bias_initializer)

    def build(self, input_shape) -> None:
        channels = int(input_shape[-1])
        self.depthwise_kernel = _depthwise_kernel(self, channels)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", [*(1,) * self.rank, channels * self.depth_multiplier,
                                 self.filters], initializer=self.pointwise_initializer,
            **self._weight_args["pointwise"])
        self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                    **self._weight_args["bias"]) if self.use_bias else None
        self.built = True

    def _separable(self, x, depthwise, pointwise, strides):
        return nn_conv.separable_conv2d(x, depthwise, pointwise, [1, *strides, 1],
                                        self.padding)

    def call(self, inputs):
        return _finish(self, self._separable(inputs, self.depthwise_kernel,
                                             self.pointwise_kernel, self.strides))


@keras_layer
class SeparableConv1D(SeparableConv2D):
    """SeparableConv2D over a height of one (kernels [k, in, m] and [1, in * m, filters])."""

    rank = 1

    def call(self, inputs):
        y = self._separable(array_ops.expand_dims(inputs, 1),
                            array_ops.expand_dims(self.depthwise_kernel, 0),
                            array_ops.expand_dims(self.pointwise_kernel, 0),
                            (1, self.strides[0]))
        return _finish(self, array_ops.squeeze(y, [1]))


def _depthwise_kernel(layer, channels: int):
    """The [kh, kw, in, depth_multiplier] kernel of a depthwise or separable convolution."""
    return layer.add_weight(
        "depthwise_kernel", [*layer.kernel_size, channels, layer.depth_multiplier],
        initializer=layer.depthwise_initializer, **layer._weight_args["depthwise"])


def _weight_args(**weights) -> dict:
    """{weight: {"regularizer": ..., "constraint": ...}} for `add_weight`."""
    return {w: {"regularizer": r, "constraint": c} for w, (r, c) in weights.items()}


def _finish(layer, y):
    if layer.bias is not None:
        y = nn_ops.bias_add(y, layer.bias)
    return layer.activation(y) if layer.activation is not None else y


SeparableConvolution2D, SeparableConvolution1D = SeparableConv2D, SeparableConv1D
