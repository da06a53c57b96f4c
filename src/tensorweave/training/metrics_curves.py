"""Threshold metrics of `tf.metrics` (TF1's metrics_impl): `auc`, and true/false
positives/negatives, precision and recall at thresholds.

One confusion matrix per threshold is kept in local variables (`auc/true_positives` ...,
shape [num_thresholds]); a prediction counts as positive when it is strictly greater than the
threshold. `auc` sums the ROC or PR curve through those points with TF's Riemann rules
(`trapezoidal`, `minoring`, `majoring`, `careful_interpolation`) and epsilons, so its values
equal TensorFlow's.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, reduction_ops, state_ops
from tensorweave.ops.creation_ops import ones_like
from tensorweave.ops.gather_ops import where
from tensorweave.ops.joining_ops import stack, tile
from tensorweave.ops.variable_scope import variable_scope
from tensorweave.training.metrics import _publish, _remove_squeezable_dimensions, metric_variable
from tensorweave.training.weights_broadcast import broadcast_weights

_KINDS = ("tp", "fn", "tn", "fp")
_VAR_NAMES = {"tp": "true_positives", "fn": "false_negatives", "tn": "true_negatives",
              "fp": "false_positives"}


def confusion_matrix_at_thresholds(labels, predictions, thresholds, weights, includes=_KINDS):
    """({kind: value}, {kind: update_op}) over `thresholds` for each kind ("tp", "fn", "tn",
    "fp") in `includes`: one [len(thresholds)] local variable each (TF's
    metrics_impl._confusion_matrix_at_thresholds, which contrib's f1_score builds on)."""
    predictions, labels, weights = _remove_squeezable_dimensions(
        math_ops.cast(predictions, dtypes.float32), math_ops.cast(labels, dtypes.bool_),
        weights)
    n_thr = len(thresholds)
    preds = array_ops.reshape(predictions, [1, -1])
    n = array_ops.shape(preds)[1]
    thr = tile(array_ops.expand_dims(convert_to_tensor(list(thresholds), dtypes.float32), 1),
               stack([1, n]))
    pred_pos = math_ops.greater(tile(preds, [n_thr, 1]), thr)
    label_pos = tile(array_ops.reshape(labels, [1, -1]), [n_thr, 1])
    w = None
    if weights is not None:
        w = broadcast_weights(math_ops.cast(weights, dtypes.float32), predictions)
        w = tile(array_ops.reshape(w, [1, -1]), [n_thr, 1])
    cases = {"tp": (label_pos, pred_pos),
             "fn": (label_pos, math_ops.logical_not(pred_pos)),
             "tn": (math_ops.logical_not(label_pos), math_ops.logical_not(pred_pos)),
             "fp": (math_ops.logical_not(label_pos), pred_pos)}
    values, updates = {}, {}
    for kind in includes:
        var = metric_variable([n_thr], dtypes.float32, name=_VAR_NAMES[kind])
        hit = math_ops.cast(math_ops.logical_and(*cases[kind]), dtypes.float32)
        if w is not None:
            hit = math_ops.multiply(hit, w)
        updates[kind] = state_ops.assign_add(var, reduction_ops.reduce_sum(hit, 1))
        values[kind] = array_ops.identity(var)
    return values, updates


def _thresholds(num_thresholds, thresholds):
    kepsilon = 1e-7
    if thresholds is not None:
        inner = sorted(float(t) for t in thresholds)
    else:
        inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - kepsilon] + inner + [1.0 + kepsilon]


def _riemann(x, y, n: int, method: str, name: str):
    head, tail = slice(0, n - 1), slice(1, n)
    if method in ("trapezoidal", "careful_interpolation"):
        heights = (y[head] + y[tail]) / 2.0
    elif method == "minoring":
        heights = math_ops.minimum(y[head], y[tail])
    elif method == "majoring":
        heights = math_ops.maximum(y[head], y[tail])
    else:
        raise ValueError(f"Invalid summation_method: {method}")
    return reduction_ops.reduce_sum(math_ops.multiply(x[head] - x[tail], heights), name=name)


