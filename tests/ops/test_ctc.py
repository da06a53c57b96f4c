"""CTC ops against TensorFlow 2.21's numbers (tests/data/ctc_expected.npz, written by
make_ctc_expected.py from ctc_cases.py): losses and their logits gradients, greedy and
beam-search decodings with their log-probabilities; TF's errors for bad labels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tests.ops import ctc_cases

EXPECTED = np.load(Path(__file__).resolve().parents[1] / "data" / "ctc_expected.npz")


def _want(name: str) -> list[np.ndarray]:
    n = sum(1 for k in EXPECTED.files if k.startswith(f"{name}/"))
    return [EXPECTED[f"{name}/{i}"] for i in range(n)]


@pytest.mark.parametrize("name", sorted(ctc_cases.CASES))
def test_ctc_case_matches_tensorflow(name):
    with tf.Graph().as_default(), tf.Session() as sess:
        got = ctc_cases.flatten(sess.run(ctc_cases.CASES[name](tf)))
    want = _want(name)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, w.shape, g.dtype)
        if g.dtype.kind == "f":
            # NOTE: TF runs the recursions in the input's precision, we in float64: the
            # float32 results agree to a few ulps of the log-probabilities' size (~10).
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, err_msg=f"{name}/{i}")
        else:
            assert g.tolist() == w.tolist(), f"{name}/{i}"


def _run_loss(labels_idx, labels_val, seq, **kw):
    with tf.Graph().as_default():
        labels = tf.SparseTensor(labels_idx, tf.constant(labels_val, tf.int32),
                                 [ctc_cases.B, 6])
        loss = tf.nn.ctc_loss(labels, tf.constant(ctc_cases.LOGITS), tf.constant(seq), **kw)
        with tf.Session() as sess:
            return sess.run(loss)


def test_bad_labels_fail_as_in_tensorflow():
    idx = [[b, 0] for b in range(ctc_cases.B)]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels length is zero in batch 1"):
        _run_loss([[0, 0], [2, 0], [3, 0]], [1, 1, 1], ctc_cases.SEQ)
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-null label"):
        _run_loss([[0, 0], [0, 1]] + idx[1:], [4, 1, 1, 1, 1], ctc_cases.SEQ)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Not enough time"):
        _run_loss(idx, [1, 1, 1, 1], np.array([7, 0, 7, 3], np.int32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"sequence_length\(0\) <= 7"):
        _run_loss(idx, [1, 1, 1, 1], np.array([8, 1, 1, 1], np.int32))


def test_construction_errors_name_the_op():
    with tf.Graph().as_default():
        labels = tf.SparseTensor([[0, 0]], tf.constant([1], tf.int32), [1, 1])
        with pytest.raises(TypeError, match="SparseTensor"):
            tf.nn.ctc_loss(tf.constant([[1]]), tf.zeros([2, 1, 3]), [2])
        with pytest.raises(ValueError, match="CTCLoss"):
            tf.nn.ctc_loss(labels, tf.zeros([2, 3]), [2])
        with pytest.raises(ValueError, match="CTCGreedyDecoder"):
            tf.nn.ctc_greedy_decoder(tf.zeros([2, 2, 3]), [2, 2, 2])


def test_second_derivative_is_refused_as_in_tensorflow():
    with tf.Graph().as_default():
        x = tf.constant(ctc_cases.LOGITS)
        labels = tf.SparseTensor(ctc_cases.IDX, tf.constant(ctc_cases.VALS, tf.int32),
                                 [ctc_cases.B, 4])
        g = tf.gradients(tf.reduce_sum(tf.nn.ctc_loss(labels, x, ctc_cases.SEQ)), x)[0]
        with pytest.raises(LookupError, match="second"):
            tf.gradients(tf.reduce_sum(g * g), x)
