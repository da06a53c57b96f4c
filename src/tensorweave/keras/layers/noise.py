"""Keras regularization layers active in the training phase only: GaussianNoise,
GaussianDropout, AlphaDropout, SpatialDropout1D/2D."""

from __future__ import annotations

import math

from tensorweave.keras import backend as K
from tensorweave.keras.engine.base_layer import Layer, keras_layer
from tensorweave.ops import array_ops, math_ops, random_ops


class _TrainingOnly(Layer):
    def call(self, inputs, training=None):
        return K.in_train_phase(lambda: self._noisy(inputs), inputs, training=training)


@keras_layer
class GaussianNoise(_TrainingOnly):
    """inputs + N(0, stddev^2) noise."""

    def __init__(self, stddev, **kwargs):
        super().__init__(**kwargs)
        self.stddev = float(stddev)

    def _noisy(self, x):
        return x + random_ops.random_normal(array_ops.shape(x), stddev=self.stddev,
                                            dtype=x.dtype.base_dtype)


@keras_layer
class GaussianDropout(_TrainingOnly):
    """inputs * N(1, rate / (1 - rate)) noise."""

    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        self.rate = float(rate)

    def _noisy(self, x):
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        return x * random_ops.random_normal(array_ops.shape(x), 1.0, stddev,
                                            dtype=x.dtype.base_dtype)


@keras_layer
class AlphaDropout(_TrainingOnly):
    """Dropout that keeps SELU's mean and variance (dropped units go to -alpha')."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate, self.seed = float(rate), seed

    def _noisy(self, x):
        alpha_p = -1.6732632423543772 * 1.0507009873554805
        keep = math_ops.cast(random_ops.random_uniform(array_ops.shape(x), seed=self.seed)
                             >= self.rate, x.dtype.base_dtype)
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        return a * (x * keep + alpha_p * (1 - keep)) + b


class _SpatialDropout(Layer):
    axes_kept: tuple = ()

    def __init__(self, rate, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = float(rate)

    def call(self, inputs, training=None):
        shape = array_ops.shape(inputs)
        noise = [shape[i] if i in (0, *self.axes_kept) else 1
                 for i in range(inputs.shape.ndims)]
        noise[-1] = shape[-1]
        return K.in_train_phase(
            lambda: random_ops.dropout(inputs, rate=self.rate,
                                       noise_shape=K.stack(noise)), inputs, training=training)


@keras_layer
class SpatialDropout1D(_SpatialDropout):
    """Drops whole feature channels of (batch, steps, channels) inputs."""


@keras_layer
class SpatialDropout2D(_SpatialDropout):
    """Drops whole feature maps of (batch, rows, cols, channels) inputs."""
