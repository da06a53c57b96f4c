"""`tf.assert_*` (check_ops): the Assert op passes silently or fails the step naming the
condition and the operands."""

from __future__ import annotations

import pytest

import tensorweave as tf


@pytest.mark.parametrize("fn, x, y, ok", [
    (tf.assert_equal, [1, 2], [1, 2], True), (tf.assert_equal, [1, 2], [1, 3], False),
    (tf.assert_less, [1, 2], [2, 3], True), (tf.assert_less, [1, 3], [2, 3], False),
    (tf.assert_less_equal, [1, 3], [2, 3], True), (tf.assert_greater, [3], [2], True),
    (tf.assert_greater_equal, [2], [3], False), (tf.assert_none_equal, [1], [2], True),
])
def test_binary_asserts(fn, x, y, ok):
    op = fn(tf.constant(x), tf.constant(y), message="msg")
    with tf.Session() as sess:
        if ok:
            sess.run(op)
        else:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="assertion failed: .*msg.*Condition x .* y did not hold"):
                sess.run(op)


@pytest.mark.parametrize("fn, value, ok", [
    (tf.assert_positive, 1, True), (tf.assert_positive, 0, False),
    (tf.assert_non_negative, 0, True), (tf.assert_negative, 0, False),
    (tf.assert_non_positive, 0, True),
])
def test_sign_asserts(fn, value, ok):
    x = tf.constant(value, name="value")
    op = fn(x)
    with tf.Session() as sess:
        if ok:
            sess.run(op)
        else:
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"x \(value:0\) = "):
                sess.run(op)


def test_assert_as_a_control_dependency():
    x = tf.placeholder(tf.int32, [])
    with tf.control_dependencies([tf.assert_positive(x, message="x must be positive")]):
        y = tf.identity(x)
    with tf.Session() as sess:
        assert sess.run(y, {x: 3}) == 3
        with pytest.raises(tf.errors.InvalidArgumentError, match="x must be positive"):
            sess.run(y, {x: -1})
