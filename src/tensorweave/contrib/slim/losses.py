"""`tf.contrib.slim.losses` = `tf.contrib.losses` (TF 1.15): the losses with contrib's
argument order (predictions or logits first), each a weighted mean added to LOSSES, and the
collection helpers. They compute what `tf.losses` computes (SUM_BY_NONZERO_WEIGHTS)."""

from __future__ import annotations

from tensorweave.training import losses as _core
from tensorweave.training.losses import (  # noqa: F401
    add_loss,
    compute_weighted_loss,
    get_losses,
    get_regularization_losses,
    get_total_loss,
)


def absolute_difference(predictions, labels=None, weights=1.0, scope=None):
    return _core.absolute_difference(labels, predictions, weights, scope=scope)


def mean_squared_error(predictions, labels=None, weights=1.0, scope=None):
    return _core.mean_squared_error(labels, predictions, weights, scope=scope)


mean_squared_error_loss = mean_squared_error


def log_loss(predictions, labels=None, weights=1.0, epsilon=1e-7, scope=None):
    return _core.log_loss(labels, predictions, weights, epsilon=epsilon, scope=scope)


def hinge_loss(logits, labels=None, scope=None):
    return _core.hinge_loss(labels, logits, scope=scope)


def huber_loss(predictions, labels=None, weights=1.0, delta=1.0, scope=None):
    return _core.huber_loss(labels, predictions, weights, delta=delta, scope=scope)


def cosine_distance(predictions, labels=None, axis=None, weights=1.0, scope=None, dim=None):
    return _core.cosine_distance(labels, predictions, axis=axis if dim is None else dim,
                                 weights=weights, scope=scope)


def mean_pairwise_squared_error(predictions, labels=None, weights=1.0, scope=None):
    return _core.mean_pairwise_squared_error(labels, predictions, weights, scope=scope)


def sigmoid_cross_entropy(logits, multi_class_labels, weights=1.0, label_smoothing=0,
                          scope=None):
    return _core.sigmoid_cross_entropy(multi_class_labels, logits, weights,
                                       label_smoothing=label_smoothing, scope=scope)


def softmax_cross_entropy(logits, onehot_labels, weights=1.0, label_smoothing=0, scope=None):
    return _core.softmax_cross_entropy(onehot_labels, logits, weights,
                                       label_smoothing=label_smoothing, scope=scope)


def sparse_softmax_cross_entropy(logits, labels, weights=1.0, scope=None):
    return _core.sparse_softmax_cross_entropy(labels, logits, weights, scope=scope)


__all__ = ["absolute_difference", "add_loss", "compute_weighted_loss", "cosine_distance",
           "get_losses", "get_regularization_losses", "get_total_loss", "hinge_loss",
           "huber_loss", "log_loss", "mean_pairwise_squared_error", "mean_squared_error",
           "sigmoid_cross_entropy", "softmax_cross_entropy", "sparse_softmax_cross_entropy"]
