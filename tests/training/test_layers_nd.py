"""tf.layers conv1d/conv3d and 1-D/3-D pooling: TF1's variable names and static shapes,
values equal to the tf.nn ops they wrap (those are checked against TF in tests/ops)."""

from __future__ import annotations

import numpy as np

import tensorweave as tf


def test_conv1d_and_pooling1d():
    x_val = np.random.default_rng(0).normal(size=(2, 10, 3)).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, 10, 3])
        y = tf.layers.conv1d(x, 4, 3, strides=2, padding="same", activation=tf.nn.relu)
        p = tf.layers.max_pooling1d(y, 2, 2)
        a = tf.layers.average_pooling1d(y, 2, 1)
        kernel, bias = tf.trainable_variables()
        assert (kernel.name, bias.name) == ("conv1d/kernel:0", "conv1d/bias:0")
        assert kernel.shape.as_list() == [3, 3, 4]
        assert y.shape.as_list() == [None, 5, 4] and p.shape.as_list() == [None, 2, 4]
        want = tf.nn.relu(tf.nn.conv1d(x, kernel, 2, "SAME") + bias)
        sess.run(tf.global_variables_initializer())
        got_y, want_y, got_p, got_a = sess.run([y, want, p, a], {x: x_val})
    np.testing.assert_allclose(got_y, want_y, rtol=1e-6)
    np.testing.assert_allclose(got_p, got_y[:, :4].reshape(2, 2, 2, 4).max(axis=2))
    np.testing.assert_allclose(got_a, (got_y[:, :-1] + got_y[:, 1:]) / 2, rtol=1e-6)


def test_conv3d_and_pooling3d():
    v_val = np.random.default_rng(1).normal(size=(2, 4, 6, 6, 2)).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        v = tf.placeholder(tf.float32, [None, 4, 6, 6, 2])
        z = tf.layers.conv3d(v, 5, (2, 3, 3), name="c3")
        q = tf.layers.max_pooling3d(z, 2, 2)
        kernel, bias = tf.trainable_variables()
        assert kernel.name == "c3/kernel:0" and kernel.shape.as_list() == [2, 3, 3, 2, 5]
        assert z.shape.as_list() == [None, 3, 4, 4, 5] and q.shape.as_list() == [None, 1, 2, 2, 5]
        want = tf.nn.conv3d(v, kernel, [1] * 5, "VALID") + bias
        sess.run(tf.global_variables_initializer())
        got_z, want_z, got_q = sess.run([z, want, q], {v: v_val})
    np.testing.assert_allclose(got_z, want_z, rtol=1e-6)
    np.testing.assert_allclose(got_q, got_z[:, :2].reshape(2, 1, 2, 2, 2, 2, 2, 5).max(
        axis=(2, 4, 6)), rtol=1e-6)
