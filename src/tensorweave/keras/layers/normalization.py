"""Keras BatchNormalization (Keras's defaults: momentum 0.99, epsilon 1e-3; the learning
phase picks batch or moving statistics) and LayerNormalization."""

from __future__ import annotations

from tensorweave.keras import backend as K
from tensorweave.keras.engine.base_layer import Layer, keras_layer
from tensorweave.ops import nn_norm
from tensorweave.training.layers import normalization as tf_norm


@keras_layer
class BatchNormalization(Layer, tf_norm.BatchNormalization):
    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, **kwargs):
        Layer.__init__(self, axis=axis, momentum=momentum, epsilon=epsilon, center=center,
                       scale=scale, beta_initializer=beta_initializer,
                       gamma_initializer=gamma_initializer,
                       moving_mean_initializer=moving_mean_initializer,
                       moving_variance_initializer=moving_variance_initializer,
                       beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
                       **kwargs)


@keras_layer
class LayerNormalization(Layer):
    """Normalizes each example over `axis`, then scales by `gamma` and shifts by `beta`."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, **kwargs):
        super().__init__(**kwargs)
        self.axis, self.epsilon, self.center, self.scale = axis, epsilon, center, scale

    def build(self, input_shape) -> None:
        dim = input_shape.as_list()[self.axis] if hasattr(input_shape, "as_list") else \
            list(input_shape)[self.axis]
        self.gamma = self.add_weight("gamma", [dim], initializer=_init("ones")) \
            if self.scale else None
        self.beta = self.add_weight("beta", [dim], initializer=_init("zeros")) \
            if self.center else None
        self.built = True

    def call(self, inputs):
        mean, variance = nn_norm.moments(inputs, [self.axis], keep_dims=True)
        out = (inputs - mean) / K.sqrt(variance + self.epsilon)
        if self.gamma is not None:
            out = out * self.gamma
        if self.beta is not None:
            out = out + self.beta
        return out


def _init(name):
    from tensorweave.keras import initializers

    return initializers.get(name)
