"""`tf.metrics` (TF1's metrics_impl): streaming metrics as (value, update_op) pairs.

Each metric keeps running totals in local variables (LOCAL_VARIABLES and METRIC_VARIABLES,
e.g. `accuracy/total`, `accuracy/count`); `update_op` adds one batch and returns the updated
metric, `value` reads it. Initialize (or reset) with `tf.local_variables_initializer()`.

Example:
    acc, acc_update = tf.metrics.accuracy(labels=y, predictions=tf.argmax(logits, 1))
    sess.run(tf.local_variables_initializer())
    for batch in batches:
        sess.run(acc_update, feed_dict=batch)
    print(sess.run(acc))
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.graph import GraphKeys, add_to_collections
from tensorweave.framework.scopes import control_dependencies
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import math_ops, reduction_ops, state_ops
from tensorweave.ops.variable_scope import variable_scope
from tensorweave.ops.variables import Variable
from tensorweave.training.weights_broadcast import (
    broadcast_weights,
    remove_squeezable_dimensions,
)


def metric_variable(shape, dtype, validate_shape=True, name=None) -> Variable:
    """A zero-initialized, non-trainable variable in LOCAL_VARIABLES and METRIC_VARIABLES."""
    from tensorweave.ops.creation_ops import zeros

    return Variable(lambda: zeros(shape, dtype), trainable=False,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                    validate_shape=validate_shape, name=name)


def _remove_squeezable_dimensions(predictions, labels, weights):
    """Squeezes labels/predictions to the same rank; weights squeezed or expanded to match."""
    from tensorweave.ops import array_ops

    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels, predictions = remove_squeezable_dimensions(labels, predictions)
        predictions.shape.assert_is_compatible_with(labels.shape)
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    w_rank, p_rank = weights.shape.ndims, predictions.shape.ndims
    if w_rank == 0:
        return predictions, labels, weights
    if w_rank is not None and p_rank is not None:
        if w_rank - p_rank == 1:
            weights = array_ops.squeeze(weights, [-1])
        elif p_rank - w_rank == 1:
            weights = array_ops.expand_dims(weights, [-1])
        return predictions, labels, weights
    return predictions, labels, _adjust_weights_dynamic(predictions, weights)


def _adjust_weights_dynamic(predictions, weights):
    from tensorweave.ops import array_ops
    from tensorweave.ops.control_flow_ops import cond

    w_rank = array_ops.rank(weights)
    rank_diff = w_rank - array_ops.rank(predictions)

    def expand():
        return cond(math_ops.equal(rank_diff, -1),
                    lambda: array_ops.expand_dims(weights, [-1]), lambda: weights)

    def adjust():
        dims = weights.shape.as_tuple()
        if dims is not None and dims[-1] not in (None, 1):
            squeeze = lambda: weights  # noqa: E731
        else:
            squeeze = lambda: array_ops.squeeze(weights, [-1])  # noqa: E731
        return cond(math_ops.equal(rank_diff, 1), squeeze, expand)

    return cond(math_ops.equal(w_rank, 0), lambda: weights, adjust)


def _publish(value, update_op, metrics_collections, updates_collections):
    if metrics_collections:
        add_to_collections(metrics_collections, value)
    if updates_collections:
        add_to_collections(updates_collections, update_op)
    return value, update_op


# -- mean family ------------------------------------------------------------------------------
def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of all `values` seen: total / count, 0 before any update.

    Returns:
      (mean, update_op): `<name>/value` and `<name>/update_op`.
    Raises:
      ValueError: weights that cannot broadcast to `values`.
    """
    from tensorweave.ops import array_ops

    with variable_scope(name, "mean", [values, weights]):
        values = math_ops.cast(values, dtypes.float32)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        else:
            values, _, weights = _remove_squeezable_dimensions(values, None, weights)
            weights = broadcast_weights(math_ops.cast(weights, dtypes.float32), values)
            values = math_ops.multiply(values, weights)
            num_values = reduction_ops.reduce_sum(weights)
        update_total = state_ops.assign_add(total, reduction_ops.reduce_sum(values))
        with control_dependencies([values]):
            update_count = state_ops.assign_add(count, num_values)
        value = math_ops.div_no_nan(total, math_ops.maximum(count, 0), name="value")
        update_op = math_ops.div_no_nan(update_total, math_ops.maximum(update_count, 0),
                                        name="update_op")
        return _publish(value, update_op, metrics_collections, updates_collections)


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None,
                name=None):
    """The element-wise (weighted) mean of `values` over all updates (same shape as values).

    Raises:
      ValueError: `values` of unknown shape; weights that cannot broadcast.
    """
    from tensorweave.ops import creation_ops

    with variable_scope(name, "mean", [values, weights]):
        values = math_ops.cast(values, dtypes.float32)
        total = metric_variable(values.shape, dtypes.float32, name="total_tensor")
        count = metric_variable(values.shape, dtypes.float32, name="count_tensor")
        num_values = creation_ops.ones_like(values)
        if weights is not None:
            values, _, weights = _remove_squeezable_dimensions(values, None, weights)
            weights = broadcast_weights(math_ops.cast(weights, dtypes.float32), values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.multiply(num_values, weights)
        update_total = state_ops.assign_add(total, values)
        with control_dependencies([values]):
            update_count = state_ops.assign_add(count, num_values)
        value = math_ops.div_no_nan(total, math_ops.maximum(count, 0), name="value")
        update_op = math_ops.div_no_nan(update_total, math_ops.maximum(update_count, 0),
                                        name="update_op")
        return _publish(value, update_op, metrics_collections, updates_collections)


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """The (weighted) fraction of `predictions` equal to `labels`: `mean(equal(...))` in
    the scope `accuracy` (variables `accuracy/total`, `accuracy/count`).

    Raises:
      ValueError: labels and predictions of incompatible shapes.
    """
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    predictions.shape.assert_is_compatible_with(labels.shape)
    if labels.dtype != predictions.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections,
                name or "accuracy")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """The running (weighted) mean of |predictions - labels|."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    errors = math_ops.abs(predictions - labels)
    return mean(errors, weights, metrics_collections, updates_collections,
                name or "mean_absolute_error")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    """The running (weighted) mean of (labels - predictions)^2."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    errors = math_ops.squared_difference(labels, predictions)
    return mean(errors, weights, metrics_collections, updates_collections,
                name or "mean_squared_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """sqrt of the running mean squared error."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None,
                                         name or "root_mean_squared_error")
    return _publish(math_ops.sqrt(mse), math_ops.sqrt(update_mse), metrics_collections,
                    updates_collections)


