"""`tf.keras.activations`: the activation functions by object or name."""

from __future__ import annotations

from tensorweave.keras import backend as K
from tensorweave.ops import math_ops, nn_ops


def softmax(x, axis=-1):
    return nn_ops.softmax(x, axis=axis)


def relu(x, alpha=0.0, max_value=None, threshold=0):
    return K.relu(x, alpha=alpha, max_value=max_value, threshold=threshold)


def elu(x, alpha=1.0):
    return K.elu(x, alpha)


def selu(x):
    return nn_ops.selu(x)


def softplus(x):
    return nn_ops.softplus(x)


def softsign(x):
    return nn_ops.softsign(x)


def tanh(x):
    return math_ops.tanh(x)


def sigmoid(x):
    return math_ops.sigmoid(x)


def hard_sigmoid(x):
    return K.hard_sigmoid(x)


def exponential(x):
    return math_ops.exp(x)


def linear(x):
    return x


def swish(x):
    return x * math_ops.sigmoid(x)


def get(identifier):
    """An activation from a name (None and "linear": the identity), or a callable as is.

    Raises:
      ValueError: an unknown name.
    """
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    fn = globals().get(str(identifier))
    if callable(fn) and identifier != "get":
        return fn
    raise ValueError(f"Could not interpret activation function identifier: {identifier}")


def serialize(fn) -> str:
    return fn.__name__
