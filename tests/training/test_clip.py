"""Gradient clipping: values, None entries, IndexedSlices, names (TF1's), errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.runtime.kernels.cpu.gather  # noqa: F401  (until cpu/__init__ imports them)
import tensorweave.runtime.kernels.cpu.joining  # noqa: F401
import tensorweave.runtime.kernels.cpu.nn  # noqa: F401
from tensorweave.training import clip_ops

A = np.array([[3.0, 4.0], [0.0, 12.0]], np.float32)   # row norms 5 and 12, total 13
B = np.array([1.0, 2.0, 2.0], np.float32)             # norm 3


def _run(x):
    with tf.Session() as sess:
        return sess.run(x)


def _slices(values, indices, dense_shape):
    from tensorweave.ops.indexed_slices import IndexedSlices

    return IndexedSlices(tf.constant(values), tf.constant(np.asarray(indices, np.int32)),
                         tf.constant(np.asarray(dense_shape, np.int32)))


def test_clip_by_norm_scales_only_above_the_norm():
    t = tf.constant(A)
    clipped = clip_ops.clip_by_norm(t, 6.5)
    assert clipped.op.name == "clip_by_norm"
    np.testing.assert_allclose(_run(clipped), A * 0.5, rtol=1e-6)
    np.testing.assert_allclose(_run(clip_ops.clip_by_norm(t, 20.0)), A, rtol=1e-6)


def test_clip_by_norm_axes_and_zero():
    got = _run(clip_ops.clip_by_norm(tf.constant(A), 6.0, axes=[1]))
    np.testing.assert_allclose(got, [[3.0, 4.0], [0.0, 6.0]], rtol=1e-6)
    zeros = _run(clip_ops.clip_by_norm(tf.constant(np.zeros((2, 2), np.float32)), 1.0))
    np.testing.assert_array_equal(zeros, np.zeros((2, 2)))
    # a negative clip_norm acts as 0
    np.testing.assert_array_equal(_run(clip_ops.clip_by_norm(tf.constant(B), -1.0)),
                                  np.zeros(3))


def test_clip_by_norm_tensor_clip_norm():
    c = tf.placeholder(tf.float32, [])
    out = clip_ops.clip_by_norm(tf.constant(B), c)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(out, {c: 1.5}), B / 2, rtol=1e-6)


def test_global_norm_skips_none():
    norm = clip_ops.global_norm([tf.constant(A), None, tf.constant(B)])
    assert norm.op.name == "global_norm/global_norm"
    np.testing.assert_allclose(_run(norm), np.sqrt(13.0 ** 2 + 9.0), rtol=1e-6)


def test_clip_by_global_norm():
    total = np.sqrt(13.0 ** 2 + 9.0)
    clipped, norm = clip_ops.clip_by_global_norm([tf.constant(A), None, tf.constant(B)], 2.0)
    assert clipped[1] is None
    assert [c.op.name for c in (clipped[0], clipped[2])] == [
        "clip_by_global_norm/clip_by_global_norm/_0",
        "clip_by_global_norm/clip_by_global_norm/_2"]
    a, b, n = _run([clipped[0], clipped[2], norm])
    np.testing.assert_allclose(n, total, rtol=1e-6)
    np.testing.assert_allclose(a, A * 2.0 / total, rtol=1e-5)
    np.testing.assert_allclose(b, B * 2.0 / total, rtol=1e-5)
    np.testing.assert_allclose(np.sqrt((a ** 2).sum() + (b ** 2).sum()), 2.0, rtol=1e-5)


def test_clip_by_global_norm_below_limit_and_use_norm():
    clipped, _ = clip_ops.clip_by_global_norm([tf.constant(B)], 10.0)
    np.testing.assert_allclose(_run(clipped[0]), B, rtol=1e-6)
    clipped, norm = clip_ops.clip_by_global_norm([tf.constant(B)], 1.0,
                                                  use_norm=tf.constant(4.0))
    np.testing.assert_allclose(_run([clipped[0], norm])[0], B / 4, rtol=1e-6)


def test_clip_by_global_norm_infinite_norm_gives_nan():
    clipped, _ = clip_ops.clip_by_global_norm([tf.constant(np.array([np.inf, 1.0],
                                                                    np.float32))], 1.0)
    assert np.isnan(_run(clipped[0])).all()


def test_clip_by_global_norm_needs_a_sequence():
    with pytest.raises(TypeError, match="should be a sequence"):
        clip_ops.clip_by_global_norm(tf.constant(B), 1.0)
    with pytest.raises(TypeError, match="should be a sequence"):
        clip_ops.global_norm(tf.constant(B))


def test_clip_by_average_norm():
    out = clip_ops.clip_by_average_norm(tf.constant(B), 0.5)
    assert out.op.name == "clip_by_average_norm"
    # l2norm / n = 3 / 3 = 1 > 0.5: scaled by 0.5
    np.testing.assert_allclose(_run(out), B * 0.5, rtol=1e-6)


def test_clip_by_value_reuses_math():
    got = _run(clip_ops.clip_by_value(tf.constant(B), 1.5, 1.8))
    np.testing.assert_allclose(got, [1.5, 1.8, 1.8])


def _needs_slices():
    try:
        from tensorweave.ops.indexed_slices import IndexedSlices  # noqa: F401
    except ImportError:
        pytest.skip("tensorweave.ops.indexed_slices.IndexedSlices does not exist yet")


def test_indexed_slices_are_clipped_as_values():
    _needs_slices()
    s = _slices(np.array([[3.0, 4.0]], np.float32), [2], [5, 2])
    by_norm = clip_ops.clip_by_norm(s, 1.0)
    by_value = clip_ops.clip_by_value(s, 0.0, 3.5)
    (gs,), norm = clip_ops.clip_by_global_norm([s], 2.5)
    for out in (by_norm, by_value, gs):
        assert type(out).__name__ == "IndexedSlices" and out.indices is s.indices
    got = _run([by_norm.values, by_value.values, gs.values, norm])
    np.testing.assert_allclose(got[0], [[0.6, 0.8]], rtol=1e-6)
    np.testing.assert_allclose(got[1], [[3.0, 3.5]])
    np.testing.assert_allclose(got[2], [[1.5, 2.0]], rtol=1e-6)
    np.testing.assert_allclose(got[3], 5.0, rtol=1e-6)
