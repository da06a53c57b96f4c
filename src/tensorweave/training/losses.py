"""`tf.losses` (TF1's losses_impl and losses.util): weighted, reduced losses that add
themselves to the LOSSES collection, and the collection helpers (`get_total_loss`, ...).

Every loss computes per-element losses in float32, multiplies them by `weights` (a scalar or
a tensor broadcastable to the losses, checked as TF checks it) and reduces them per
`reduction`; the default SUM_BY_NONZERO_WEIGHTS divides the weighted sum by the number of
elements with non-zero weight (all elements for a Python-float weight). A scalar result is
cast back to the input dtype and added to `loss_collection`.

Example:
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    total = tf.losses.get_total_loss()    # loss + every REGULARIZATION_LOSSES entry
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.graph import GraphKeys, add_to_collection, get_collection
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import math_ops, reduction_ops
from tensorweave.training.weights_broadcast import (
    assert_broadcastable,
    broadcast_weights,
    remove_squeezable_dimensions,
)


class Reduction:
    """How a weighted loss is reduced (TF1's string values)."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key) -> None:
        """Raises ValueError for anything but the values above."""
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}. Key should be one of {cls.all()}.")


# -- reduction --------------------------------------------------------------------------------
def _safe_mean(losses, num_present):
    total = reduction_ops.reduce_sum(losses)
    return math_ops.div_no_nan(total, num_present, name="value")


def _num_elements(losses):
    from tensorweave.ops import array_ops

    with name_scope(None, "num_elements", [losses]) as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), dtype=losses.dtype)


def _num_present(losses, weights, per_batch=False):
    """The number of elements of `losses` whose (broadcast) weight is non-zero."""
    from tensorweave.ops import array_ops, creation_ops, gather_ops

    if isinstance(weights, float) and weights != 0.0:
        return _num_elements(losses)
    with name_scope(None, "num_present", [losses, weights]) as scope:
        weights = math_ops.cast(weights, dtype=dtypes.float32)
        present = gather_ops.where(math_ops.equal(weights, 0.0),
                                   creation_ops.zeros_like(weights),
                                   creation_ops.ones_like(weights))
        present = broadcast_weights(present, losses)
        if per_batch:
            axis = creation_ops.range(1, array_ops.rank(present))
            return reduction_ops.reduce_sum(present, axis=axis, keepdims=True, name=scope)
        return reduction_ops.reduce_sum(present, name=scope)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """`losses * weights`, reduced per `reduction`, cast to the losses' dtype and added to
    `loss_collection` (None: to no collection).

    Raises:
      ValueError: an invalid reduction; weights that cannot broadcast to the losses.
    """
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss", [losses, weights]):
        with control_dependencies([assert_broadcastable(weights, losses)]):
            return _compute_loss(losses, weights, loss_collection, reduction)


def _compute_loss(losses, weights, loss_collection, reduction):
    from tensorweave.ops import creation_ops

    losses = convert_to_tensor(losses)
    input_dtype = losses.dtype
    losses = math_ops.cast(losses, dtype=dtypes.float32)
    weights = math_ops.cast(weights, dtype=dtypes.float32)
    weighted = math_ops.multiply(losses, weights)
    if reduction == Reduction.NONE:
        loss = weighted
    else:
        loss = reduction_ops.reduce_sum(weighted)
        if reduction == Reduction.MEAN:
            loss = _safe_mean(loss, reduction_ops.reduce_sum(
                creation_ops.ones_like(losses) * weights))
        elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
            loss = _safe_mean(loss, _num_present(losses, weights))
        elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
            loss = _safe_mean(loss, _num_elements(losses))
    loss = math_ops.cast(loss, input_dtype)
    add_loss(loss, loss_collection)
    return loss


def _check_args(**named) -> None:
    for arg, value in named.items():
        if value is None:
            raise ValueError(f"Argument `{arg}` must not be None.")


def _float_pair(predictions, labels):
    predictions = math_ops.cast(predictions, dtype=dtypes.float32)
    labels = math_ops.cast(labels, dtype=dtypes.float32)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return predictions, labels


