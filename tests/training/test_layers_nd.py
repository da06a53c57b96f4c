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


def test_separable_conv2d_and_1d():
    x_val = np.random.default_rng(2).normal(size=(2, 7, 7, 3)).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, 7, 7, 3])
        y = tf.layers.separable_conv2d(x, 4, 3, depth_multiplier=2, padding="same")
        names = [v.name for v in tf.trainable_variables()]
        assert names == ["separable_conv2d/depthwise_kernel:0",
                         "separable_conv2d/pointwise_kernel:0", "separable_conv2d/bias:0"]
        dw, pw, b = tf.trainable_variables()
        assert dw.shape.as_list() == [3, 3, 3, 2] and pw.shape.as_list() == [1, 1, 6, 4]
        want = tf.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], "SAME") + b
        s = tf.placeholder(tf.float32, [None, 9, 3])
        z = tf.layers.separable_conv1d(s, 5, 3, name="sep1")
        assert z.shape.as_list() == [None, 7, 5]
        sess.run(tf.global_variables_initializer())
        got, ref = sess.run([y, want], {x: x_val})
        assert sess.run(z, {s: x_val[:, 0, :, :].repeat(2, axis=1)[:, :9]}).shape == (2, 7, 5)
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_batch_norm_with_global_normalization():
    x = np.random.default_rng(3).normal(size=(4, 3)).astype(np.float32)
    m, v = x.mean(0), x.var(0)
    beta, gamma = np.array([0.1, 0.2, 0.3], np.float32), np.array([2.0, 1.0, 0.5], np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        y = tf.nn.batch_norm_with_global_normalization(x, m, v, beta, gamma, 1e-3, True)
        y0 = tf.nn.batch_norm_with_global_normalization(x, m, v, beta, gamma, 1e-3, False)
        got, got0 = sess.run([y, y0])
    np.testing.assert_allclose(got, (x - m) / np.sqrt(v + 1e-3) * gamma + beta, rtol=1e-5)
    np.testing.assert_allclose(got0, (x - m) / np.sqrt(v + 1e-3) + beta, rtol=1e-5)
