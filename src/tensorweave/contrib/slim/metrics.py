"""`tf.contrib.slim.metrics` = `tf.contrib.metrics`' streaming metrics (TF 1.15), with
contrib's argument order (predictions first): each returns (value, update_op) over local
variables, as `tf.metrics` does. `aggregate_metric_map` splits {name: (value, update)} into
two dicts."""

from __future__ import annotations

from tensorweave.training import metrics as _m


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
