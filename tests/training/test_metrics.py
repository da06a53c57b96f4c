"""tf.metrics: streaming (value, update_op) semantics, local metric variables, and values
against TensorFlow's over three batches (tests/data/layers_expected.npz)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.training import expected_cases as cases

EXPECTED = np.load(Path(__file__).resolve().parents[1] / "data" / "layers_expected.npz")
tf = cases.tensorweave_namespace()
M = tf.metrics


def test_accuracy_variables_are_local_metric_variables():
    labels = tf.placeholder(tf.int64, [None])
    M.accuracy(labels, labels)
    names = ["accuracy/total:0", "accuracy/count:0"]
    assert [v.name for v in tf.local_variables()] == names
    assert [v.name for v in tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)] == names
    assert tf.global_variables() == [] and tf.trainable_variables() == []


def test_accuracy_update_semantics():
    labels = tf.placeholder(tf.int64, [None])
    predictions = tf.placeholder(tf.int64, [None])
    acc, update = M.accuracy(labels, predictions, metrics_collections=["m"],
                             updates_collections=["u"])
    assert (acc.op.name, update.op.name) == ("accuracy/value", "accuracy/update_op")
    assert tf.get_collection("m") == [acc] and tf.get_collection("u") == [update]
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(acc) == 0.0  # nothing seen yet: 0, not NaN
        assert sess.run(update, {labels: [1, 2, 3, 4], predictions: [1, 2, 0, 0]}) == 0.5
        assert sess.run(acc) == 0.5  # reading does not update
        assert sess.run(update, {labels: [1, 1], predictions: [1, 1]}) == pytest.approx(4 / 6)
        assert sess.run(acc) == pytest.approx(4 / 6)
        sess.run(tf.local_variables_initializer())  # reset
        assert sess.run(acc) == 0.0


def test_weighted_accuracy_and_squeezed_predictions():
    labels = tf.constant(np.array([[1], [0], [1]], np.int64))
    predictions = tf.constant(np.array([1, 1, 1], np.int64))
    acc, update = M.accuracy(labels, predictions, weights=tf.constant([1.0, 3.0, 0.0]))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(update) == pytest.approx(0.25)


def test_mean_counts_weights():
    values = tf.placeholder(tf.float32, [None])
    weights = tf.placeholder(tf.float32, [None])
    mean, update = M.mean(values, weights=weights)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        sess.run(update, {values: [1.0, 2.0], weights: [1.0, 3.0]})
        sess.run(update, {values: [10.0], weights: [0.0]})
        assert sess.run(mean) == pytest.approx(7.0 / 4.0)


METRIC_KEYS = sorted({k.split("/")[1] for k in EXPECTED.files if k.startswith("metric/")})


@pytest.fixture(scope="module")
def metric_history():
    out = {}
    with tf.Graph().as_default():
        labels = tf.placeholder(tf.int64, [None])
        predictions = tf.placeholder(tf.int64, [None])
        weights = tf.placeholder(tf.float32, [None])
        pairs = cases.metric_cases(tf, labels, predictions, weights)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            for i, (lab, pred, w) in enumerate(cases.metric_batches()):
                feed = {labels: lab, predictions: pred, weights: w}
                updated = sess.run({k: u for k, (_, u) in pairs.items()}, feed)
                values = sess.run({k: v for k, (v, _) in pairs.items()})
                for k in pairs:
                    out[f"{k}/update_{i}"], out[f"{k}/value_{i}"] = updated[k], values[k]
    return out


@pytest.mark.parametrize("key", METRIC_KEYS)
def test_streaming_metric_matches_tensorflow(metric_history, key):
    for i in range(3):
        for tag in ("update", "value"):
            name = f"{key}/{tag}_{i}"
            np.testing.assert_allclose(metric_history[name], EXPECTED[f"metric/{name}"],
                                       rtol=1e-6, err_msg=name)


def test_precision_and_recall_against_counts():
    labels = tf.constant(np.array([1, 1, 0, 0, 1], np.int64))
    predictions = tf.constant(np.array([1, 0, 1, 0, 1], np.int64))
    (p, p_up), (r, r_up) = M.precision(labels, predictions), M.recall(labels, predictions)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run([p, r]) == [0.0, 0.0]
        assert sess.run([p_up, r_up]) == pytest.approx([2 / 3, 2 / 3])
