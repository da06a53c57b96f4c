"""tf.contrib.rnn's contrib cells: LayerNormBasicLSTMCell one step against a numpy
reference of TF 1.15's formulas, TF's variable names, and the projection wrappers."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

rnn = tf.contrib.rnn


def _ln(x, gain=1.0, shift=0.0):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-12) * gain + shift


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def test_layer_norm_basic_lstm_cell_step_matches_numpy_and_names():
    rng = np.random.RandomState(0)
    x, c, h = (rng.normal(size=s).astype(np.float32) for s in ((2, 3), (2, 4), (2, 4)))
    with tf.Graph().as_default():
        cell = rnn.LayerNormBasicLSTMCell(4, forget_bias=0.5, norm_gain=1.5, norm_shift=0.1)
        out, state = cell(tf.constant(x), rnn.LSTMStateTuple(tf.constant(c), tf.constant(h)))
        names = [v.op.name for v in tf.global_variables()]
        assert names[0] == "layer_norm_basic_lstm_cell/kernel"
        assert names[1:] == [f"layer_norm_basic_lstm_cell/{g}/{p}"
                             for g in ("input", "transform", "forget", "output", "state")
                             for p in ("gamma", "beta")]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            kernel = sess.run(tf.global_variables()[0])
            got_h, got_state = sess.run([out, state])
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ kernel, 4, axis=1)
    i, j, f, o = (_ln(g, 1.5, 0.1) for g in (i, j, f, o))
    new_c = _ln(c * _sigmoid(f + 0.5) + _sigmoid(i) * np.tanh(j), 1.5, 0.1)
    new_h = np.tanh(new_c) * _sigmoid(o)
    np.testing.assert_allclose(got_state.c, new_c, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_h, new_h, rtol=1e-4, atol=1e-5)


def test_layer_norm_off_uses_a_bias():
    with tf.Graph().as_default():
        cell = rnn.LayerNormBasicLSTMCell(4, layer_norm=False)
        cell(tf.zeros([1, 2]), cell.zero_state(1, tf.float32))
        assert [v.op.name for v in tf.global_variables()] == [
            "layer_norm_basic_lstm_cell/kernel", "layer_norm_basic_lstm_cell/bias"]


def test_projection_wrappers_in_dynamic_rnn():
    with tf.Graph().as_default():
        x = tf.ones([2, 5, 3])
        cell = rnn.OutputProjectionWrapper(rnn.BasicLSTMCell(4), 6, activation=tf.nn.relu)
        out, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        assert out.shape.as_list() == [2, 5, 6] and state.c.shape.as_list() == [2, 4]
        assert cell.output_size == 6 and cell.state_size == (4, 4)
        names = [v.op.name for v in tf.global_variables()]
        assert names == ["rnn/output_projection_wrapper/basic_lstm_cell/kernel",
                         "rnn/output_projection_wrapper/basic_lstm_cell/bias",
                         "rnn/output_projection_wrapper/kernel",
                         "rnn/output_projection_wrapper/bias"]
        inp = rnn.InputProjectionWrapper(rnn.GRUCell(3), 2)
        with tf.variable_scope("second"):
            out2, _ = tf.nn.dynamic_rnn(inp, x, dtype=tf.float32)
        assert out2.shape.as_list() == [2, 5, 3]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert (sess.run(out) >= 0).all()
        with pytest.raises(ValueError, match="must be > 0"):
            rnn.OutputProjectionWrapper(rnn.BasicLSTMCell(4), 0)


def test_attention_cell_wrapper_names_shapes_and_window():
    with tf.Graph().as_default():
        cell = rnn.AttentionCellWrapper(rnn.BasicLSTMCell(4), attn_length=3)
        assert cell.state_size == ((4, 4), 4, 12) and cell.output_size == 4
        out, (cell_state, attns, window) = tf.nn.dynamic_rnn(
            cell, tf.ones([2, 5, 3]), dtype=tf.float32)
        assert out.shape.as_list() == [2, 5, 4] and window.shape.as_list() == [2, 12]
        prefix = "rnn/attention_cell_wrapper/"
        assert [v.op.name[len(prefix):] for v in tf.global_variables()] == [
            "kernel", "bias", "basic_lstm_cell/kernel", "basic_lstm_cell/bias",
            "attention/attn_w", "attention/attn_v", "attention/kernel", "attention/bias",
            "attn_output_projection/kernel", "attn_output_projection/bias"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got_out, got_window = sess.run([out, window])
        # the window holds the last attn_length outputs, newest last
        np.testing.assert_allclose(got_window.reshape(2, 3, 4), got_out[:, -3:], rtol=1e-5)
        with pytest.raises(ValueError, match="attn_length should be greater than zero"):
            rnn.AttentionCellWrapper(rnn.BasicLSTMCell(4), attn_length=0)
        with pytest.raises(ValueError, match="state_is_tuple is not set"):
            rnn.AttentionCellWrapper(rnn.BasicLSTMCell(4), 2, state_is_tuple=False)
