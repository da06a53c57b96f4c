"""Igamma, Igammac, IgammaGradA, RandomGammaGrad and Betainc beyond the harness: TF's float32
artifacts are the documented ones, gradients against TensorFlow's, RandomGamma's gradient,
errors at construction and at run time, and the public names."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import special_ops as sp
from tensorweave.runtime.kernels.cpu.special_incomplete import (
    betainc,
    igamma,
    igammac,
    random_gamma_grad,
)
from tests.ops.cases_igamma import DATA, F32_TF_ARTIFACTS, f32_artifacts, inputs


# -- values -----------------------------------------------------------------------------------
@pytest.mark.parametrize("op", sorted(F32_TF_ARTIFACTS))
def test_tf_float32_artifacts_are_where_documented(op):
    mask = f32_artifacts(op)
    _, where = F32_TF_ARTIFACTS[op]
    documented = where(*inputs(op, np.float32))
    assert mask.any()
    assert not (mask & ~documented).any(), np.flatnonzero(mask & ~documented)


def test_p_plus_q_is_one_where_the_series_converges():
    a = np.array([0.3, 1.0, 4.5, 20.0, 150.0])
    x = np.array([0.2, 3.0, 4.5, 1.0, 160.0])
    np.testing.assert_allclose(igamma(a, x) + igammac(a, x), 1.0, rtol=1e-14)


def test_closed_forms():
    x = np.array([0.1, 0.7, 2.0, 9.0])
    np.testing.assert_allclose(igamma(1.0, x), -np.expm1(-x), rtol=1e-14)  # exponential CDF
    t = np.array([0.05, 0.3, 0.5, 0.9])
    np.testing.assert_allclose(betainc(1.0, 1.0, t), t, rtol=1e-14)
    np.testing.assert_allclose(betainc(2.0, 1.0, t), t ** 2, rtol=1e-14)
    np.testing.assert_allclose(betainc(1.0, 3.0, t), 1 - (1 - t) ** 3, rtol=1e-13)


def test_edge_values():
    inf, nan = np.inf, np.nan
    got = igamma(np.array([1.0, 0.0, -1.0, 1.0, 2.0]), np.array([0.0, 1.0, 1.0, inf, nan]))
    np.testing.assert_array_equal(got, [0.0, nan, nan, 1.0, nan])
    got = igammac(np.array([1.0, 0.0, 1.0]), np.array([0.0, 0.0, inf]))
    np.testing.assert_array_equal(got, [1.0, nan, 0.0])
    got = betainc(np.array([2.0, 2.0, 0.0, 2.0]), np.array([3.0, 3.0, 1.0, 3.0]),
                  np.array([0.0, 1.0, 0.5, 1.5]))
    np.testing.assert_array_equal(got, [0.0, 1.0, nan, nan])


def test_half_in_half_out():
    with tf.Graph().as_default():
        y = sp.igamma(np.float16(2.0), np.array([0.5, 3.0], np.float16))
        with tf.Session() as sess:
            v = sess.run(y)
    assert y.dtype == tf.float16 and v.dtype == np.float16


# -- gradients --------------------------------------------------------------------------------
def _grads(fn):
    with tf.Graph().as_default():
        a = tf.constant([[0.5], [2.0], [7.5]], tf.float64)
        x = tf.constant([0.3, 1.5, 8.0], tf.float64)
        w = tf.constant(np.arange(1.0, 10.0).reshape(3, 3))
        grads = tf.gradients(fn(a, x) * w, [a, x])
        with tf.Session() as sess:
            return sess.run(grads)


@pytest.mark.parametrize("name, fn", [("igamma", tf.math.igamma), ("igammac", tf.math.igammac)])
def test_incomplete_gamma_gradients_match_tf(name, fn):
    ga, gx = _grads(fn)
    np.testing.assert_allclose(ga, DATA[f"grad_{name}_da"], rtol=1e-10)
    np.testing.assert_allclose(gx, DATA[f"grad_{name}_dx"], rtol=1e-10)


def test_betainc_gradient_matches_tf_and_is_none_in_a_b():
    with tf.Graph().as_default():
        a, b = tf.constant([1.5, 0.7, 3.0], tf.float64), tf.constant([2.0, 0.9, 1.0], tf.float64)
        x = tf.constant([0.2, 0.6, 0.9], tf.float64)
        ga, gb, gx = tf.gradients(tf.math.betainc(a, b, x) * np.array([1.0, 2.0, 3.0]),
                                  [a, b, x])
        assert ga is None and gb is None
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(gx), DATA["grad_betainc_dx"], rtol=1e-10)


def test_random_gamma_gradient_is_tf_s_on_tf_s_samples():
    """Our gradient graph on TF's samples: sum over samples of RandomGammaGrad(alpha, s)."""
    alpha, samples = DATA["grad_rg_alpha"], DATA["grad_rg_sample"]
    want = DATA["grad_rg_dalpha"]
    np.testing.assert_allclose(random_gamma_grad(alpha, samples).sum(0), want, rtol=1e-10)


def test_random_gamma_gradient_graph_and_its_mean():
    """d sample / d alpha through RandomGammaGrad; for Gamma(alpha, beta) samples its mean is
    d E[x] / d alpha = 1 / beta (20000 draws: the standard error is ~1% of that)."""
    with tf.Graph().as_default():
        alpha, beta = tf.constant([0.8, 3.0], tf.float64), tf.constant(2.0, tf.float64)
        s = tf.random.gamma([20000], alpha, beta, dtype=tf.float64, seed=11)
        (g,) = tf.gradients(s, [alpha])
        grad_op = [op for op in tf.get_default_graph().get_operations()
                   if op.type == "RandomGammaGrad"]
        assert len(grad_op) == 1
        with tf.Session() as sess:
            gv = sess.run(g)
    np.testing.assert_allclose(gv / 20000, [0.5, 0.5], rtol=0.05)


# -- errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize("i", range(len(DATA["err_betainc_shapes"])))
def test_betainc_shape_errors_are_tf_s(i):
    shapes = ast.literal_eval(str(DATA["err_betainc_shapes"][i]))
    want = str(DATA["err_betainc_message"][i]).split(" for '")[0]
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as e:
            tf.math.betainc(*[tf.zeros(s, tf.float32) for s in shapes])
    assert str(e.value).startswith(want)
    assert "Betainc" in str(e.value)


def test_betainc_inconsistent_runtime_shapes_name_the_node():
    with tf.Graph().as_default():
        a, x = tf.placeholder(tf.float64), tf.placeholder(tf.float64)
        y = tf.math.betainc(a, 2.0, x, name="bi")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="inconsistent") as e:
                sess.run(y, {a: np.ones(2), x: np.full(3, 0.5)})
    assert "bi" in str(e.value)


def test_integer_inputs_are_refused_at_construction():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Igamma"):
            tf.math.igamma(tf.constant([1, 2]), tf.constant([1, 2]))


def test_public_names():
    for name in ("igamma", "igammac", "betainc"):
        assert getattr(tf, name) is getattr(tf.math, name) is getattr(sp, name)
