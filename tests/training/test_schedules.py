"""Learning-rate schedules: values against TF1's documented formulas at many steps."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.runtime.kernels.cpu.gather  # noqa: F401  (SelectV2, until wired)
from tensorweave.training import learning_rate_decay as lrd

STEPS = [0, 1, 4, 5, 6, 9, 10, 11, 19, 20, 25, 29, 30, 31, 69, 70, 100]


def _values(build, steps=STEPS, step_dtype=tf.int64):
    """`build(step)` evaluated for every step fed into an int64 scalar placeholder."""
    step = tf.placeholder(step_dtype, [])
    out = build(step)
    with tf.Session() as sess:
        return np.array([sess.run(out, {step: s}) for s in steps]), out


def _check(build, formula, rtol=1e-6, **kwargs):
    got, out = _values(build, **kwargs)
    want = np.array([formula(s) for s in kwargs.get("steps", STEPS)])
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-9)
    return out


@pytest.mark.parametrize("staircase", [False, True])
def test_exponential_decay(staircase):
    def formula(s):
        p = math.floor(s / 10) if staircase else s / 10
        return 0.1 * 0.5 ** p

    out = _check(lambda g: lrd.exponential_decay(0.1, g, 10, 0.5, staircase=staircase), formula)
    assert out.op.name == "ExponentialDecay" and out.dtype == tf.float32


@pytest.mark.parametrize("staircase", [False, True])
def test_natural_exp_decay(staircase):
    def formula(s):
        p = math.floor(s / 5) if staircase else s / 5
        return 0.1 * math.exp(-0.5 * p)

    _check(lambda g: lrd.natural_exp_decay(0.1, g, 5, 0.5, staircase=staircase), formula)


@pytest.mark.parametrize("staircase", [False, True])
def test_inverse_time_decay(staircase):
    def formula(s):
        p = math.floor(s / 10) if staircase else s / 10
        return 0.1 / (1 + 0.5 * p)

    out = _check(lambda g: lrd.inverse_time_decay(0.1, g, 10, 0.5, staircase=staircase),
                 formula)
    assert out.op.name == "InverseTimeDecay"


def test_polynomial_decay():
    def formula(s):
        return (0.1 - 0.01) * (1 - min(s, 10) / 10) ** 2 + 0.01

    _check(lambda g: lrd.polynomial_decay(0.1, g, 10, 0.01, power=2.0), formula)


def test_polynomial_decay_cycle():
    def formula(s):
        decay_steps = 10 * (1 if s == 0 else math.ceil(s / 10))
        return (0.1 - 0.01) * (1 - s / decay_steps) ** 0.5 + 0.01

    _check(lambda g: lrd.polynomial_decay(0.1, g, 10, 0.01, power=0.5, cycle=True), formula,
           rtol=1e-5)


def test_piecewise_constant():
    def formula(s):
        return 1.0 if s <= 5 else 0.5 if s <= 10 else 0.1

    # int32 boundaries are cast to the int64 step, as TF allows
    _check(lambda g: lrd.piecewise_constant(g, [5, 10], [1.0, 0.5, 0.1]), formula)


def test_piecewise_constant_errors():
    step = tf.placeholder(tf.int64, [])
    with pytest.raises(ValueError, match="1 less than the length of values"):
        lrd.piecewise_constant(step, [5, 10], [1.0, 0.5])
    with pytest.raises(ValueError, match="must have the same dtype as x"):
        lrd.piecewise_constant(step, [5.0], [1.0, 0.5])
    with pytest.raises(ValueError, match="Values must have elements all with the same dtype"):
        lrd.piecewise_constant(step, [5], [1.0, 2])


def test_cosine_decay():
    def formula(s):
        cosine = 0.5 * (1 + math.cos(math.pi * min(s, 20) / 20))
        return 0.1 * ((1 - 0.1) * cosine + 0.1)

    _check(lambda g: lrd.cosine_decay(0.1, g, 20, alpha=0.1), formula, rtol=1e-5)


def test_cosine_decay_restarts_known_points():
    """first period 10 steps, then 20, then 40; each restart starts at m_mul^i."""
    got, _ = _values(lambda g: lrd.cosine_decay_restarts(1.0, g, 10, t_mul=2.0, m_mul=0.5),
                     steps=[0, 5, 10, 20, 30, 50, 70])
    np.testing.assert_allclose(got, [1.0, 0.5, 0.5, 0.25, 0.25, 0.125, 0.125], atol=1e-6)


@pytest.mark.parametrize("t_mul", [1.0, 2.0, 1.5])
def test_cosine_decay_restarts(t_mul):
    def formula(s, first=10, m_mul=0.9, alpha=0.05):
        frac = s / first
        if t_mul == 1.0:
            i = math.floor(frac)
            frac -= i
        else:
            i = math.floor(math.log(1 - frac * (1 - t_mul)) / math.log(t_mul))
            frac = (frac - (1 - t_mul ** i) / (1 - t_mul)) / t_mul ** i
        cosine = 0.5 * m_mul ** i * (1 + math.cos(math.pi * frac))
        return 0.1 * ((1 - alpha) * cosine + alpha)

    out = _check(lambda g: lrd.cosine_decay_restarts(0.1, g, 10, t_mul=t_mul, m_mul=0.9,
                                                     alpha=0.05), formula, rtol=1e-4)
    assert out.op.name == "SGDRDecay"


def test_linear_cosine_decay():
    def formula(s):
        s = min(s, 20)
        linear = (20 - s) / 20
        cosine = 0.5 * (1 + math.cos(math.pi * 2 * 0.5 * s / 20))
        return 0.1 * ((0.0 + linear) * cosine + 0.001)

    _check(lambda g: lrd.linear_cosine_decay(0.1, g, 20), formula, rtol=1e-5)


def test_float64_learning_rate_and_int32_step():
    got, out = _values(lambda g: lrd.exponential_decay(np.float64(0.1), g, 10, 0.5),
                       steps=[0, 10], step_dtype=tf.int32)
    assert out.dtype == tf.float64
    np.testing.assert_allclose(got, [0.1, 0.05], rtol=1e-12)


@pytest.mark.parametrize("fn,args", [
    (lrd.exponential_decay, (10, 0.5)), (lrd.natural_exp_decay, (10, 0.5)),
    (lrd.inverse_time_decay, (10, 0.5)), (lrd.polynomial_decay, (10,)),
    (lrd.cosine_decay, (10,)), (lrd.cosine_decay_restarts, (10,)),
    (lrd.linear_cosine_decay, (10,)),
])
def test_global_step_is_required(fn, args):
    with pytest.raises(ValueError, match="global_step is required"):
        fn(0.1, None, *args)


def test_schedule_follows_a_variable_step():
    step = tf.Variable(0, dtype=tf.int64, name="step")
    lr = lrd.exponential_decay(1.0, step, 1, 0.5)
    inc = tf.assign_add(step, 1)
    with tf.Session() as sess:
        sess.run(step.initializer)
        seen = []
        for _ in range(3):
            seen.append(sess.run(lr))
            sess.run(inc)
    np.testing.assert_allclose(seen, [1.0, 0.5, 0.25])
