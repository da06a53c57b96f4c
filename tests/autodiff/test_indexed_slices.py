"""IndexedSlices: densifying conversion, session fetch and feed, negation."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.indexed_slices import (
    IndexedSlices,
    IndexedSlicesValue,
    convert_to_tensor_or_indexed_slices,
)
from tests.autodiff import families  # noqa: F401


def _slices():
    values = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    indices = tf.constant([2, 0, 2])
    return IndexedSlices(values, indices, tf.constant([4, 2]))


def test_properties():
    s = _slices()
    assert s.dtype == tf.float32 and s.op is s.values.op and s.graph is s.values.graph
    assert s.name == s.values.name
    assert s.shape.as_tuple() == (4, 2)
    assert "IndexedSlices(indices=" in str(s)


def test_converts_to_a_dense_tensor_with_unsorted_segment_sum():
    s = _slices()
    dense = tf.convert_to_tensor(s)
    assert dense.op.type == "UnsortedSegmentSum"
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(dense), [[3, 4], [0, 0], [6, 8], [0, 0]])
        np.testing.assert_allclose(sess.run(s.values * 0.0 + dense[:1]), [[3, 4]] * 3)


def test_used_as_an_operand_it_densifies():
    s = _slices()
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(tf.constant(1.0) * s),
                                   [[3, 4], [0, 0], [6, 8], [0, 0]])


def test_conversion_errors():
    s = _slices()
    with pytest.raises(ValueError, match="requested dtype"):
        tf.convert_to_tensor(s, dtype=tf.int32)
    no_shape = IndexedSlices(s.values, s.indices)
    with pytest.raises(ValueError, match="without dense_shape"):
        tf.convert_to_tensor(no_shape)
    assert convert_to_tensor_or_indexed_slices(s) is s


def test_fetch_and_feed():
    s = _slices()
    with tf.Session() as sess:
        v = sess.run(s)
        assert isinstance(v, IndexedSlicesValue)
        np.testing.assert_array_equal(v.indices, [2, 0, 2])
        np.testing.assert_array_equal(v.dense_shape, [4, 2])
        fed = sess.run(tf.convert_to_tensor(s), {s: ([[1.0, 1.0]] * 3, [1, 1, 3], [4, 2])})
        np.testing.assert_allclose(fed, [[0, 0], [2, 2], [0, 0], [1, 1]])


def test_negation_keeps_it_sparse():
    n = -_slices()
    assert isinstance(n, IndexedSlices) and n.values.op.type == "Neg"
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(n).values, [[-1, -2], [-3, -4], [-5, -6]])


def test_unknown_dense_shape_uses_a_strided_slice():
    shape = tf.placeholder(tf.int32, [2])
    s = IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), shape)
    dense = tf.convert_to_tensor(s)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(dense, {shape: [3, 2]}), [[0, 0], [1, 2], [0, 0]])
