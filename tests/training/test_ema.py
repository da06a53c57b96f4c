"""ExponentialMovingAverage and assign_moving_average: TF1's names and update formulas."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.runtime.kernels.cpu.control_flow  # noqa: F401  (until wired)
from tensorweave.training.moving_averages import (
    ExponentialMovingAverage,
    assign_moving_average,
    weighted_moving_average,
)


def _init(sess):
    sess.run([v.initializer for v in tf.global_variables()])


def test_shadow_variables_named_and_collected_as_tf():
    w = tf.Variable([1.0, 2.0], name="w")
    with tf.variable_scope("layer"):
        k = tf.get_variable("kernel", [2], initializer=tf.zeros_initializer())
    ema = ExponentialMovingAverage(0.9)
    op = ema.apply([w, k])
    assert op.name == "ExponentialMovingAverage" and op.type == "NoOp"
    avg = ema.average(w)
    assert avg.op.name == "w/ExponentialMovingAverage"
    assert ema.average(k).op.name == "layer/kernel/ExponentialMovingAverage"
    assert ema.average_name(w) == "w/ExponentialMovingAverage"
    assert avg in tf.global_variables() and avg not in tf.trainable_variables()
    assert avg.op.colocation_groups() == [b"loc:@w"]
    assert tf.moving_average_variables() == [w, k]
    restore = ema.variables_to_restore()
    assert restore == {"w/ExponentialMovingAverage": w,
                       "layer/kernel/ExponentialMovingAverage": k}


def test_average_name_before_apply_and_unknown_average():
    w = tf.Variable([1.0], name="w")
    ema = ExponentialMovingAverage(0.9, name="Avg")
    assert ema.average_name(w) == "w/Avg"
    assert ema.average(w) is None


def test_variables_to_restore_keeps_other_variables():
    w = tf.Variable([1.0], name="w")
    step = tf.Variable(0, name="step", trainable=False)
    ema = ExponentialMovingAverage(0.9)
    ema.apply([w])
    assert ema.variables_to_restore() == {"w/ExponentialMovingAverage": w, "step": step}


def test_updates_follow_the_formula():
    w = tf.Variable([1.0, -2.0], name="w")
    ema = ExponentialMovingAverage(0.75)
    op = ema.apply([w])
    value = tf.placeholder(tf.float32, [2])
    set_w = tf.assign(w, value)
    want = np.array([1.0, -2.0])
    with tf.Session() as sess:
        _init(sess)
        np.testing.assert_allclose(sess.run(ema.average(w)), want)  # starts at w's value
        for x in ([3.0, 1.0], [0.0, 5.0], [2.0, 2.0]):
            sess.run(set_w, {value: x})
            sess.run(op)
            want = 0.75 * want + 0.25 * np.array(x)
            np.testing.assert_allclose(sess.run(ema.average(w)), want, rtol=1e-6)


def test_num_updates_caps_decay():
    w = tf.Variable([0.0], name="w")
    steps = tf.Variable(0, name="steps", trainable=False)
    ema = ExponentialMovingAverage(0.999, num_updates=steps)
    op = ema.apply([w])
    with tf.Session() as sess:
        _init(sess)
        sess.run(tf.assign(w, [10.0]))
        sess.run(op)   # decay = min(0.999, 1/10) = 0.1
        np.testing.assert_allclose(sess.run(ema.average(w)), [9.0], rtol=1e-6)


def test_zero_debias_for_tensors():
    x = tf.placeholder(tf.float32, [2])
    t = tf.identity(x, name="t")
    ema = ExponentialMovingAverage(0.5, zero_debias=True)
    op = ema.apply([t])
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["t/ExponentialMovingAverage", "t/ExponentialMovingAverage/biased",
                     "t/ExponentialMovingAverage/local_step"]
    biased, want = np.zeros(2), None
    with tf.Session() as sess:
        _init(sess)
        for i, v in enumerate(([4.0, 2.0], [0.0, 2.0], [8.0, 2.0]), start=1):
            sess.run(op, {x: v})
            biased = 0.5 * biased + 0.5 * np.array(v)
            want = biased / (1 - 0.5 ** i)
            np.testing.assert_allclose(sess.run(ema.average(t)), want, rtol=1e-6)


def test_rejects_integer_variables():
    with pytest.raises(TypeError, match="half, float, or double"):
        ExponentialMovingAverage(0.9).apply([tf.Variable([1], name="i")])


def test_assign_moving_average():
    v = tf.Variable([2.0, 4.0], name="v")
    update = assign_moving_average(v, tf.constant([0.0, 8.0]), 0.9, zero_debias=False)
    assert update.op.name == "AssignMovingAvg" and update.op.type == "AssignSub"
    with tf.Session() as sess:
        _init(sess)
        np.testing.assert_allclose(sess.run(update), [1.8, 4.4], rtol=1e-6)


def test_weighted_moving_average():
    value, weight = tf.placeholder(tf.float32, [2]), tf.placeholder(tf.float32, [])
    avg = weighted_moving_average(value, 0.5, weight)
    assert sorted(v.op.name for v in tf.global_variables()) == [
        "WeightedMovingAvg/value_x_weight", "WeightedMovingAvg/weight"]
    num, den = np.zeros(2), 0.0
    with tf.Session() as sess:
        _init(sess)
        for v, w in (([2.0, 4.0], 1.0), ([6.0, 0.0], 3.0)):
            got = sess.run(avg, {value: v, weight: w})
            num, den = 0.5 * num + 0.5 * np.array(v) * w, 0.5 * den + 0.5 * w
            np.testing.assert_allclose(got, num / den, rtol=1e-6)
