"""`tf.keras.constraints`: projections applied to a weight after each update."""

from __future__ import annotations

from tensorweave.keras import backend as K
from tensorweave.ops import math_ops


class Constraint:
    def __call__(self, w):
        return w

    def get_config(self) -> dict:
        return {}


class MaxNorm(Constraint):
    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        norms = K.sqrt(K.sum(math_ops.square(w), axis=self.axis, keepdims=True))
        desired = K.clip(norms, 0, self.max_value)
        return w * (desired / (K.epsilon() + norms))


class NonNeg(Constraint):
    def __call__(self, w):
        return w * math_ops.cast(math_ops.greater_equal(w, 0.0), K.floatx())


class UnitNorm(Constraint):
    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return w / (K.epsilon() + K.sqrt(K.sum(math_ops.square(w), axis=self.axis,
                                               keepdims=True)))


class MinMaxNorm(Constraint):
    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        norms = K.sqrt(K.sum(math_ops.square(w), axis=self.axis, keepdims=True))
        desired = self.rate * K.clip(norms, self.min_value, self.max_value) + \
            (1 - self.rate) * norms
        return w * (desired / (K.epsilon() + norms))


max_norm, non_neg, unit_norm, min_max_norm = MaxNorm, NonNeg, UnitNorm, MinMaxNorm


def get(identifier):
    if identifier is None or callable(identifier) and not isinstance(identifier, type):
        return identifier
    fn = globals().get(str(identifier))
    if fn is None:
        raise ValueError(f"Could not interpret constraint identifier: {identifier}")
    return fn()
