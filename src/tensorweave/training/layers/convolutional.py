"""`tf.layers` 2-D convolutions: Conv2D / conv2d and Conv2DTranspose / conv2d_transpose.

Variables are TF1's: `conv2d/kernel` [kh, kw, in, filters] and `conv2d/bias` [filters];
a transposed convolution's kernel is [kh, kw, filters, in]. Ops: `conv2d/Conv2D`,
`conv2d/BiasAdd`, the activation; `conv2d_transpose/conv2d_transpose`
(a Conv2DBackpropInput) for the transposed layer.
"""

from __future__ import annotations

from tensorweave.ops import init_ops
from tensorweave.shapes import TensorShape
from tensorweave.training.layers.base import Layer
from tensorweave.training.layers.utils import (
    InputSpec,
    conv_output_length,
    convert_data_format,
    deconv_output_length,
    get_activation,
    get_initializer,
    normalize_data_format,
    normalize_padding,
    normalize_tuple,
)


class Conv2D(Layer):
    """2-D convolution: `activation(conv2d(inputs, kernel) + bias)`.

    Args mirror TF1: `filters`, `kernel_size` (int or pair), `strides`, `padding`
    ("valid"/"same", any case), `data_format` ("channels_last"/"channels_first"),
    `dilation_rate`, `activation`, `use_bias`, initializers, regularizers, constraints.
    Raises:
      ValueError: non-positive filters, zero kernel sizes, malformed tuples, strides > 1
        together with a dilation rate > 1, or (on first call) an unknown channel dimension.
    """

    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.filters = int(filters)
        if self.filters <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly "
                             f"positive value. Received filters={filters}.")
        self.kernel_size = normalize_tuple(kernel_size, self.rank, "kernel_size")
        if not all(self.kernel_size):
            raise ValueError(f"The argument `kernel_size` cannot contain 0(s). Received: "
                             f"{kernel_size}")
        self.strides = normalize_tuple(strides, self.rank, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.dilation_rate = normalize_tuple(dilation_rate, self.rank, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("`strides > 1` not supported in conjunction with "
                             f"`dilation_rate > 1`. Received: strides={self.strides} and "
                             f"dilation_rate={self.dilation_rate}")
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = get_initializer(kernel_initializer)
        self.bias_initializer = get_initializer(bias_initializer) or init_ops.zeros_initializer()
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.kernel = self.bias = None
        self.input_spec = InputSpec(min_ndim=self.rank + 2)

    @property
    def _channel_axis(self) -> int:
        return 1 if self.data_format == "channels_first" else -1

    def _input_channels(self, input_shape) -> int:
        dims = TensorShape(input_shape).as_tuple()
        channels = dims[self._channel_axis] if dims else None
        if channels is None:
            raise ValueError(f"The channel dimension of the inputs should be defined. The "
                             f"input_shape received is {input_shape}, where axis "
                             f"{self._channel_axis} (0-based) is the channel dimension, which "
                             "found to be `None`.")
        return int(channels)

    def _kernel_shape(self, channels: int) -> tuple:
        return (*self.kernel_size, channels, self.filters)

    def build(self, input_shape) -> None:
        channels = self._input_channels(input_shape)
        self.kernel = self.add_weight(
            "kernel", shape=self._kernel_shape(channels), initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
            trainable=True, dtype=self.dtype)
        if self.use_bias:
            self.bias = self.add_weight(
                "bias", shape=(self.filters,), initializer=self.bias_initializer,
                regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                trainable=True, dtype=self.dtype)
        self.input_spec = InputSpec(min_ndim=self.rank + 2,
                                    axes={self._channel_axis: channels})
        self.built = True

    @property
    def _tf_data_format(self) -> str:
        return convert_data_format(self.data_format, self.rank + 2)

    def _convolution(self, inputs):
        from tensorweave.ops import nn_conv

        return nn_conv.conv2d(inputs, self.kernel, strides=list(self.strides),
                              padding=self.padding.upper(), data_format=self._tf_data_format,
                              dilations=list(self.dilation_rate), name="Conv2D")

    def _finish(self, outputs):
        from tensorweave.ops import nn_ops

        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias, data_format=self._tf_data_format)
        if self.activation is not None:
            return self.activation(outputs)
        return outputs

    def call(self, inputs):
        return self._finish(self._convolution(inputs))

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = TensorShape(input_shape).as_list()
        first = self.data_format == "channels_first"
        space = dims[2:] if first else dims[1:-1]
        new = [conv_output_length(n, k, self.padding, s, d) for n, k, s, d in
               zip(space, self.kernel_size, self.strides, self.dilation_rate)]
        if first:
            return TensorShape([dims[0], self.filters, *new])
        return TensorShape([dims[0], *new, self.filters])


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """TF1 `tf.layers.conv2d`: a 2-D convolution layer applied to `inputs`.

    Example:
        h = tf.layers.conv2d(images, 32, 3, padding="same", activation=tf.nn.relu)
    """
    layer = Conv2D(filters=filters, kernel_size=kernel_size, strides=strides, padding=padding,
                   data_format=data_format, dilation_rate=dilation_rate,
                   activation=activation, use_bias=use_bias,
                   kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                   kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                   activity_regularizer=activity_regularizer,
                   kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                   trainable=trainable, name=name, _reuse=reuse, _scope=name)
    return layer.apply(inputs)


class Conv2DTranspose(Conv2D):
    """Transposed 2-D convolution (the gradient of conv2d w.r.t. its input), with a kernel
    [kh, kw, filters, in_channels]. The output size per spatial axis is `n * stride` for
    "same" and `n * stride + max(k - stride, 0)` for "valid" (or exact with
    `output_padding`).

    Raises:
      ValueError: as Conv2D; `output_padding` not smaller than the stride; inputs not 4-D.
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, output_padding=None,
                 dilation_rate=(1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate,
                         activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint,
                         bias_constraint=bias_constraint, trainable=trainable, name=name,
                         **kwargs)
        self.output_padding = output_padding
        if output_padding is not None:
            self.output_padding = normalize_tuple(output_padding, 2, "output_padding")
            for stride, pad in zip(self.strides, self.output_padding):
                if pad >= stride:
                    raise ValueError(f"Strides must be greater than output padding. Received "
                                     f"strides={self.strides}, "
                                     f"output_padding={self.output_padding}.")
        self.input_spec = InputSpec(ndim=4)

    def _kernel_shape(self, channels: int) -> tuple:
        return (*self.kernel_size, self.filters, channels)

    def build(self, input_shape) -> None:
        if TensorShape(input_shape).ndims != 4:
            raise ValueError(f"Inputs should have rank 4. Received input_shape={input_shape}.")
        super().build(input_shape)
        self.input_spec = InputSpec(ndim=4,
                                    axes={self._channel_axis: self._input_channels(input_shape)})

    def _out_sizes(self, sizes) -> list:
        pads = self.output_padding or (None, None)
        return [deconv_output_length(n, k, self.padding, output_padding=p, stride=s,
                                     dilation=d)
                for n, k, p, s, d in zip(sizes, self.kernel_size, pads, self.strides,
                                         self.dilation_rate)]

    def _output_shape(self, inputs) -> list:
        from tensorweave.ops import array_ops

        dynamic = array_ops.shape(inputs)
        dims = inputs.shape.as_tuple() or (None,) * 4
        axes = (2, 3) if self.data_format == "channels_first" else (1, 2)
        sizes = [dims[a] if dims[a] is not None else dynamic[a] for a in axes]
        if any(not isinstance(s, int) for s in sizes):  # a dynamic size: compute in-graph
            sizes = [s if isinstance(s, int) else _deconv_length_tensor(self, s, i)
                     for i, s in enumerate(sizes)]
        else:
            sizes = self._out_sizes(sizes)
        batch = dynamic[0]
        if self.data_format == "channels_first":
            return [batch, self.filters, *sizes]
        return [batch, *sizes, self.filters]

    def _convolution(self, inputs):
        from tensorweave.ops import nn_conv
        from tensorweave.ops.joining_ops import stack

        output_shape = stack(self._output_shape(inputs))
        strides = [1, 1, *self.strides] if self.data_format == "channels_first" \
            else [1, *self.strides, 1]
        outputs = nn_conv.conv2d_transpose(
            inputs, self.kernel, output_shape, strides=strides,
            padding=self.padding.upper(), data_format=self._tf_data_format,
            dilations=[1, 1, *self.dilation_rate] if self.data_format == "channels_first"
            else [1, *self.dilation_rate, 1])
        if inputs.shape.ndims:
            outputs.set_shape(self.compute_output_shape(inputs.shape))
        return outputs

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = TensorShape(input_shape).as_list()
        if self.data_format == "channels_first":
            return TensorShape([dims[0], self.filters, *self._out_sizes(dims[2:])])
        return TensorShape([dims[0], *self._out_sizes(dims[1:3]), self.filters])


def _deconv_length_tensor(layer, size, axis: int):
    """The output length of a dynamic input length `size` (an int32 scalar tensor)."""
    k = layer.kernel_size[axis] + (layer.kernel_size[axis] - 1) * (layer.dilation_rate[axis] - 1)
    s = layer.strides[axis]
    if layer.output_padding is not None:
        pad = k // 2 if layer.padding == "same" else 0
        return (size - 1) * s + k - 2 * pad + layer.output_padding[axis]
    if layer.padding == "valid":
        return size * s + max(k - s, 0)
    return size * s


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    """TF1 `tf.layers.conv2d_transpose`: a transposed convolution layer applied to `inputs`."""
    layer = Conv2DTranspose(
        filters=filters, kernel_size=kernel_size, strides=strides, padding=padding,
        data_format=data_format, activation=activation, use_bias=use_bias,
        kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
        kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
        activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
        bias_constraint=bias_constraint, trainable=trainable, name=name, _reuse=reuse,
        _scope=name)
    return layer.apply(inputs)


# TF1's aliases.
Convolution2D = Conv2D
Convolution2DTranspose = Deconvolution2D = Deconv2D = Conv2DTranspose
convolution2d = conv2d
convolution2d_transpose = deconvolution2d = deconv2d = conv2d_transpose

__all__ = ["Conv2D", "conv2d", "Conv2DTranspose", "conv2d_transpose"]
