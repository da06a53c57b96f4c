"""tf.distributions against TensorFlow 2.21's tf.compat.v1.distributions
(make_distributions_expected.py → tests/data/distributions_expected.npz): densities, CDFs,
moments, entropies, KL divergences and sample shapes; which methods TF leaves unimplemented;
samples by their statistics (the random streams are not TF's) and seeds; gradients of
log_prob and of reparameterized samples against finite differences."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.client.gradient_checker import compute_gradient
from tests.distributions.dist_scenario import build

DATA = np.load(Path(__file__).resolve().parents[1] / "data" / "distributions_expected.npz")
KEYS = sorted(k for k in DATA.files if k != "missing")
_GOT = {}


def _got():
    if not _GOT:
        with tf.Graph().as_default():
            graph, missing = build(tf, tf.distributions)
            _GOT["missing"] = sorted(missing)
            with tf.Session() as sess:
                _GOT.update({k.replace("/", "__"): v for k, v in sess.run(graph).items()})
    return _GOT


@pytest.mark.parametrize("key", KEYS)
def test_matches_tensorflow(key):
    got, want = _got()[key], DATA[key]
    assert got.shape == want.shape, key
    assert got.dtype == want.dtype, key
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6, err_msg=key)


def test_same_methods_unimplemented_as_tensorflow():
    assert _got()["missing"] == sorted(DATA["missing"].tolist())


def _draw(dist, n, seed=7):
    with tf.Session() as sess:
        return sess.run(dist.sample(n, seed=seed))


@pytest.mark.parametrize("make,mean,var", [
    (lambda D: D.Normal(np.float32(1.5), np.float32(2.0)), 1.5, 4.0),
    (lambda D: D.Laplace(np.float32(-1.0), np.float32(0.5)), -1.0, 0.5),
    (lambda D: D.Uniform(np.float32(2.0), np.float32(5.0)), 3.5, 0.75),
    (lambda D: D.Gamma(np.float32(3.0), np.float32(2.0)), 1.5, 0.75),
    (lambda D: D.Exponential(np.float32(4.0)), 0.25, 0.0625),
    (lambda D: D.Beta(np.float32(2.0), np.float32(3.0)), 0.4, 0.04),
    (lambda D: D.StudentT(np.float32(5.0), np.float32(1.0), np.float32(2.0)), 1.0, 4 * 5 / 3),
    (lambda D: D.Bernoulli(probs=np.float32(0.3)), 0.3, 0.21),
    (lambda D: D.Categorical(probs=np.float32([0.2, 0.5, 0.3])), 1.1, 0.49),
])
def test_sample_statistics(make, mean, var):
    with tf.Graph().as_default():
        x = _draw(make(tf.distributions), 20000).astype(np.float64)
    assert x.shape == (20000,)
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / 20000) + 1e-3
    assert abs(x.var() - var) < 0.08 * var


def test_dirichlet_and_multinomial_samples():
    with tf.Graph().as_default():
        d = _draw(tf.distributions.Dirichlet(np.float32([1.0, 2.0, 5.0])), 4000)
        m = _draw(tf.distributions.Multinomial(10.0, probs=np.float32([0.2, 0.8])), 4000)
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(d.mean(0), [0.125, 0.25, 0.625], atol=0.015)
    assert (m.sum(-1) == 10).all()
    np.testing.assert_allclose(m.mean(0), [2.0, 8.0], atol=0.1)


def test_op_seed_and_graph_seed_make_samples_repeat():
    def run(graph_seed):
        with tf.Graph().as_default():
            tf.set_random_seed(graph_seed)
            s = tf.distributions.Normal(0.0, 1.0).sample(5, seed=3)
            with tf.Session() as sess:
                return sess.run(s)
    np.testing.assert_array_equal(run(1), run(1))
    assert not np.array_equal(run(1), run(2))


def test_names_and_scopes():
    with tf.Graph().as_default():
        n = tf.distributions.Normal(0.0, 1.0, name="prior")
        lp = n.log_prob(0.5)
        s = n.sample(2)
    assert n.name == "prior/"
    assert lp.name.startswith("prior/log_prob/")
    assert s.name.startswith("prior/sample/")
    assert n.reparameterization_type == tf.distributions.FULLY_REPARAMETERIZED
    with pytest.raises(NotImplementedError, match="No KL"):
        tf.distributions.kl_divergence(n, tf.distributions.Gamma(1.0, 1.0))


def test_gradients_of_log_prob_and_reparameterized_samples():
    with tf.Graph().as_default():
        loc = tf.placeholder(tf.float64, [3])
        scale = tf.constant([0.5, 1.0, 2.0], tf.float64)
        x = tf.constant([0.1, -0.4, 1.3], tf.float64)
        lp = tf.distributions.Normal(loc, scale).log_prob(x)
        smp = tf.distributions.Normal(loc, scale).sample(seed=4)
        prior = tf.distributions.Normal(np.float64(0.3), np.float64(1.5))
        kl = tf.distributions.kl_divergence(tf.distributions.Normal(loc, scale), prior)
        v = np.array([0.2, 0.7, -1.0])
        for y in (lp, kl):
            jt, jn = compute_gradient(loc, [3], y, [3], x_init_value=v)
            np.testing.assert_allclose(jt, jn, rtol=1e-4, atol=1e-6)
        # a fresh sample each run: d sample / d loc is 1 (the reparameterization)
        with tf.Session() as sess:
            got = sess.run(tf.gradients(smp, loc)[0], {loc: v})
        np.testing.assert_array_equal(got, np.ones(3))


@pytest.mark.parametrize("make", [
    lambda D, bad: D.Normal(0.0, bad, validate_args=True),
    lambda D, bad: D.Gamma(bad, 1.0, validate_args=True),
    lambda D, bad: D.Beta(1.0, bad, validate_args=True),
    lambda D, bad: D.StudentT(bad, 0.0, 1.0, validate_args=True),
    lambda D, bad: D.Exponential(bad, validate_args=True),
    lambda D, bad: D.Uniform(1.0, 1.0 + bad, validate_args=True),
])
def test_validate_args_checks_parameters_when_run(make):
    with tf.Graph().as_default():
        bad = tf.placeholder(tf.float32, [])
        m = make(tf.distributions, bad).log_prob(1.5)
        with tf.Session() as sess:
            sess.run(m, {bad: 3.0})                  # valid parameters: no error
            with pytest.raises(tf.errors.InvalidArgumentError, match="did not hold"):
                sess.run(m, {bad: -1.0})


def test_student_t_cdf_broadcasts_df_against_the_value():
    """TF's StudentT.cdf needs df of the value's shape (Betainc does not broadcast); ours
    broadcasts, giving TF's numbers for the broadcast df."""
    from tests.distributions.dist_scenario import X

    loc, scale = np.float32([0.5, -1.0, 2.0]), np.float32([[1.0, 0.5, 2.0], [0.3, 1.5, 1.0]])
    with tf.Graph().as_default(), tf.Session() as sess:
        t = tf.distributions.StudentT(np.float32([3.0, 1.5, 0.8]), loc, scale)
        got = sess.run([t.cdf(X), t.survival_function(X)])
    np.testing.assert_allclose(got[0], DATA["student_t__cdf_full_df"], rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(got[1], DATA["student_t__survival_full_df"], rtol=2e-5,
                               atol=2e-6)
