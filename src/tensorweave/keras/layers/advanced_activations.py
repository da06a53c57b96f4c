"""Keras activation layers: LeakyReLU (alpha 0.3), PReLU, ELU, ThresholdedReLU, ReLU, Softmax."""

from __future__ import annotations

from tensorweave.keras import backend as K
from tensorweave.keras import initializers
from tensorweave.keras.engine.base_layer import Layer, keras_layer
from tensorweave.ops import math_ops, nn_ops


@keras_layer
class LeakyReLU(Layer):
    def __init__(self, alpha=0.3, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return nn_ops.leaky_relu(inputs, self.alpha)


@keras_layer
class PReLU(Layer):
    """max(0, x) + alpha * min(0, x) with a learned `alpha` per feature."""

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None,
                 alpha_constraint=None, shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.shared_axes = list(shared_axes) if shared_axes is not None else []

    def build(self, input_shape) -> None:
        shape = list(input_shape.as_list()[1:])
        for axis in self.shared_axes:
            shape[axis - 1] = 1
        self.alpha = self.add_weight("alpha", shape, initializer=self.alpha_initializer)
        self.built = True

    def call(self, inputs):
        return nn_ops.relu(inputs) - self.alpha * nn_ops.relu(-inputs)


@keras_layer
class ELU(Layer):
    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return K.elu(inputs, self.alpha)


@keras_layer
class ThresholdedReLU(Layer):
    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        self.theta = float(theta)

    def call(self, inputs):
        return inputs * math_ops.cast(math_ops.greater(inputs, self.theta), K.floatx())


@keras_layer
class ReLU(Layer):
    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value, self.negative_slope = max_value, negative_slope

    def call(self, inputs):
        return K.relu(inputs, alpha=self.negative_slope, max_value=self.max_value)


@keras_layer
class Softmax(Layer):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return nn_ops.softmax(inputs, axis=self.axis)
