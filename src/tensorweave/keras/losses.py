"""`tf.keras.losses`: per-sample loss functions `fn(y_true, y_pred)` (mean over the last
axis, as Keras computes them), by object or by name."""

from __future__ import annotations

from tensorweave.keras import backend as K
from tensorweave.ops import math_ops


def mean_squared_error(y_true, y_pred):
    return K.mean(math_ops.square(y_pred - y_true), axis=-1)


def mean_absolute_error(y_true, y_pred):
    return K.mean(math_ops.abs(y_pred - y_true), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    diff = math_ops.abs((y_true - y_pred) / K.clip(math_ops.abs(y_true), K.epsilon(), None))
    return 100.0 * K.mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    first = math_ops.log(K.clip(y_pred, K.epsilon(), None) + 1.0)
    second = math_ops.log(K.clip(y_true, K.epsilon(), None) + 1.0)
    return K.mean(math_ops.square(first - second), axis=-1)


def squared_hinge(y_true, y_pred):
    return K.mean(math_ops.square(K.maximum(1.0 - y_true * y_pred, 0.0)), axis=-1)


def hinge(y_true, y_pred):
    return K.mean(K.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def logcosh(y_true, y_pred):
    x = y_pred - y_true
    return K.mean(x + K.softplus(-2.0 * x) - math_ops.log(2.0), axis=-1)


def categorical_crossentropy(y_true, y_pred, from_logits=False):
    return K.categorical_crossentropy(y_true, y_pred, from_logits=from_logits)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False):
    return K.sparse_categorical_crossentropy(y_true, y_pred, from_logits=from_logits)


def binary_crossentropy(y_true, y_pred, from_logits=False):
    return K.mean(K.binary_crossentropy(y_true, y_pred, from_logits=from_logits), axis=-1)


def kullback_leibler_divergence(y_true, y_pred):
    y_true = K.clip(y_true, K.epsilon(), 1)
    y_pred = K.clip(y_pred, K.epsilon(), 1)
    return K.sum(y_true * math_ops.log(y_true / y_pred), axis=-1)


def poisson(y_true, y_pred):
    return K.mean(y_pred - y_true * math_ops.log(y_pred + K.epsilon()), axis=-1)


def cosine_proximity(y_true, y_pred, axis=-1):
    return -K.sum(K.l2_normalize(y_true, axis) * K.l2_normalize(y_pred, axis), axis=axis)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence
cosine = cosine_proximity


class Loss:
    """A loss object: `loss(y_true, y_pred)` calls `fn` with the object's keyword arguments."""

    fn = None

    def __init__(self, reduction="auto", name=None, **kwargs):
        self.reduction, self.name, self._fn_kwargs = reduction, name, kwargs

    def __call__(self, y_true, y_pred, sample_weight=None):
        losses = self.call(y_true, y_pred)
        if sample_weight is not None:
            losses = losses * sample_weight
        return K.mean(losses)

    def call(self, y_true, y_pred):
        return type(self).fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self) -> dict:
        return {"reduction": self.reduction, "name": self.name, **self._fn_kwargs}


def _loss_class(name: str, fn, **defaults):
    def __init__(self, reduction="auto", name=name, **kwargs):
        Loss.__init__(self, reduction, name, **{**defaults, **kwargs})
    return type("".join(p.title() for p in name.split("_")) if name != "mse" else name,
                (Loss,), {"fn": staticmethod(fn), "__init__": __init__})


MeanSquaredError = _loss_class("mean_squared_error", mean_squared_error)
MeanAbsoluteError = _loss_class("mean_absolute_error", mean_absolute_error)
CategoricalCrossentropy = _loss_class("categorical_crossentropy", categorical_crossentropy,
                                      from_logits=False)
SparseCategoricalCrossentropy = _loss_class("sparse_categorical_crossentropy",
                                            sparse_categorical_crossentropy, from_logits=False)
BinaryCrossentropy = _loss_class("binary_crossentropy", binary_crossentropy, from_logits=False)
Hinge = _loss_class("hinge", hinge)
KLDivergence = _loss_class("kullback_leibler_divergence", kullback_leibler_divergence)


def get(identifier):
    """A loss function from a name (`"mse"`, `"categorical_crossentropy"`), or as is.

    Raises:
      ValueError: an unknown name or a non-callable.
    """
    if identifier is None or callable(identifier):
        return identifier
    fn = globals().get(str(identifier))
    if callable(fn) and not isinstance(fn, type):
        return fn
    raise ValueError(f"Unknown loss function: {identifier}")
