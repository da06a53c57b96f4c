"""tf.contrib.legacy_seq2seq (TF 1.15's basic part): rnn_decoder is the static RNN from a
given state (same weights, same outputs as static_rnn, whose numbers are checked against TF
elsewhere), loop_function feeds outputs back, the losses equal their numpy definitions, and
the embedding models have TF 1.15's variable names."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

L = tf.contrib.legacy_seq2seq
RNN = tf.contrib.rnn
RNG = np.random.default_rng(8)


def _steps(n, shape):
    return [RNG.normal(size=shape).astype(np.float32) for _ in range(n)]


def test_rnn_decoder_equals_static_rnn_from_the_same_state():
    xs, h0 = _steps(4, (3, 5)), RNG.normal(size=(3, 6)).astype(np.float32)
    with tf.Graph().as_default():
        cell = RNN.GRUCell(6)
        outs, state = L.rnn_decoder([tf.constant(x) for x in xs], tf.constant(h0), cell)
        with tf.variable_scope("rnn_decoder", reuse=True):
            ref, ref_state = tf.nn.static_rnn(cell, [tf.constant(x) for x in xs],
                                              initial_state=tf.constant(h0))
        names = sorted(v.op.name for v in tf.global_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, want = sess.run([outs + [state], ref + [ref_state]])
    assert names == ["rnn_decoder/gru_cell/candidate/bias", "rnn_decoder/gru_cell/candidate/kernel",
                     "rnn_decoder/gru_cell/gates/bias", "rnn_decoder/gru_cell/gates/kernel"]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_loop_function_feeds_each_output_back():
    with tf.Graph().as_default():
        cell = RNN.BasicRNNCell(4)
        seen = []

        def loop(prev, i):
            seen.append(i)
            return prev * 2.0

        first = tf.constant(_steps(1, (2, 4))[0])
        outs, _ = L.rnn_decoder([first, tf.zeros([2, 4]), tf.zeros([2, 4])],
                                tf.zeros([2, 4]), cell, loop_function=loop)
        manual = []
        with tf.variable_scope("rnn_decoder", reuse=True):
            out, st = cell(first, tf.zeros([2, 4]))
            for _ in range(2):
                manual.append(out)
                out, st = cell(out * 2.0, st)
            manual.append(out)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, want = sess.run([outs, manual])
    assert seen == [1, 2]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def _xent(logits, labels):
    z = logits - logits.max(1, keepdims=True)
    return np.log(np.exp(z).sum(1)) - z[np.arange(len(labels)), labels]


def test_sequence_losses_are_their_definitions():
    logits, labels = _steps(3, (4, 6)), [RNG.integers(0, 6, 4) for _ in range(3)]
    weights = [RNG.uniform(0.5, 1.5, 4).astype(np.float32) for _ in range(3)]
    per_step = [_xent(lg.astype(np.float64), lb) * w for lg, lb, w in zip(logits, labels, weights)]
    by_example = sum(per_step) / (sum(weights) + 1e-12)
    with tf.Graph().as_default():
        args = ([tf.constant(v) for v in logits], [tf.constant(v.astype(np.int32)) for v in labels],
                [tf.constant(v) for v in weights])
        fetch = [L.sequence_loss_by_example(*args),
                 L.sequence_loss_by_example(*args, average_across_timesteps=False),
                 L.sequence_loss(*args), L.sequence_loss(*args, average_across_batch=False)]
        with tf.Session() as sess:
            got = sess.run(fetch)
    np.testing.assert_allclose(got[0], by_example, rtol=1e-5)
    np.testing.assert_allclose(got[1], sum(per_step), rtol=1e-5)
    np.testing.assert_allclose(got[2], by_example.sum() / 4, rtol=1e-5)
    np.testing.assert_allclose(got[3], by_example.sum(), rtol=1e-5)
    with pytest.raises(ValueError, match="must be the same 3, 2, 3"):
        L.sequence_loss_by_example(args[0], args[1], args[2][:2])


def test_embedding_rnn_seq2seq_names_shapes_and_feed_previous_tensor():
    with tf.Graph().as_default():
        enc = [tf.constant([1, 2, 3]) for _ in range(3)]
        dec = [tf.constant([0, 1, 2]) for _ in range(4)]
        feed_previous = tf.placeholder(tf.bool, [])
        outs, state = L.embedding_rnn_seq2seq(enc, dec, RNN.GRUCell(6), 10, 12, 5,
                                              feed_previous=feed_previous)
        names = [v.op.name for v in tf.global_variables()]
        assert len(outs) == 4 and outs[0].shape.as_list() == [3, 12]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            teacher, free = (sess.run(outs, {feed_previous: f}) for f in (False, True))
    prefix = "embedding_rnn_seq2seq/"
    assert names == [prefix + n for n in (
        "rnn/embedding_wrapper/embedding",
        "rnn/embedding_wrapper/gru_cell/gates/kernel", "rnn/embedding_wrapper/gru_cell/gates/bias",
        "rnn/embedding_wrapper/gru_cell/candidate/kernel",
        "rnn/embedding_wrapper/gru_cell/candidate/bias", "embedding_rnn_decoder/embedding",
        *(f"embedding_rnn_decoder/rnn_decoder/output_projection_wrapper/{n}" for n in (
            "gru_cell/gates/kernel", "gru_cell/gates/bias", "gru_cell/candidate/kernel",
            "gru_cell/candidate/bias", "kernel", "bias")))]
    np.testing.assert_allclose(teacher[0], free[0], rtol=1e-6)   # the first step is the same
    assert not np.allclose(teacher[1:], free[1:])


def test_basic_and_tied_seq2seq_share_as_tf():
    with tf.Graph().as_default():
        enc, dec = [tf.zeros([2, 3])] * 2, [tf.zeros([2, 3])] * 3
        L.basic_rnn_seq2seq(enc, dec, RNN.BasicLSTMCell(4))
        L.tied_rnn_seq2seq(enc, dec, RNN.BasicLSTMCell(4))
        names = [v.op.name for v in tf.global_variables()]
    assert names == ["basic_rnn_seq2seq/rnn/basic_lstm_cell/kernel",
                     "basic_rnn_seq2seq/rnn/basic_lstm_cell/bias",
                     "basic_rnn_seq2seq/rnn_decoder/basic_lstm_cell/kernel",
                     "basic_rnn_seq2seq/rnn_decoder/basic_lstm_cell/bias",
                     "combined_tied_rnn_seq2seq/tied_rnn_seq2seq/basic_lstm_cell/kernel",
                     "combined_tied_rnn_seq2seq/tied_rnn_seq2seq/basic_lstm_cell/bias"]
