"""Weighted categorical and shared embedding columns: the model of fc_more_model.py gives
TensorFlow 2.21's column names, variable names/shapes and outputs (fc_more_expected.npz,
written by make_fc_more_expected.py with the TF peer) — weighted identity and vocabulary
columns through indicator, embedding (mean, sqrtn) and linear_model (dense weights whose 0s
mean "none", a negative weight pruned by a mean/sqrtn lookup but kept by a sum, as TF's
safe_embedding_lookup_sparse does), and two shared-embedding
groups (default and named collection, sum and mean)."""

import os

import numpy as np
import pytest

import tensorweave as tf
from tests.feature_column import fc_more_model

EXPECTED = np.load(os.path.join(os.path.dirname(__file__), "fc_more_expected.npz"))


def _run_model():
    with tf.Graph().as_default():
        dense, linear = fc_more_model.columns(tf)
        net, logits = fc_more_model.build(tf)
        variables = tf.global_variables()
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            for v in variables:
                v.load(fc_more_model.value_for(v.op.name, v.shape.as_list()), sess)
            return dense + linear, variables, sess.run([net, logits])


def test_column_and_variable_names_are_tfs():
    cols, variables, _ = _run_model()
    assert [c.name for c in cols] == EXPECTED["column_names"].tolist()
    got = [(v.op.name, str(v.shape.as_list())) for v in variables]
    assert sorted(got) == sorted(zip(EXPECTED["names"].tolist(), EXPECTED["shapes"].tolist()))


def test_outputs_are_tfs():
    _, _, (net, logits) = _run_model()
    np.testing.assert_allclose(net, EXPECTED["net"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(logits, EXPECTED["logits"], rtol=1e-5, atol=1e-6)


def test_shared_columns_train_one_variable():
    fc = tf.feature_column
    with tf.Graph().as_default():
        a, b = (fc.categorical_column_with_identity(k, 4) for k in "ab")
        cols = fc.shared_embedding_columns([b, a], 2, initializer=tf.zeros_initializer())
        assert [c.name for c in cols] == ["b_shared_embedding", "a_shared_embedding"]
        out = fc.input_layer({"a": tf.constant([[1]], tf.int64),
                              "b": tf.constant([[1]], tf.int64)}, cols)
        (w,) = tf.trainable_variables()
        assert w.op.name == "input_layer/a_b_shared_embedding/embedding_weights"
        assert tf.get_collection("a_b_shared_embedding") == [w]
        step = tf.train.GradientDescentOptimizer(1.0).minimize(-tf.reduce_sum(out))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            np.testing.assert_allclose(sess.run(w)[1], [2.0, 2.0])   # both lookups' gradients


def test_bad_arguments_raise_tfs_errors():
    fc = tf.feature_column
    a = fc.categorical_column_with_identity("a", 4)
    with pytest.raises(ValueError, match="same number of buckets"):
        fc.shared_embedding_columns([a, fc.categorical_column_with_identity("b", 5)], 2)
    with pytest.raises(ValueError, match="same type"):
        fc.shared_embedding_columns([a, fc.categorical_column_with_hash_bucket("b", 4)], 2)
    with pytest.raises(ValueError, match="Invalid dimension"):
        fc.shared_embedding_columns([a], 0)
    with pytest.raises(ValueError, match="not convertible to float"):
        fc.weighted_categorical_column(a, "w", dtype=tf.string)
    with pytest.raises(ValueError, match="already exists for a"):
        fc.make_parse_example_spec([fc.weighted_categorical_column(a, "a")])
    w = fc.weighted_categorical_column(a, "w")
    assert w._parse_example_spec["w"].dtype == tf.float32
    with tf.Graph().as_default(), pytest.raises(ValueError, match="Bad dtype"):
        fc.input_layer({"a": tf.constant([[1]], tf.int64), "w": tf.constant([[1]], tf.int64)},
                       [fc.indicator_column(w)])
