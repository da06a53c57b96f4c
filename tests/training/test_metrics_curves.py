"""tf.metrics.auc and the at-thresholds metrics give TensorFlow's values batch by batch
(auc_expected.npz, written by make_auc_expected.py with the TF peer)."""

import os

import numpy as np
import pytest

import tensorweave as tf
from tests.training import auc_spec as spec

EXPECTED = np.load(os.path.join(os.path.dirname(__file__), "auc_expected.npz"),
                   allow_pickle=True)


def test_auc_and_threshold_metrics_match_tf():
    labels, preds, weights = spec.data()
    with tf.Graph().as_default():
        lp = tf.placeholder(tf.int64, [None])
        pp = tf.placeholder(tf.float32, [None])
        wp = tf.placeholder(tf.float32, [None])
        metrics = spec.build(tf, lp, pp, wp)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            for i in range(3):
                got = sess.run([u for _, u in metrics], {lp: labels[i], pp: preds[i],
                                                         wp: weights[i]})
                for g, w in zip(got, EXPECTED["updates"][i]):
                    np.testing.assert_allclose(g, np.asarray(w, np.float64), rtol=2e-5,
                                               atol=1e-6)
            final = sess.run([v for v, _ in metrics])
    for g, w in zip(final, EXPECTED["final"]):
        np.testing.assert_allclose(g, np.asarray(w, np.float64), rtol=2e-5, atol=1e-6)


def test_auc_variables_and_errors():
    with tf.Graph().as_default():
        tf.metrics.auc(tf.constant([1, 0]), tf.constant([0.7, 0.2]))
        names = sorted(v.op.name for v in tf.local_variables())
        assert names == ["auc/false_negatives", "auc/false_positives", "auc/true_negatives",
                         "auc/true_positives"]
        assert tf.local_variables()[0].shape.as_list() == [200]
        with pytest.raises(ValueError, match="ROC or PR"):
            tf.metrics.auc(tf.constant([1]), tf.constant([0.5]), curve="XY")


def test_perfect_classifier_has_auc_one():
    with tf.Graph().as_default():
        a, up = tf.metrics.auc(tf.constant([0, 0, 1, 1]), tf.constant([0.1, 0.2, 0.8, 0.9]))
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run(up)
            assert sess.run(a) == pytest.approx(1.0, abs=1e-5)