# -- the losses -------------------------------------------------------------------------------
def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weighted |predictions - labels|.

    Raises:
      ValueError: None arguments, incompatible shapes, bad weights or reduction.
    """
    _check_args(labels=labels, predictions=predictions)
    with name_scope(scope, "absolute_difference", [predictions, labels, weights]) as scope:
        predictions, labels = _float_pair(predictions, labels)
        losses = math_ops.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    """Weighted 1 - sum(predictions * labels, axis) for unit-normalized inputs.

    Raises:
      ValueError: no `axis`; None arguments; incompatible shapes.
    """
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    _check_args(labels=labels, predictions=predictions)
    with name_scope(scope, "cosine_distance_loss", [predictions, labels, weights]) as scope:
        predictions, labels = _float_pair(predictions, labels)
        radial = math_ops.multiply(predictions, labels)
        losses = 1 - reduction_ops.reduce_sum(radial, axis=(axis,), keepdims=True)
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weighted max(0, 1 - (2 * labels - 1) * logits) for labels in {0, 1}."""
    from tensorweave.ops import creation_ops, nn_ops

    _check_args(labels=labels, logits=logits)
    with name_scope(scope, "hinge_loss", [logits, labels, weights]) as scope:
        logits, labels = _float_pair(logits, labels)
        all_ones = creation_ops.ones_like(labels)
        labels = math_ops.subtract(2 * labels, all_ones)
        losses = nn_ops.relu(math_ops.subtract(all_ones, math_ops.multiply(labels, logits)))
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weighted Huber loss: 0.5 * e^2 where |e| <= delta, else delta * (|e| - 0.5 * delta)."""
    _check_args(labels=labels, predictions=predictions)
    with name_scope(scope, "huber_loss", [predictions, labels, weights]) as scope:
        predictions, labels = _float_pair(predictions, labels)
        abs_error = math_ops.abs(math_ops.subtract(predictions, labels))
        quadratic = math_ops.minimum(abs_error, delta)
        linear = math_ops.subtract(abs_error, quadratic)
        losses = math_ops.add(
            math_ops.multiply(convert_to_tensor(0.5, dtype=quadratic.dtype),
                              math_ops.multiply(quadratic, quadratic)),
            math_ops.multiply(delta, linear))
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weighted -labels * log(p + eps) - (1 - labels) * log(1 - p + eps)."""
    _check_args(labels=labels, predictions=predictions)
    with name_scope(scope, "log_loss", [predictions, labels, weights]) as scope:
        predictions, labels = _float_pair(predictions, labels)
        losses = -math_ops.multiply(labels, math_ops.log(predictions + epsilon)) - \
            math_ops.multiply(1 - labels, math_ops.log(1 - predictions + epsilon))
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weighted (predictions - labels)^2."""
    _check_args(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_squared_error", [predictions, labels, weights]) as scope:
        predictions, labels = _float_pair(predictions, labels)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=GraphKeys.LOSSES):
    """Weighted mean over the batch of each example's mean squared difference between all
    pairs of (predictions - labels) entries: for d = predictions - labels of one example
    with n entries, 2 * sum(d^2) / (n - 1) - 2 * sum(d)^2 / (n * (n - 1)).

    Raises:
      ValueError: None arguments or incompatible shapes.
    """
    _check_args(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_pairwise_squared_error", [predictions, labels, weights]):
        weights = math_ops.cast(weights, dtype=dtypes.float32)
        labels = math_ops.cast(labels, dtype=dtypes.float32)
        with control_dependencies([assert_broadcastable(weights, labels)]):
            return _pairwise_loss(labels, predictions, weights, loss_collection)


def _pairwise_loss(labels, predictions, weights, loss_collection):
    from tensorweave.ops import array_ops, creation_ops, gather_ops

    predictions = math_ops.cast(predictions, dtype=dtypes.float32)
    predictions.shape.assert_is_compatible_with(labels.shape)
    diffs = math_ops.subtract(predictions, labels)
    axis = creation_ops.range(1, array_ops.rank(diffs))
    sum_squares = reduction_ops.reduce_sum(math_ops.square(diffs), axis=axis, keepdims=True)
    num_present = _num_present(diffs, weights, per_batch=True)
    term1 = 2.0 * math_ops.div_no_nan(sum_squares, math_ops.maximum(num_present - 1, 0),
                                      name="value")
    sum_diff = reduction_ops.reduce_sum(diffs, axis=axis, keepdims=True)
    term2 = 2.0 * math_ops.div_no_nan(
        math_ops.square(sum_diff),
        math_ops.maximum(math_ops.multiply(num_present, num_present - 1), 0), name="value")
    loss = reduction_ops.reduce_sum(math_ops.multiply(term1 - term2, weights))
    mean_loss = gather_ops.where(reduction_ops.reduce_sum(num_present) > 0, loss,
                                 creation_ops.zeros_like(loss), name="value")
    add_loss(mean_loss, loss_collection)
    return mean_loss


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weighted sigmoid cross entropy; labels smoothed toward 0.5 by `label_smoothing`."""
    from tensorweave.ops import nn_losses

    _check_args(multi_class_labels=multi_class_labels, logits=logits)
    with name_scope(scope, "sigmoid_cross_entropy_loss",
                    [logits, multi_class_labels, weights]) as scope:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(multi_class_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_losses.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                             name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weighted softmax cross entropy of one-hot labels (no gradient into the labels);
    `label_smoothing` s gives labels * (1 - s) + s / num_classes."""
    from tensorweave.ops import array_ops, nn_losses

    _check_args(onehot_labels=onehot_labels, logits=logits)
    with name_scope(scope, "softmax_cross_entropy_loss",
                    [logits, onehot_labels, weights]) as scope:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(onehot_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            num_classes = math_ops.cast(array_ops.shape(labels)[-1], logits.dtype)
            labels = labels * (1.0 - label_smoothing) + label_smoothing / num_classes
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
        losses = nn_losses.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits,
                                                                name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def _squeeze_weights(labels, logits, weights):
    """Squeezes a trailing size-1 axis from labels (rank(logits) - 1 expected) and weights."""
    from tensorweave.ops import array_ops
    from tensorweave.ops.control_flow_ops import cond

    labels, logits = remove_squeezable_dimensions(labels, logits, expected_rank_diff=1)
    weights = convert_to_tensor(weights)
    l_rank, w_shape = labels.shape.ndims, weights.shape
    if l_rank is not None and w_shape.ndims is not None:
        if w_shape.ndims - l_rank == 1:
            weights = array_ops.squeeze(weights, [-1])
        return labels, logits, weights
    rank_diff = array_ops.rank(weights) - array_ops.rank(labels)
    if w_shape.ndims is None or (w_shape.ndims > 0 and w_shape.dims[-1].is_compatible_with(1)):
        w = weights
        weights = cond(math_ops.equal(1, rank_diff), lambda: array_ops.squeeze(w, [-1]),
                       lambda: w)
    return labels, logits, weights


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weighted softmax cross entropy of integer class labels ([batch] or [batch, 1])."""
    from tensorweave.ops import nn_losses

    _check_args(labels=labels, logits=logits)
    with name_scope(scope, "sparse_softmax_cross_entropy_loss",
                    [logits, labels, weights]) as scope:
        labels, logits, weights = _squeeze_weights(labels, logits, weights)
        losses = nn_losses.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                    logits=logits,
                                                                    name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


# -- collections (TF's losses.util) -----------------------------------------------------------
def add_loss(loss, loss_collection=GraphKeys.LOSSES) -> None:
    """Adds `loss` to `loss_collection` (nothing when the collection is None or empty)."""
    if loss_collection:
        add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES) -> list:
    """The losses in `loss_collection`, filtered by name-regex `scope`."""
    return get_collection(loss_collection, scope)


def get_regularization_losses(scope=None) -> list:
    """The REGULARIZATION_LOSSES, filtered by name-regex `scope`."""
    return get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum (AddN named `name`) of the regularization losses, or a 0.0 constant."""
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.math_matmul_ops import add_n

    losses = get_regularization_losses(scope)
    if losses:
        return add_n(losses, name=name)
    return constant(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum (AddN named `name`) of LOSSES and, by default, REGULARIZATION_LOSSES.

    Raises:
      ValueError: there are no losses at all.
    """
    from tensorweave.ops.math_matmul_ops import add_n

    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    return add_n(losses, name=name)


__all__ = [
    "Reduction", "absolute_difference", "add_loss", "compute_weighted_loss", "cosine_distance",
    "get_losses", "get_regularization_loss", "get_regularization_losses", "get_total_loss",
    "hinge_loss", "huber_loss", "log_loss", "mean_pairwise_squared_error", "mean_squared_error",
    "sigmoid_cross_entropy", "softmax_cross_entropy", "sparse_softmax_cross_entropy",
]
