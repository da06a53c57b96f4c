"""`tf.contrib.deprecated`'s TF 0.12 summaries: the tag is kept exactly as given (no scope
prefix, no cleaning), `name` names only the op, scalar_summary takes a tags vector, and the
summaries land in GraphKeys.SUMMARIES for merge_all_summaries (TF 1.15 logging_ops)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.proto import summary_pb2


def _values(serialized) -> dict:
    s = summary_pb2.Summary.FromString(serialized)
    return {v.tag: v for v in s.value}


def test_tags_are_kept_as_written_and_ops_get_default_scopes():
    with tf.Graph().as_default():
        with tf.name_scope("tower_0"):
            a = tf.contrib.deprecated.scalar_summary("loss (raw)", tf.constant(2.5))
            h = tf.contrib.deprecated.histogram_summary("w/hist", tf.constant([1.0, 2.0]))
        v = tf.contrib.deprecated.scalar_summary(["a", "b"], tf.constant([1.0, 3.0]),
                                                 name="pair")
        assert a.op.name == "tower_0/ScalarSummary" and h.op.name == "tower_0/HistogramSummary"
        assert v.op.name == "pair"
        merged = tf.contrib.deprecated.merge_all_summaries()
        assert tf.contrib.deprecated.merge_all_summaries("nothing_here") is None
        with tf.Session() as sess:
            got = _values(sess.run(merged))
    assert got["loss (raw)"].simple_value == 2.5
    assert (got["a"].simple_value, got["b"].simple_value) == (1.0, 3.0)
    assert got["w/hist"].histo.num == 2 and got["w/hist"].histo.sum == 3.0


def test_image_summary_and_collections():
    with tf.Graph().as_default():
        img = tf.contrib.deprecated.image_summary(
            "pics", tf.constant(np.zeros([2, 4, 4, 3], np.float32)), max_images=1,
            collections=["mine"])
        assert tf.get_collection("mine") == [img] and not tf.get_collection(
            tf.GraphKeys.SUMMARIES)
        merged = tf.contrib.deprecated.merge_summary([img])
        with tf.Session() as sess:
            got = _values(sess.run(merged))
    assert list(got) == ["pics/image"] and got["pics/image"].image.width == 4


def test_mismatched_tags_fail_at_run_time_naming_the_shapes():
    with tf.Graph().as_default():
        s = tf.contrib.deprecated.scalar_summary(["a", "b"], tf.constant([1.0, 2.0, 3.0]))
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="not the same shape"):
            sess.run(s)
