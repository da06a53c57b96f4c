"""`tf.layers` 1-D and 3-D pooling: MaxPooling1D/AveragePooling1D (ExpandDims -> MaxPool /
AvgPool -> Squeeze, as TF builds them) and MaxPooling3D/AveragePooling3D (MaxPool3D /
AvgPool3D), with their functional forms."""

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


class _PoolingND(Layer):
    rank = 0
    kind = ""

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        strides = pool_size if strides is None else strides
        self.pool_size = normalize_tuple(pool_size, self.rank, "pool_size")
        self.strides = normalize_tuple(strides, self.rank, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def _full(self, values):
        first = self.data_format == "channels_first"
        return [1, 1, *values] if first else [1, *values, 1]

    def call(self, inputs):
        from tensorweave.ops import nn_conv, nn_conv3d
        from tensorweave.ops.apply import apply_op

        fmt = convert_data_format(self.data_format, self.rank + 2)
        if self.rank == 3:
            fn = nn_conv3d.max_pool3d if self.kind == "max" else nn_conv3d.avg_pool3d
            return fn(inputs, self._full(self.pool_size), self._full(self.strides),
                      self.padding.upper(), data_format=fmt)
        axis = 2 if self.data_format == "channels_first" else 1
        x = apply_op("ExpandDims", inputs, axis, name="ExpandDims")
        fn = nn_conv.max_pool if self.kind == "max" else nn_conv.avg_pool
        out = fn(x, ksize=self._full([1, *self.pool_size]),
                 strides=self._full([1, *self.strides]), padding=self.padding.upper(),
                 data_format="NCHW" if axis == 2 else "NHWC")
        return apply_op("Squeeze", out, squeeze_dims=[axis], name="Squeeze")

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = TensorShape(input_shape).as_list()
        first = self.data_format == "channels_first"
        space = dims[2:] if first else dims[1:-1]
        new = [conv_output_length(n, k, self.padding, s)
               for n, k, s in zip(space, self.pool_size, self.strides)]
        return TensorShape([dims[0], dims[1], *new] if first else [dims[0], *new, dims[-1]])


class MaxPooling1D(_PoolingND):
    rank, kind = 1, "max"


class AveragePooling1D(_PoolingND):
    rank, kind = 1, "avg"


class MaxPooling3D(_PoolingND):
    rank, kind = 3, "max"


class AveragePooling3D(_PoolingND):
    rank, kind = 3, "avg"


def _functional(cls, fn_name):
    def fn(inputs, pool_size, strides, padding="valid", data_format="channels_last",
           name=None):
        return cls(pool_size=pool_size, strides=strides, padding=padding,
                   data_format=data_format, name=name).apply(inputs)

    fn.__name__ = fn_name
    fn.__doc__ = f"TF1 `tf.layers.{fn_name}`."
    return fn


max_pooling1d = _functional(MaxPooling1D, "max_pooling1d")
average_pooling1d = _functional(AveragePooling1D, "average_pooling1d")
max_pooling3d = _functional(MaxPooling3D, "max_pooling3d")
average_pooling3d = _functional(AveragePooling3D, "average_pooling3d")
MaxPool1D, AvgPool1D, MaxPool3D, AvgPool3D = (MaxPooling1D, AveragePooling1D, MaxPooling3D,
                                              AveragePooling3D)

__all__ = ["MaxPooling1D", "AveragePooling1D", "MaxPooling3D", "AveragePooling3D",
           "max_pooling1d", "average_pooling1d", "max_pooling3d", "average_pooling3d"]
