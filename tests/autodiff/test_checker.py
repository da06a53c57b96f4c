"""compute_gradient / compute_gradient_error: Jacobian layout, list form, detection of a wrong
gradient, complex inputs."""

from __future__ import annotations

import numpy as np

import tensorweave as tf
from tensorweave.autodiff import RegisterGradient
from tensorweave.client.gradient_checker import compute_gradient, compute_gradient_error
from tests.autodiff import families  # noqa: F401


def test_jacobian_layout_matches_tf():
    x = tf.placeholder(tf.float64, [2, 3])
    w = tf.constant(np.arange(12, dtype=np.float64).reshape(3, 4))
    y = tf.matmul(x, w)
    x0 = np.random.default_rng(0).normal(size=(2, 3))
    jt, jn = compute_gradient(x, [2, 3], y, [2, 4], x_init_value=x0)
    assert jt.shape == jn.shape == (6, 8)
    # d y[i, k] / d x[i, j] = w[j, k]
    np.testing.assert_allclose(jt[1, 0:4], np.arange(12).reshape(3, 4)[1])
    np.testing.assert_allclose(jt, jn, atol=1e-6)
    assert compute_gradient_error(x, [2, 3], y, [2, 4], x_init_value=x0) < 1e-6


def test_list_of_xs_and_default_session():
    a = tf.constant(np.ones(3))             # fed by the checker; the other keeps its value
    b = tf.constant(np.full(3, 2.0))
    y = a * b
    with tf.Session():
        out = compute_gradient([a, b], [[3], [3]], y, [3],
                               x_init_value=[np.ones(3), np.full(3, 2.0)])
    assert len(out) == 2
    np.testing.assert_allclose(out[0][0], np.diag([2.0, 2.0, 2.0]))
    np.testing.assert_allclose(out[1][0], np.diag([1.0, 1.0, 1.0]))


def test_a_wrong_gradient_is_detected():
    @RegisterGradient("TestWrongSin")
    def _wrong(op, grad):
        return grad * tf.sin(op.inputs[0])     # should be cos

    x = tf.placeholder(tf.float64, [2])
    y = tf.sin(x)
    y.op._set_attr("_gradient_op_type", "TestWrongSin")
    assert compute_gradient_error(x, [2], y, [2], x_init_value=np.array([0.1, 0.2])) > 0.5


def test_complex_input_doubles_the_rows():
    z = tf.placeholder(tf.complex128, [2])
    y = tf.real(z * z)
    jt, jn = compute_gradient(z, [2], y, [2], x_init_value=np.array([1 + 2j, 0.5 - 1j]))
    assert jt.shape == (4, 2)
    np.testing.assert_allclose(jt, jn, atol=1e-6)


def test_extra_feeds_hold_other_inputs():
    x = tf.placeholder(tf.float64, [2])
    c = tf.placeholder(tf.float64, [2])
    y = x * c
    jt, _ = compute_gradient(x, [2], y, [2], x_init_value=np.ones(2),
                             extra_feed_dict={c: np.array([3.0, 5.0])})
    np.testing.assert_allclose(jt, np.diag([3.0, 5.0]))
