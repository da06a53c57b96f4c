"""Writes auc_expected.npz with the TensorFlow peer: tf.metrics.auc (ROC and PR, every
summation method, weights) and the at-thresholds metrics over three batches, for
test_metrics_curves.py. Run with ~/.cache/tensorweave-tf-peer/bin/python."""

import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from auc_spec import build, data  # noqa: E402

v1 = tf.compat.v1
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    v1.disable_eager_execution()
    labels, preds, weights = data()
    lp = v1.placeholder(tf.int64, [None])
    pp = v1.placeholder(tf.float32, [None])
    wp = v1.placeholder(tf.float32, [None])
    metrics = build(v1, lp, pp, wp)
    with v1.Session() as sess:
        sess.run(v1.local_variables_initializer())
        ups = []
        for i in range(3):
            ups.append(sess.run([u for _, u in metrics], {lp: labels[i], pp: preds[i],
                                                          wp: weights[i]}))
        final = sess.run([v for v, _ in metrics])
    np.savez(os.path.join(HERE, "auc_expected.npz"),
             updates=np.array(ups, dtype=object), final=np.array(final, dtype=object))


if __name__ == "__main__":
    main()
