"""`tf.contrib.metrics` (TF 1.15's): the streaming metrics with contrib's argument order
(predictions first) over `tf.metrics`' local variables, `streaming_auc`, `f1_score`,
`streaming_concat`, the non-streaming `accuracy`, and `aggregate_metric_map` /
`aggregate_metrics`. `tf.contrib.slim.metrics` is this module."""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.graph import add_to_collections
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, reduction_ops, state_ops
from tensorweave.ops.creation_ops import ones_like
from tensorweave.ops.joining_ops import concat, transpose
from tensorweave.ops.variable_scope import variable_scope
from tensorweave.training import metrics as _m
from tensorweave.training import metrics_curves as _curves

__all__ = [
    "accuracy", "aggregate_metric_map", "aggregate_metrics", "f1_score", "streaming_accuracy",
    "streaming_auc", "streaming_concat", "streaming_false_negatives",
    "streaming_false_positives", "streaming_mean", "streaming_mean_absolute_error",
    "streaming_mean_squared_error", "streaming_mean_tensor", "streaming_precision",
    "streaming_precision_at_thresholds", "streaming_recall", "streaming_recall_at_thresholds",
    "streaming_root_mean_squared_error", "streaming_true_negatives",
    "streaming_true_positives",
]


def _streaming(core):
    def metric(predictions, labels, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        return core(labels, predictions, weights=weights,
                    metrics_collections=metrics_collections,
                    updates_collections=updates_collections, name=name)

    metric.__name__ = "streaming_" + core.__name__
    metric.__doc__ = f"`tf.metrics.{core.__name__}(labels, predictions, ...)`."
    return metric


streaming_accuracy = _streaming(_m.accuracy)
streaming_mean_absolute_error = _streaming(_m.mean_absolute_error)
streaming_mean_squared_error = _streaming(_m.mean_squared_error)
streaming_root_mean_squared_error = _streaming(_m.root_mean_squared_error)
streaming_precision = _streaming(_m.precision)
streaming_recall = _streaming(_m.recall)
streaming_true_positives = _streaming(_m.true_positives)
streaming_false_positives = _streaming(_m.false_positives)
streaming_true_negatives = _streaming(_m.true_negatives)
streaming_false_negatives = _streaming(_m.false_negatives)


def streaming_mean(values, weights=None, metrics_collections=None, updates_collections=None,
                   name=None):
    return _m.mean(values, weights, metrics_collections, updates_collections, name)


def streaming_mean_tensor(values, weights=None, metrics_collections=None,
                          updates_collections=None, name=None):
    return _m.mean_tensor(values, weights, metrics_collections, updates_collections, name)


def streaming_auc(predictions, labels, weights=None, num_thresholds=200,
                  metrics_collections=None, updates_collections=None, curve="ROC", name=None,
                  summation_method="trapezoidal"):
    """`tf.metrics.auc` with contrib's argument order."""
    return _curves.auc(labels, predictions, weights=weights, num_thresholds=num_thresholds,
                       metrics_collections=metrics_collections,
                       updates_collections=updates_collections, curve=curve, name=name,
                       summation_method=summation_method)


def streaming_precision_at_thresholds(predictions, labels, thresholds, weights=None,
                                      metrics_collections=None, updates_collections=None,
                                      name=None):
    return _curves.precision_at_thresholds(labels, predictions, thresholds, weights,
                                           metrics_collections, updates_collections, name)


def streaming_recall_at_thresholds(predictions, labels, thresholds, weights=None,
                                   metrics_collections=None, updates_collections=None,
                                   name=None):
    return _curves.recall_at_thresholds(labels, predictions, thresholds, weights,
                                        metrics_collections, updates_collections, name)


def _publish(value, update_op, metrics_collections, updates_collections):
    if metrics_collections:
        add_to_collections(metrics_collections, value)
    if updates_collections:
        add_to_collections(updates_collections, update_op)
    return value, update_op


def f1_score(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
             updates_collections=None, name=None):
    """The best F1 = 2 P R / (P + R) over `num_thresholds` thresholds in [0, 1] (TF 1.15's
    contrib f1_score: thresholds -eps, 1/(n-1), ..., (n-2)/(n-1), 1 + eps; eps 1e-7 in every
    ratio). Returns (best_f1, update_op)."""
    with variable_scope(name, "f1", (labels, predictions, weights)):
        eps = 1e-7
        inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        thresholds = [0.0 - eps] + inner + [1.0 + eps]
        values, updates = _curves.confusion_matrix_at_thresholds(
            labels, predictions, thresholds, weights, includes=("tp", "fp", "fn"))

        def best(c, name):
            precision = math_ops.div(c["tp"], eps + c["tp"] + c["fp"], name="precision_" + name)
            recall = math_ops.div(c["tp"], eps + c["tp"] + c["fn"], name="recall_" + name)
            f1 = 2.0 * precision * recall / (precision + recall + eps)
            return reduction_ops.reduce_max(f1)

        return _publish(best(values, "value"), best(updates, "update"), metrics_collections,
                        updates_collections)


def streaming_concat(values, axis=0, max_size=None, metrics_collections=None,
                     updates_collections=None, name=None):
    """Every `values` seen, concatenated along `axis` (at most `max_size` rows along it; later
    ones are dropped). Returns (value, update_op); update_op gives the new row count.

    Raises:
      ValueError: `values` of unknown rank, `axis` out of range, or another dimension of
        unknown size.
    """
    with variable_scope(name, "streaming_concat", (values,)):
        values = convert_to_tensor(values)
        ndim, axis, fixed = _concat_layout(values, axis)
        array = _m.metric_variable([0] + fixed, values.dtype,
                                   validate_shape=False, name="array")
        size = _m.metric_variable([], dtypes.int32, name="size")
        to_front = [axis] + [n for n in range(ndim) if n != axis]
        back = [to_front.index(n) for n in range(ndim)]
        rows = transpose(values, to_front)
        if max_size is not None:
            room = math_ops.maximum(max_size - size.read_value(), 0)
            rows = rows[:room]
        grown = concat([array.read_value(), rows], 0)
        assign = state_ops.assign(array, grown, validate_shape=False)
        with control_dependencies([assign]):
            update_op = state_ops.assign(size, array_ops.shape(grown)[0])
        stored = array.read_value()
        stored.set_shape([None] + fixed)
        value = transpose(stored, back, name="concat")
        return _publish(value, update_op, metrics_collections, updates_collections)


def _concat_layout(values, axis):
    shape = values.shape
    if shape.ndims is None:
        raise ValueError("`values` must have known statically known rank")
    ndim = shape.ndims
    if axis < 0:
        axis += ndim
    if not 0 <= axis < ndim:
        raise ValueError(f"axis = {axis!r} not in [0, {ndim!r})")
    fixed = [d for n, d in enumerate(shape.as_list()) if n != axis]
    if any(d is None for d in fixed):
        raise ValueError("all dimensions of `values` other than the dimension to concatenate "
                         "along must have statically known size")
    return ndim, axis, fixed


def accuracy(predictions, labels, weights=None, name=None):
    """The (weighted) fraction of predictions equal to labels, computed once (not streaming).

    Raises:
      ValueError: predictions and labels of different dtypes.
    """
    with name_scope(name, "accuracy", [predictions, labels]):
        predictions, labels = convert_to_tensor(predictions), convert_to_tensor(labels)
        if labels.dtype != predictions.dtype:
            raise ValueError(f"Dtypes of predictions and labels should match. Given: "
                             f"predictions ({predictions.dtype!r}) and labels "
                             f"({labels.dtype!r})")
        correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
        if weights is None:
            return reduction_ops.reduce_mean(correct)
        weights = convert_to_tensor(weights, dtype=dtypes.float32)
        correct = correct * weights
        return reduction_ops.reduce_sum(correct) / reduction_ops.reduce_sum(
            weights * ones_like(correct))


def aggregate_metric_map(names_to_tuples):
    """{name: (value, update)} → ({name: value}, {name: update})."""
    names = list(names_to_tuples)
    values = {n: names_to_tuples[n][0] for n in names}
    updates = {n: names_to_tuples[n][1] for n in names}
    return values, updates


def aggregate_metrics(*value_update_tuples):
    """(value, update) pairs → ([values], [updates])."""
    if not value_update_tuples:
        raise ValueError("Expected at least one value_tensor/update_op pair")
    values, updates = zip(*value_update_tuples)
    return list(values), list(updates)
