"""Feature columns: the model of fc_model.py gives TensorFlow's variable names, shapes and
outputs (fc_expected.npz, written by make_fc_expected.py with the TF peer) — numeric,
bucketized, vocabulary list/file, hash bucket (string and int), identity and crossed columns
through indicator and embedding columns (mean, sum, sqrtn), input_layer and linear_model."""

import os

import numpy as np
import pytest

import tensorweave as tf
from tests.feature_column import fc_model

EXPECTED = np.load(os.path.join(os.path.dirname(__file__), "fc_expected.npz"))


@pytest.fixture
def vocab(tmp_path):
    p = tmp_path / "colors.txt"
    p.write_text(fc_model.VOCAB)
    return str(p)


def _run_model(vocab):
    with tf.Graph().as_default():
        net, logits = fc_model.build(tf, vocab)
        variables = tf.global_variables()
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            for v in variables:
                v.load(fc_model.value_for(v.op.name, v.shape.as_list()), sess)
            return variables, sess.run([net, logits])


def test_variable_names_and_shapes_are_tfs(vocab):
    variables, _ = _run_model(vocab)
    got = [(v.op.name, str(v.shape.as_list())) for v in variables]
    assert sorted(got) == sorted(zip(EXPECTED["names"].tolist(), EXPECTED["shapes"].tolist()))


def test_outputs_are_tfs(vocab):
    _, (net, logits) = _run_model(vocab)
    np.testing.assert_allclose(net, EXPECTED["net"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(logits, EXPECTED["logits"], rtol=1e-5, atol=1e-5)


def test_input_layer_refuses_categorical_columns():
    fc = tf.feature_column
    with tf.Graph().as_default(), pytest.raises(ValueError, match="embedding_column or "
                                                                   "indicator_column"):
        fc.input_layer({"a": tf.constant([["x"]])},
                       [fc.categorical_column_with_hash_bucket("a", 3)])


def test_missing_feature_names_the_key():
    fc = tf.feature_column
    with tf.Graph().as_default(), pytest.raises(ValueError, match="not in features dict: b"):
        fc.input_layer({"a": tf.constant([1.0])}, [fc.numeric_column("b")])


def test_embedding_gradient_trains_only_looked_up_rows():
    fc = tf.feature_column
    with tf.Graph().as_default():
        col = fc.embedding_column(fc.categorical_column_with_identity("i", 5), 2,
                                  initializer=tf.ones_initializer())
        out = fc.input_layer({"i": tf.constant([[1], [3]], tf.int64)}, [col])
        (w,) = tf.trainable_variables()
        step = tf.train.GradientDescentOptimizer(1.0).minimize(tf.reduce_sum(out))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            got = sess.run(w)
    np.testing.assert_allclose(got[:, 0], [1, 0, 1, 0, 1])


def test_parse_example_spec():
    fc = tf.feature_column
    spec = fc.make_parse_example_spec([fc.numeric_column("a", shape=(2,)),
                                       fc.categorical_column_with_hash_bucket("b", 4)])
    assert spec["a"].shape == (2,) and spec["b"].dtype == tf.string
