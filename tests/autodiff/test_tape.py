"""tf.GradientTape in graph mode against TensorFlow 2.21's answers (make_tape_expected.py →
tests/data/tape_expected.json), and its Jacobians against central differences."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.client.gradient_checker import compute_gradient
from tests.autodiff.tape_scenario import run

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "data" /
                       "tape_expected.json").read_text())
_GOT = {}


def _got():
    if not _GOT:
        _GOT.update(run(tf))
    return _GOT


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_matches_tensorflow(key):
    got, want = _got()[key], EXPECTED[key]
    if isinstance(want, (list, dict)) and want and key != "watched":
        np.testing.assert_equal(got, want)
    else:
        assert got == want


def test_gradient_matches_finite_differences():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2, 3])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.tanh(tf.matmul(x, tf.transpose(x))) * 2.0
        g = tape.gradient(y, x)
        value = np.random.default_rng(0).uniform(-1, 1, (2, 3))
        with tf.Session() as sess:
            got = sess.run(g, {x: value})
            ref = sess.run(tf.gradients(y, x)[0], {x: value})
        _, numeric = compute_gradient(x, [2, 3], y, [2, 2], x_init_value=value)
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    np.testing.assert_allclose(got.ravel(), numeric.sum(axis=1), rtol=1e-4, atol=1e-5)


def test_reenter_and_stop_recording_outside_raise():
    with tf.Graph().as_default():
        tape = tf.GradientTape()
        with pytest.raises(RuntimeError, match="not recording"):
            with tape.stop_recording():
                pass
        with tape:
            with pytest.raises(ValueError, match="re-enter"):
                tape.__enter__()


def test_optimizer_apply_gradients_from_tape():
    with tf.Graph().as_default():
        w = tf.Variable(3.0, dtype=tf.float64)
        with tf.GradientTape() as tape:
            loss = (w - 1.0) ** 2
        grads = tape.gradient(loss, [w])
        step = tf.train.GradientDescentOptimizer(0.25).apply_gradients(zip(grads, [w]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            assert sess.run(w) == pytest.approx(2.0)


def test_jacobian_matches_finite_differences():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2, 3])
        w = tf.Variable(np.arange(6.0).reshape(3, 2) / 5.0)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.sin(tf.matmul(x, w))
        jx, jw = tape.jacobian(y, [x, w])
        assert jx.shape.as_list() == [2, 2, 2, 3]
        value = np.random.default_rng(1).uniform(-1, 1, (2, 3))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(jx, {x: value})
            _, numeric = compute_gradient(x, [2, 3], y, [2, 2], x_init_value=value)
            assert sess.run(jw, {x: value}).shape == (2, 2, 3, 2)
    np.testing.assert_allclose(got.reshape(4, 6).T, numeric, rtol=1e-4, atol=1e-6)