# -- counts, precision, recall ----------------------------------------------------------------
def _count_condition(values, weights=None, metrics_collections=None,
                     updates_collections=None):
    from tensorweave.ops import array_ops

    if values.dtype.base_dtype != dtypes.bool_:
        raise TypeError(f"{values.name} must be of type bool, got {values.dtype.name}")
    count = metric_variable([], dtypes.float32, name="count")
    values = math_ops.cast(values, dtypes.float32)
    if weights is not None:
        values = math_ops.multiply(values, math_ops.cast(weights, dtypes.float32))
    value = array_ops.identity(count)
    update_op = state_ops.assign_add(count, reduction_ops.reduce_sum(values))
    return _publish(value, update_op, metrics_collections, updates_collections)


def _bool_inputs(labels, predictions, weights):
    predictions, labels, weights = _remove_squeezable_dimensions(
        math_ops.cast(predictions, dtypes.bool_), math_ops.cast(labels, dtypes.bool_),
        weights)
    return labels, predictions, weights


def _counter(default_name: str, label_value: bool, prediction_value: bool):
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, default_name, [predictions, labels, weights]):
            labels, predictions, weights = _bool_inputs(labels, predictions, weights)
            hit = math_ops.logical_and(math_ops.equal(labels, label_value),
                                       math_ops.equal(predictions, prediction_value))
            return _count_condition(hit, weights, metrics_collections, updates_collections)

    metric.__name__ = default_name
    metric.__doc__ = (f"The running (weighted) count of {default_name.replace('_', ' ')} "
                      "(labels and predictions cast to bool). Returns (count, update_op).")
    return metric


true_positives = _counter("true_positives", True, True)
false_positives = _counter("false_positives", False, True)
false_negatives = _counter("false_negatives", True, False)
true_negatives = _counter("true_negatives", False, False)


def _ratio(tp, other, name: str):
    from tensorweave.ops import gather_ops

    return gather_ops.where(math_ops.greater(tp + other, 0),
                            math_ops.divide(tp, tp + other), 0.0, name=name)


def _ratio_metric(default_name: str, other_counter):
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, default_name, [predictions, labels, weights]):
            labels, predictions, weights = _bool_inputs(labels, predictions, weights)
            tp, tp_update = true_positives(labels, predictions, weights)
            other, other_update = other_counter(labels, predictions, weights)
            return _publish(_ratio(tp, other, "value"),
                            _ratio(tp_update, other_update, "update_op"),
                            metrics_collections, updates_collections)

    metric.__name__ = default_name
    return metric


precision = _ratio_metric("precision", false_positives)
precision.__doc__ = "tp / (tp + fp) over all updates (0 when nothing was predicted true)."
recall = _ratio_metric("recall", false_negatives)
recall.__doc__ = "tp / (tp + fn) over all updates (0 when no label was true)."

# NOTE: last, as the threshold metrics build on this module's helpers.
from tensorweave.training.metrics_curves import (  # noqa: E402
    auc,
    false_negatives_at_thresholds,
    false_positives_at_thresholds,
    precision_at_thresholds,
    recall_at_thresholds,
    true_negatives_at_thresholds,
    true_positives_at_thresholds,
)

__all__ = [
    "auc", "false_negatives_at_thresholds", "false_positives_at_thresholds",
    "precision_at_thresholds", "recall_at_thresholds", "true_negatives_at_thresholds",
    "true_positives_at_thresholds",
    "accuracy", "false_negatives", "false_positives", "mean", "mean_absolute_error",
    "mean_squared_error", "mean_tensor", "precision", "recall",
    "root_mean_squared_error", "true_negatives", "true_positives",
]
