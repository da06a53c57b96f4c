"""tf.contrib.distributions beyond tf.distributions: MultivariateNormalDiag / TriL /
FullCovariance, Poisson and Logistic, against scipy.stats and closed forms
(make_contrib_expected.py → tests/data/contrib_distributions_expected.npz); samples by their
statistics; gradients of log_prob and of reparameterized samples against finite differences."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.client.gradient_checker import compute_gradient
from tests.distributions import contrib_scenario as sc

DATA = np.load(Path(__file__).resolve().parents[1] / "data"
               / "contrib_distributions_expected.npz")
D = tf.contrib.distributions
# float64 throughout: scipy's values and ours differ only by rounding (a few ulps of each
# log-determinant and quadratic form)
TOL = {"rtol": 1e-10, "atol": 1e-12}


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


@pytest.mark.parametrize("name", ["diag", "identity", "tril", "full"])
def test_multivariate_normal_matches_scipy(name):
    with tf.Graph().as_default():
        dist = sc.build(D, tf)[name]
        methods = ["log_prob", "entropy", "mean", "covariance", "stddev"]
        fetches = [dist.log_prob(sc.X)] + [getattr(dist, m)() for m in methods[1:]]
        got = _run(fetches)
    for m, value in zip(methods, got):
        want = DATA[f"{name}__{m}"]
        assert value.shape == want.shape, (m, value.shape, want.shape)
        np.testing.assert_allclose(value, want, err_msg=m, **TOL)


def test_multivariate_normal_shapes_are_static():
    with tf.Graph().as_default():
        dists = sc.build(D, tf)
        assert dists["diag"].batch_shape.as_list() == [2]
        assert dists["identity"].batch_shape.as_list() == []
        assert dists["tril"].batch_shape.as_list() == [2]
        assert all(d.event_shape.as_list() == [3] for d in dists.values())
        assert dists["full"].sample([5, 4], seed=1).shape.as_list() == [5, 4, 2, 3]
        assert dists["full"].log_prob(sc.X).shape.as_list() == [4, 2]


@pytest.mark.parametrize("a, b", sc.KL_PAIRS)
def test_kl_between_multivariate_normals(a, b):
    with tf.Graph().as_default():
        dists = sc.build(D, tf)
        got = _run(D.kl_divergence(dists[a], dists[b]))
    np.testing.assert_allclose(got, DATA[f"kl__{a}_{b}"], **TOL)


def test_multivariate_normal_samples_have_the_covariance():
    """40000 draws: the sample covariance's standard error is ~sqrt(2/n) |cov| ~ 1.5e-2."""
    with tf.Graph().as_default():
        dist = D.MultivariateNormalFullCovariance(sc.LOC[0], sc.COV)
        s = _run(dist.sample(40000, seed=4))
    np.testing.assert_allclose(s.mean(0), sc.LOC[0], atol=0.05)
    np.testing.assert_allclose(np.cov(s.T), sc.COV, atol=0.06)


def test_multivariate_normal_sample_gradient_in_loc_and_scale():
    """loc + scale z is differentiable in both (FULLY_REPARAMETERIZED): in one run,
    d sum(s) / d loc = n and d sum(s) / d scale_diag = sum of z = (s - loc) / scale_diag."""
    with tf.Graph().as_default():
        loc, diag = tf.constant(sc.LOC[0]), tf.constant(sc.DIAG[0])
        dist = D.MultivariateNormalDiag(loc, diag)
        assert dist.reparameterization_type is tf.distributions.FULLY_REPARAMETERIZED
        s = dist.sample(5, seed=9)
        s_v, g_loc, g_diag = _run([s] + tf.gradients(tf.reduce_sum(s), [loc, diag]))
    np.testing.assert_allclose(g_loc, [5.0, 5.0, 5.0], rtol=1e-12)
    np.testing.assert_allclose(g_diag, ((s_v - sc.LOC[0]) / sc.DIAG[0]).sum(0), rtol=1e-10)


def test_tril_log_prob_gradient():
    with tf.Graph().as_default():
        tril = tf.constant(sc.TRIL[0])
        lp = D.MultivariateNormalTriL(sc.LOC[0], tril).log_prob(sc.X[:, 0])
        with tf.Session():
            theo, num = compute_gradient(tril, [3, 3], lp, [4], x_init_value=sc.TRIL[0])
    np.testing.assert_allclose(theo, num, rtol=1e-5, atol=1e-6)


def test_multivariate_normal_needs_a_size():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="loc"):
            D.MultivariateNormalDiag(scale_identity_multiplier=2.0)


# -- Poisson ----------------------------------------------------------------------------------
def test_poisson_matches_scipy():
    with tf.Graph().as_default():
        p = D.Poisson(rate=sc.RATE)
        got = _run({"log_prob": p.log_prob(sc.COUNTS), "cdf": p.cdf(sc.COUNTS),
                    "cdf_non_integer": p.cdf(sc.NON_INTEGER), "mean": p.mean(),
                    "stddev": p.stddev(), "mode": p.mode()})
    for key, value in got.items():
        np.testing.assert_allclose(value, DATA[f"poisson__{key}"], err_msg=key, **TOL)


def test_poisson_from_log_rate_and_its_samples():
    with tf.Graph().as_default():
        p = D.Poisson(log_rate=np.log(sc.RATE))
        lp, s = _run([p.log_prob(sc.COUNTS), p.sample(20000, seed=2)])
    np.testing.assert_allclose(lp, DATA["poisson__log_prob"], **TOL)
    assert s.shape == (20000, 3) and (s == np.floor(s)).all()
    # standard error of the mean: sqrt(rate / n) <= 0.025
    np.testing.assert_allclose(s.mean(0), sc.RATE, atol=0.1)


def test_poisson_takes_exactly_one_parameter():
    with pytest.raises(ValueError, match="exactly one"):
        D.Poisson(rate=1.0, log_rate=0.0)
    with pytest.raises(ValueError, match="exactly one"):
        D.Poisson()


# -- Logistic ---------------------------------------------------------------------------------
def test_logistic_matches_scipy():
    methods = ["log_prob", "cdf", "log_cdf", "survival", "log_survival"]
    with tf.Graph().as_default():
        d = D.Logistic(sc.LOGISTIC_LOC, sc.LOGISTIC_SCALE)
        x = sc.LOGISTIC_X
        fetches = [d.log_prob(x), d.cdf(x), d.log_cdf(x), d.survival_function(x),
                   d.log_survival_function(x), d.entropy(), d.mean(), d.stddev()]
        got = _run(fetches)
    for m, value in zip(methods + ["entropy", "mean", "stddev"], got):
        want = DATA[f"logistic__{m}"]
        np.testing.assert_allclose(value, np.broadcast_to(want, value.shape), err_msg=m, **TOL)


def test_logistic_samples():
    """20000 draws: mean within 4 standard errors (scale pi / sqrt(3n) = 0.013)."""
    with tf.Graph().as_default():
        s = _run(D.Logistic(np.float32(1.0), np.float32(0.5)).sample(20000, seed=3))
    assert s.dtype == np.float32
    assert abs(s.mean() - 1.0) < 0.05 and abs(s.std() - 0.5 * np.pi / np.sqrt(3)) < 0.03


def test_core_classes_are_re_exported():
    for name in ("Normal", "Bernoulli", "Categorical", "Gamma", "Beta", "kl_divergence",
                 "RegisterKL"):
        assert getattr(D, name) is getattr(tf.distributions, name)