def _interpolate_pr_auc(tp, fp, fn, n: int, name: str):
    """PR-AUC by interpolating precision between thresholds (Davis & Goadrich 2006), as TF."""
    dtp = tp[:n - 1] - tp[1:]
    p = tp + fp
    prec_slope = math_ops.div_no_nan(dtp, math_ops.maximum(p[:n - 1] - p[1:], 0))
    intercept = tp[1:] - math_ops.multiply(prec_slope, p[1:])
    safe_p_ratio = where(math_ops.logical_and(p[:n - 1] > 0, p[1:] > 0),
                         math_ops.div_no_nan(p[:n - 1], math_ops.maximum(p[1:], 0)),
                         ones_like(p[1:]))
    return reduction_ops.reduce_sum(math_ops.div_no_nan(
        prec_slope * (dtp + intercept * math_ops.log(safe_p_ratio)),
        math_ops.maximum(tp[1:] + fn[1:], 0)), name=name)


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal",
        thresholds=None):
    """The area under the ROC or PR curve through `num_thresholds` thresholds in [0, 1].

    Returns (auc, update_op). Raises ValueError for an unknown `curve` or `summation_method`.
    """
    with variable_scope(name, "auc", [labels, predictions, weights]):
        if curve not in ("ROC", "PR"):
            raise ValueError(f"curve must be either ROC or PR, {curve} unknown")
        thr = _thresholds(num_thresholds, thresholds)
        n = len(thr)
        values, updates = confusion_matrix_at_thresholds(labels, predictions, thr, weights)

        def compute(c, name):
            if curve == "PR" and summation_method == "careful_interpolation":
                return _interpolate_pr_auc(c["tp"], c["fp"], c["fn"], n, name)
            eps = 1.0e-6
            rec = math_ops.div(c["tp"] + eps, c["tp"] + c["fn"] + eps)
            if curve == "ROC":
                x, y = math_ops.div(c["fp"], c["fp"] + c["tn"] + eps), rec
            else:
                x, y = rec, math_ops.div(c["tp"] + eps, c["tp"] + c["fp"] + eps)
            return _riemann(x, y, n, summation_method, name)

        return _publish(compute(values, "value"), compute(updates, "update_op"),
                        metrics_collections, updates_collections)


def _at_thresholds(kind: str):
    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, f"{_VAR_NAMES[kind]}_at_thresholds",
                            [predictions, labels, weights]):
            values, updates = confusion_matrix_at_thresholds(labels, predictions, thresholds,
                                                       weights, includes=(kind,))
            return _publish(values[kind], updates[kind], metrics_collections,
                            updates_collections)
    metric.__name__ = f"{_VAR_NAMES[kind]}_at_thresholds"
    metric.__doc__ = f"The running count of {_VAR_NAMES[kind]} at each threshold."
    return metric


true_positives_at_thresholds = _at_thresholds("tp")
false_negatives_at_thresholds = _at_thresholds("fn")
true_negatives_at_thresholds = _at_thresholds("tn")
false_positives_at_thresholds = _at_thresholds("fp")


def _ratio_at_thresholds(default_name: str, other: str):
    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, default_name, [predictions, labels, weights]):
            values, updates = confusion_matrix_at_thresholds(labels, predictions, thresholds,
                                                       weights, includes=("tp", other))
            eps = 1e-7

            def ratio(c, name):
                return math_ops.div(c["tp"], eps + c["tp"] + c[other], name=name)
            return _publish(ratio(values, "precision" if other == "fp" else "recall"),
                            ratio(updates, "update_op"), metrics_collections,
                            updates_collections)
    metric.__name__ = default_name
    metric.__doc__ = f"tp / (tp + {other}) at each threshold."
    return metric


precision_at_thresholds = _ratio_at_thresholds("precision_at_thresholds", "fp")
recall_at_thresholds = _ratio_at_thresholds("recall_at_thresholds", "fn")

__all__ = [
    "auc", "false_negatives_at_thresholds", "false_positives_at_thresholds",
    "precision_at_thresholds", "recall_at_thresholds", "true_negatives_at_thresholds",
    "true_positives_at_thresholds",
]
