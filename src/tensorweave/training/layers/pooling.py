"""`tf.layers` 2-D pooling: MaxPooling2D / max_pooling2d and AveragePooling2D /
average_pooling2d (ops `max_pooling2d/MaxPool`, `average_pooling2d/AvgPool`)."""

from __future__ import annotations

from tensorweave.shapes import TensorShape
from tensorweave.training.layers.base import Layer
from tensorweave.training.layers.utils import (
    InputSpec,
    conv_output_length,
    convert_data_format,
    normalize_data_format,
    normalize_padding,
    normalize_tuple,
)


class _Pooling2D(Layer):
    """Pools windows of `pool_size` moved by `strides` (default: `pool_size`)."""

    _op_name = ""

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        if strides is None:
            strides = pool_size
        self.pool_size = normalize_tuple(pool_size, 2, "pool_size")
        self.strides = normalize_tuple(strides, 2, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        first = self.data_format == "channels_first"
        ksize = (1, 1, *self.pool_size) if first else (1, *self.pool_size, 1)
        strides = (1, 1, *self.strides) if first else (1, *self.strides, 1)
        return self._pool(inputs, list(ksize), list(strides), self.padding.upper(),
                          convert_data_format(self.data_format, 4))

    def _pool(self, inputs, ksize, strides, padding, data_format):
        raise NotImplementedError

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = TensorShape(input_shape).as_list()
        first = self.data_format == "channels_first"
        rows, cols = (dims[2], dims[3]) if first else (dims[1], dims[2])
        rows = conv_output_length(rows, self.pool_size[0], self.padding, self.strides[0])
        cols = conv_output_length(cols, self.pool_size[1], self.padding, self.strides[1])
        if first:
            return TensorShape([dims[0], dims[1], rows, cols])
        return TensorShape([dims[0], rows, cols, dims[3]])


class MaxPooling2D(_Pooling2D):
    """Max pooling for 2-D inputs (NHWC or NCHW).

    Raises:
      ValueError: malformed pool_size/strides/padding/data_format; inputs not 4-D.
    """

    def _pool(self, inputs, ksize, strides, padding, data_format):
        from tensorweave.ops import nn_conv

        return nn_conv.max_pool(inputs, ksize=ksize, strides=strides, padding=padding,
                                data_format=data_format)


class AveragePooling2D(_Pooling2D):
    """Average pooling for 2-D inputs (padding excluded from each window's mean)."""

    def _pool(self, inputs, ksize, strides, padding, data_format):
        from tensorweave.ops import nn_conv

        return nn_conv.avg_pool(inputs, ksize=ksize, strides=strides, padding=padding,
                                data_format=data_format)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """TF1 `tf.layers.max_pooling2d`.

    Example:
        h = tf.layers.max_pooling2d(h, pool_size=2, strides=2)   # [N, 8, 8, C] → [N, 4, 4, C]
    """
    layer = MaxPooling2D(pool_size=pool_size, strides=strides, padding=padding,
                         data_format=data_format, name=name)
    return layer.apply(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    """TF1 `tf.layers.average_pooling2d`."""
    layer = AveragePooling2D(pool_size=pool_size, strides=strides, padding=padding,
                             data_format=data_format, name=name)
    return layer.apply(inputs)


# TF1's aliases.
MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
max_pool2d = max_pooling2d
avg_pool2d = average_pooling2d

__all__ = ["MaxPooling2D", "max_pooling2d", "AveragePooling2D", "average_pooling2d"]
