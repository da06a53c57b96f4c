"""Writes tests/data/contrib_metrics_expected.npz with TensorFlow 2.21 (graph mode): the
metrics tf.contrib.metrics builds on, over two batches. TF 2.21 has no tf.contrib: contrib's
f1_score is rebuilt here from TF 1.15's definition on TF's own
metrics_impl._confusion_matrix_at_thresholds; streaming_auc is tf.metrics.auc.

    ~/.cache/tensorweave-tf-peer/bin/python tests/contrib/make_contrib_metrics_expected.py
"""

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402
from tensorflow.python.ops import metrics_impl  # noqa: E402

tf.disable_v2_behavior()
OUT = Path(__file__).resolve().parents[1] / "data" / "contrib_metrics_expected.npz"
RNG = np.random.default_rng(3)
PRED = [RNG.uniform(size=40).astype(np.float32), RNG.uniform(size=25).astype(np.float32)]
LABEL = [(RNG.uniform(size=p.size) < q).astype(np.int64) for p, q in zip(PRED, (PRED[0],
                                                                              PRED[1] ** 2))]
WEIGHT = [RNG.uniform(0.5, 2.0, size=40).astype(np.float32),
          RNG.uniform(0.5, 2.0, size=25).astype(np.float32)]


def _f1(labels, predictions, weights, num_thresholds):
    eps = 1e-7
    thresholds = ([0.0 - eps] + [(i + 1) * 1.0 / (num_thresholds - 1)
                                 for i in range(num_thresholds - 2)] + [1.0 + eps])
    values, updates = metrics_impl._confusion_matrix_at_thresholds(
        labels, predictions, thresholds, weights, includes=("tp", "fp", "fn"))

    def best(c):
        p = tf.div(c["tp"], eps + c["tp"] + c["fp"])
        r = tf.div(c["tp"], eps + c["tp"] + c["fn"])
        return tf.reduce_max(2.0 * p * r / (p + r + eps))
    return best(values), best(updates)


def main() -> None:
    out = {"pred_0": PRED[0], "pred_1": PRED[1], "label_0": LABEL[0], "label_1": LABEL[1],
           "weight_0": WEIGHT[0], "weight_1": WEIGHT[1]}
    with tf.Graph().as_default(), tf.Session() as sess:
        p, lab = tf.placeholder(tf.float32, [None]), tf.placeholder(tf.int64, [None])
        w = tf.placeholder(tf.float32, [None])
        metrics = {
            "auc": tf.metrics.auc(lab, p, num_thresholds=50),
            "auc_pr_weighted": tf.metrics.auc(lab, p, w, num_thresholds=30, curve="PR"),
            "f1": _f1(lab, p, None, 200),
            "f1_weighted_20": _f1(lab, p, w, 20),
            "accuracy": tf.metrics.accuracy(lab, tf.cast(p > 0.5, tf.int64), w),
        }
        sess.run(tf.local_variables_initializer())
        for i in range(2):
            feed = {p: PRED[i], lab: LABEL[i], w: WEIGHT[i]}
            for name, (_, update) in metrics.items():
                out[f"{name}_update_{i}"] = sess.run(update, feed)
        for name, (value, _) in metrics.items():
            out[f"{name}_value"] = sess.run(value)
    np.savez(OUT, **out)
    print(f"wrote {OUT} ({len(out)} arrays)")


if __name__ == "__main__":
    main()
