"""Shared helpers of the tf.data tests: registers the data modules, drains iterators."""

from __future__ import annotations

import tensorweave as tf
import tensorweave.runtime.kernels.cpu.dataset  # noqa: F401 - registers kernels
import tensorweave.runtime.kernels.cpu.dataset_iterator  # noqa: F401
from tensorweave.data.dataset import Dataset  # noqa: F401 - re-exported for tests


def drain(sess, next_el, feed_dict=None, limit=100000) -> list:
    """Runs `next_el` until OutOfRangeError; returns the values (fails past `limit`)."""
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(next_el, feed_dict=feed_dict))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError(f"no end of sequence after {limit} elements")


def values(ds, sess=None) -> list:
    """All elements of `ds` through a one-shot iterator in a new session."""
    nx = ds.make_one_shot_iterator().get_next()
    with tf.Session() as s:
        return drain(s, nx)
