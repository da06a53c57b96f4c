"""The data and metrics of the auc check, shared by make_auc_expected.py (TF) and
test_metrics_curves.py (tensorweave)."""

import numpy as np


def data():
    rng = np.random.RandomState(3)
    labels = (rng.rand(3, 40) > 0.6).astype(np.int64)
    preds = np.clip(labels * 0.3 + rng.rand(3, 40) * 0.7, 0, 1).astype(np.float32)
    weights = rng.rand(3, 40).astype(np.float32)
    return labels, preds, weights


CONFIGS = [("ROC", "trapezoidal", 200, False), ("PR", "trapezoidal", 200, False),
           ("ROC", "minoring", 50, True), ("PR", "majoring", 50, False),
           ("PR", "careful_interpolation", 200, True)]
THRESHOLDS = [0.1, 0.5, 0.8]


def build(tf1, labels_ph, preds_ph, w_ph):
    out = []
    for curve, method, n, weighted in CONFIGS:
        out.append(tf1.metrics.auc(labels_ph, preds_ph, weights=w_ph if weighted else None,
                                   num_thresholds=n, curve=curve, summation_method=method))
    m = tf1.metrics
    for fn in (m.true_positives_at_thresholds, m.false_positives_at_thresholds,
               m.true_negatives_at_thresholds, m.false_negatives_at_thresholds,
               m.precision_at_thresholds, m.recall_at_thresholds):
        out.append(fn(labels_ph, preds_ph, THRESHOLDS, weights=w_ph))
    return out
