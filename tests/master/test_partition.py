"""Partitions that cannot run as they are: the error says what to do."""

from __future__ import annotations

import pytest

import tensorweave as tf


def test_a_loop_split_over_devices_fails_with_advice():
    """TF runs such loops with a control loop in every partition; tensorweave runs a loop on
    one device and says so (instead of a bare frame error)."""
    with tf.Graph().as_default():
        x = tf.constant(1.0)

        def body(i, a):
            with tf.device("/cpu:1"):
                b = a * 2.0
            return i + 1, b

        r = tf.while_loop(lambda i, a: i < 3, body, [0, x])[1]
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
            with pytest.raises(tf.errors.InvalidArgumentError, match="place all of a loop's ops"):
                s.run(r)
