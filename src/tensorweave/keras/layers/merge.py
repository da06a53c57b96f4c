"""Keras merge layers over a list of tensors: Add, Subtract, Multiply, Average, Maximum,
Minimum, Concatenate, Dot, and their functional forms (`add([a, b])`, ...)."""

from __future__ import annotations

import functools

from tensorweave.keras import backend as K
from tensorweave.keras.engine.base_layer import Layer, keras_layer
from tensorweave.ops import math_ops


class _Merge(Layer):
    def _merge(self, inputs):
        raise NotImplementedError

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(f"A merge layer should be called on a list of at least 2 inputs. "
                             f"Got {len(inputs) if isinstance(inputs, (list, tuple)) else 1} "
                             "inputs.")
        return self._merge(list(inputs))


def _fold(fn):
    return lambda self, xs: functools.reduce(fn, xs)


@keras_layer
class Add(_Merge):
    _merge = _fold(lambda a, b: a + b)


@keras_layer
class Subtract(_Merge):
    def _merge(self, inputs):
        if len(inputs) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs")
        return inputs[0] - inputs[1]


@keras_layer
class Multiply(_Merge):
    _merge = _fold(lambda a, b: a * b)


@keras_layer
class Average(_Merge):
    def _merge(self, inputs):
        return functools.reduce(lambda a, b: a + b, inputs) / float(len(inputs))


@keras_layer
class Maximum(_Merge):
    _merge = _fold(math_ops.maximum)


@keras_layer
class Minimum(_Merge):
    _merge = _fold(math_ops.minimum)


@keras_layer
class Concatenate(_Merge):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def _merge(self, inputs):
        return K.concatenate(inputs, axis=self.axis)


@keras_layer
class Dot(_Merge):
    """Dot products of pairs of samples along `axes` (normalized first when asked)."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        self.axes, self.normalize = axes, normalize

    def _merge(self, inputs):
        a, b = inputs
        axes = self.axes if isinstance(self.axes, (list, tuple)) else (self.axes, self.axes)
        if self.normalize:
            a, b = K.l2_normalize(a, axes[0]), K.l2_normalize(b, axes[1])
        return K.sum(a * b, axis=axes[0], keepdims=True) if a.shape.ndims == 2 else \
            K.sum(a * b, axis=axes[0], keepdims=True)


def _functional(cls):
    def merge(inputs, **kwargs):
        return cls(**kwargs)(inputs)
    merge.__name__ = cls.__name__.lower()
    return merge


add, subtract, multiply, average, maximum, minimum = (
    _functional(c) for c in (Add, Subtract, Multiply, Average, Maximum, Minimum))


def concatenate(inputs, axis=-1, **kwargs):
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes, normalize=False, **kwargs):
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)
