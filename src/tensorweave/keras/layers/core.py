"""Keras core layers: Dense, Activation, Dropout, Flatten, Reshape, Permute, RepeatVector,
Lambda, ActivityRegularization, Masking (masks are not propagated: it passes values on)."""

from __future__ import annotations

from tensorweave.keras import backend as K
from tensorweave.keras.engine.base_layer import Layer, keras_layer
from tensorweave.ops import array_ops, joining_ops, math_ops
from tensorweave.training.layers import core as tf_core
from tensorweave.training.layers.utils import get_activation


@keras_layer
class Dense(Layer, tf_core.Dense):
    """`activation(inputs @ kernel + bias)`; `kernel` glorot_uniform, `bias` zeros."""

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        Layer.__init__(self, units=units, activation=activation, use_bias=use_bias,
                       kernel_initializer=kernel_initializer,
                       bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                       bias_regularizer=bias_regularizer,
                       activity_regularizer=activity_regularizer,
                       kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                       **kwargs)


@keras_layer
class Dropout(Layer, tf_core.Dropout):
    """Drops `rate` of the inputs in the training phase, the identity otherwise."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        Layer.__init__(self, rate=rate, noise_shape=noise_shape, seed=seed, **kwargs)


@keras_layer
class Flatten(Layer, tf_core.Flatten):
    def __init__(self, data_format=None, **kwargs):
        Layer.__init__(self, data_format=data_format, **kwargs)


@keras_layer
class Activation(Layer):
    """`activation(inputs)`, by name ("relu", "softmax", ...) or callable."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = _activation(activation)

    def call(self, inputs):
        return self.activation(inputs) if self.activation else inputs


def _activation(identifier):
    from tensorweave.keras import activations

    return activations.get(identifier)


@keras_layer
class Reshape(Layer):
    """Reshapes each example to `target_shape` (one -1 allowed)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def call(self, inputs):
        return array_ops.reshape(inputs, [-1, *self.target_shape])


@keras_layer
class Permute(Layer):
    """Permutes the non-batch axes (`dims` counts them from 1)."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)

    def call(self, inputs):
        return joining_ops.transpose(inputs, [0, *self.dims])


@keras_layer
class RepeatVector(Layer):
    """(batch, d) → (batch, n, d)."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = int(n)

    def call(self, inputs):
        return K.repeat(inputs, self.n)


@keras_layer
class Lambda(Layer):
    """Wraps `function(inputs, **arguments)` as a layer."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function, self.arguments = function, dict(arguments or {})
        self._output_shape = output_shape

    def call(self, inputs):
        return self.function(inputs, **self.arguments)


@keras_layer
class ActivityRegularization(Layer):
    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        from tensorweave.keras import regularizers

        super().__init__(activity_regularizer=regularizers.L1L2(l1, l2), **kwargs)

    def call(self, inputs):
        return inputs


@keras_layer
class Masking(Layer):
    """Zeroes the timesteps whose features all equal `mask_value` (no mask propagation)."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def call(self, inputs):
        keep = K.any(math_ops.not_equal(inputs, self.mask_value), axis=-1, keepdims=True)
        return inputs * math_ops.cast(keep, inputs.dtype.base_dtype)


__all__ = ["Dense", "Dropout", "Flatten", "Activation", "Reshape", "Permute", "RepeatVector",
           "Lambda", "ActivityRegularization", "Masking", "get_activation"]
