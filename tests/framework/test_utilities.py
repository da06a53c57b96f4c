"""tf.make_tensor_proto / make_ndarray, executing_eagerly, init_scope, tf.nest and
noisy_linear_cosine_decay."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import tensorweave as tf


def test_tensor_proto_round_trip_and_shapes():
    for value in (np.arange(6, dtype=np.float32).reshape(2, 3), np.array([b"a", b"bc"]),
                  np.array(True), np.arange(4, dtype=np.int64)):
        proto = tf.make_tensor_proto(value)
        back = tf.make_ndarray(proto)
        assert back.shape == value.shape and back.tolist() == value.tolist()
    proto = tf.make_tensor_proto(7, dtype=tf.float64, shape=[2, 2])
    assert tf.make_ndarray(proto).tolist() == [[7.0, 7.0], [7.0, 7.0]]
    assert tf.make_ndarray(tf.make_tensor_proto([1, 2, 3, 4], shape=[2, 2])).shape == (2, 2)
    with pytest.raises(ValueError, match="Too many elements"):
        tf.make_tensor_proto([1, 2, 3], shape=[2])
    with pytest.raises(TypeError, match="Expected Tensor's shape"):
        tf.make_tensor_proto([1, 2], shape=[1, 2], verify_shape=True)
    # a GraphDef Const's value is such a proto
    with tf.Graph().as_default() as g:
        tf.constant([[1.5, 2.5]], name="c")
    value = g.as_graph_def().node[0].attr["value"].tensor
    assert tf.make_ndarray(value).tolist() == [[1.5, 2.5]]


def test_executing_eagerly_and_init_scope():
    assert tf.executing_eagerly() is False
    with tf.Graph().as_default():
        a = tf.constant(1.0)
        with tf.control_dependencies([a]):
            inside = tf.constant(2.0)
            with tf.init_scope():
                lifted = tf.constant(3.0)
        assert inside.op.control_inputs and not lifted.op.control_inputs


def test_nest():
    Point = collections.namedtuple("Point", "x y")
    s = {"b": [1, (2, 3)], "a": Point(4, 5)}
    assert tf.nest.flatten(s) == [4, 5, 1, 2, 3]
    doubled = tf.nest.map_structure(lambda v: v * 2, s)
    assert doubled == {"b": [2, (4, 6)], "a": Point(8, 10)}
    assert tf.nest.pack_sequence_as(s, list(range(5)))["a"] == Point(0, 1)
    tf.nest.assert_same_structure(s, doubled)
    with pytest.raises(ValueError):
        tf.nest.assert_same_structure([1, 2], [1])
    assert tf.nest.is_nested([1]) and not tf.nest.is_nested(1)
    assert tf.contrib.framework.nest.is_sequence((1,))


def test_noisy_linear_cosine_decay():
    with tf.Graph().as_default(), tf.Session() as sess:
        step = tf.constant(30, tf.int64)
        plain = tf.train.linear_cosine_decay(0.1, step, 100)
        quiet = tf.train.noisy_linear_cosine_decay(0.1, step, 100, initial_variance=0.0)
        noisy = tf.train.noisy_linear_cosine_decay(0.1, step, 100, initial_variance=1.0)
        assert sess.run(quiet) == pytest.approx(sess.run(plain), rel=1e-6)
        draws = [sess.run(noisy) for _ in range(200)]
    cosine = 0.5 * (1 + np.cos(np.pi * 2 * 0.5 * 0.3))
    assert np.std(draws) == pytest.approx(0.1 * cosine * (1 / 31 ** 0.55) ** 0.5, rel=0.25)


def test_container_scope_sets_stateful_ops_container():
    with tf.Graph().as_default(), tf.Session() as sess:
        with tf.container("experiment0"):
            v = tf.Variable(3.0, name="v")
        w = tf.Variable(4.0, name="w")
        assert v.op.get_attr("container") in (b"experiment0", "experiment0")
        assert w.op.get_attr("container") in (b"", "")
        sess.run(tf.global_variables_initializer())
        assert sess.run(v + w) == 7.0
