"""Keras pooling layers: Max/AveragePooling1D and 2D, Global{Average,Max}Pooling1D and 2D."""

from __future__ import annotations

from typing import Any

from tensorweave.keras import backend as K
from tensorweave.keras.engine.base_layer import Layer, keras_layer
from tensorweave.ops import array_ops, math_ops
from tensorweave.training.layers import pooling as tf_pool


def _pair(v):
    return tuple(v) if isinstance(v, (list, tuple)) else (v, v)


@keras_layer
class MaxPooling2D(Layer, tf_pool.MaxPooling2D):
    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        Layer.__init__(self, pool_size=pool_size, strides=strides or pool_size,
                       padding=padding, data_format=data_format or K.image_data_format(),
                       **kwargs)


@keras_layer
class AveragePooling2D(Layer, tf_pool.AveragePooling2D):
    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        Layer.__init__(self, pool_size=pool_size, strides=strides or pool_size,
                       padding=padding, data_format=data_format or K.image_data_format(),
                       **kwargs)


class _Pooling1D(Layer):
    pool2d: Any = None

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.pool = self.pool2d(pool_size=(1, pool_size), strides=(1, strides or pool_size),
                                padding=padding, name=f"{self.name}_2d")

    def call(self, inputs):
        return array_ops.squeeze(self.pool(array_ops.expand_dims(inputs, 1)), [1])


@keras_layer
class MaxPooling1D(_Pooling1D):
    pool2d = MaxPooling2D


@keras_layer
class AveragePooling1D(_Pooling1D):
    pool2d = AveragePooling2D


class _Global(Layer):
    axes: list = [1, 2]
    reduce = staticmethod(K.mean)

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format or K.image_data_format()

    def call(self, inputs):
        axes = self.axes if self.data_format == "channels_last" else \
            [a + 1 for a in self.axes]
        return type(self).reduce(inputs, axis=axes)


@keras_layer
class GlobalAveragePooling2D(_Global):
    pass


@keras_layer
class GlobalMaxPooling2D(_Global):
    reduce = staticmethod(K.max)


@keras_layer
class GlobalAveragePooling1D(_Global):
    """The mean over steps (over the unmasked steps when the input has a mask)."""

    axes = [1]

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        weights = array_ops.expand_dims(math_ops.cast(mask, inputs.dtype.base_dtype), -1)
        return K.sum(inputs * weights, axis=1) / K.sum(weights, axis=1)


@keras_layer
class GlobalMaxPooling1D(_Global):
    axes = [1]
    reduce = staticmethod(K.max)


MaxPool2D, AvgPool2D, MaxPool1D, AvgPool1D = (MaxPooling2D, AveragePooling2D, MaxPooling1D,
                                              AveragePooling1D)
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D
GlobalAvgPool1D, GlobalMaxPool1D = GlobalAveragePooling1D, GlobalMaxPooling1D
