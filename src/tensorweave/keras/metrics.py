"""`tf.keras.metrics`: per-sample metric functions `fn(y_true, y_pred)` and the names
`compile(metrics=[...])` accepts ("accuracy"/"acc" picks the accuracy the loss implies)."""

from __future__ import annotations

from collections.abc import Callable

from tensorweave import dtypes
from tensorweave.keras import backend as K
from tensorweave.keras import losses as losses_mod
from tensorweave.keras.losses import (  # noqa: F401 - Keras re-exports the losses as metrics
    binary_crossentropy,
    categorical_crossentropy,
    cosine_proximity,
    hinge,
    kullback_leibler_divergence,
    logcosh,
    mae,
    mape,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    mean_squared_logarithmic_error,
    mse,
    msle,
    poisson,
    sparse_categorical_crossentropy,
    squared_hinge,
)
from tensorweave.ops import array_ops, math_ops, nn_ops, reduction_ops


def _float(x):
    return math_ops.cast(x, K.floatx())


def binary_accuracy(y_true, y_pred, threshold=0.5):
    return K.mean(_float(math_ops.equal(y_true, _float(y_pred > threshold))), axis=-1)


def categorical_accuracy(y_true, y_pred):
    return _float(math_ops.equal(reduction_ops.argmax(y_true, -1),
                                 reduction_ops.argmax(y_pred, -1)))


def sparse_categorical_accuracy(y_true, y_pred):
    y_true = array_ops.reshape(y_true, [-1])
    predicted = math_ops.cast(reduction_ops.argmax(y_pred, -1), dtypes.float32)
    return _float(math_ops.equal(math_ops.cast(y_true, dtypes.float32),
                                 array_ops.reshape(predicted, [-1])))


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    return _float(nn_ops.in_top_k(y_pred, reduction_ops.argmax(y_true, -1), k))


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    labels = math_ops.cast(array_ops.reshape(y_true, [-1]), dtypes.int32)
    return _float(nn_ops.in_top_k(y_pred, labels, k))


def accuracy(y_true, y_pred):
    """Element-wise equality (tf.keras.metrics.accuracy); `compile(metrics=["accuracy"])`
    picks the accuracy the loss implies instead (`resolve`)."""
    return _float(math_ops.equal(y_true, y_pred))


def resolve(identifier, loss_fn, output_shape) -> tuple[str, Callable]:
    """(history name, function) of one `compile(metrics=...)` entry for an output whose loss
    is `loss_fn`: "accuracy"/"acc" become binary, sparse categorical or categorical accuracy
    as Keras picks them, reported as "acc" (TF 1.x's graph-mode name for both); other names
    and callables as they are.

    Raises:
      ValueError: an unknown metric name.
    """
    if identifier in ("accuracy", "acc"):
        return "acc", _accuracy_for(loss_fn, output_shape)
    if callable(identifier):
        return getattr(identifier, "__name__", type(identifier).__name__), identifier
    fn = globals().get(str(identifier))
    if not callable(fn):
        raise ValueError(f"Unknown metric function: {identifier}")
    return str(identifier), fn


def _accuracy_for(loss_fn, output_shape):
    """Binary accuracy for a binary loss or a single-unit output, else sparse or dense
    categorical accuracy as the loss's targets are."""
    if loss_fn is losses_mod.binary_crossentropy or (
            output_shape and output_shape[-1] == 1 and
            loss_fn is not losses_mod.sparse_categorical_crossentropy):
        return binary_accuracy
    if loss_fn is losses_mod.sparse_categorical_crossentropy:
        return sparse_categorical_accuracy
    return categorical_accuracy


def get(identifier):
    return resolve(identifier, None, None)[1]
