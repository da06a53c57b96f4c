"""tf.nn.rnn_cell / dynamic_rnn / static_rnn / bidirectional against numbers written by
TensorFlow (tests/data/rnn_expected.npz, from make_rnn_expected.py), plus behaviour and
errors at construction."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tests.training import rnn_cases as cases

DATA = Path(__file__).resolve().parents[1] / "data"
EXPECTED = np.load(DATA / "rnn_expected.npz")
rc = tf.nn.rnn_cell


@pytest.mark.parametrize("name", list(cases.CASES))
def test_outputs_states_and_gradients_match_tf(name):
    got = cases.run_case(tf, name)
    for key, value in got.items():
        want = EXPECTED[f"{name}/{key}"]
        if key in ("names", "cell_ops"):
            assert list(value) == list(want), f"{name}: {key}"
            continue
        assert value.shape == want.shape, f"{name}/{key}"
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-6, err_msg=f"{name}/{key}")


def test_adam_training_of_a_sequence_classifier_matches_tf():
    got = cases.train_classifier(tf)
    assert list(got["names"]) == list(EXPECTED["train/names"])
    np.testing.assert_allclose(got["losses"], EXPECTED["train/losses"], rtol=1e-5)
    np.testing.assert_allclose(got["logits"], EXPECTED["train/logits"], rtol=1e-5, atol=1e-6)
    for name in got["names"]:
        # NOTE: Adam divides by sqrt(v): for an element whose gradient is near 0, float32
        # rounding in the summed gradient moves the step by ~1e-6; steps are ~0.05.
        np.testing.assert_allclose(got[f"weight/{name}"], EXPECTED[f"train/weight/{name}"],
                                   rtol=1e-5, atol=1e-5, err_msg=name)


def test_restores_a_tf_checkpoint_of_the_classifier():
    logits = cases.restore_classifier(tf, str(DATA / "rnn_ckpt" / "classifier"))
    np.testing.assert_allclose(logits, EXPECTED["train/logits"], rtol=1e-5, atol=1e-6)


def test_variable_names_are_tf1s():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3, 4])
        tf.nn.dynamic_rnn(rc.MultiRNNCell([rc.BasicLSTMCell(3), rc.GRUCell(2)]), x,
                          dtype=tf.float32)
        tf.nn.bidirectional_dynamic_rnn(rc.LSTMCell(2, use_peepholes=True, num_proj=1),
                                        rc.BasicRNNCell(2), x, dtype=tf.float32)
        names = [v.op.name for v in tf.trainable_variables()]
    assert names == [
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel",
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias",
        "rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel",
        "rnn/multi_rnn_cell/cell_1/gru_cell/gates/bias",
        "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/kernel",
        "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/bias",
        "bidirectional_rnn/fw/lstm_cell/kernel", "bidirectional_rnn/fw/lstm_cell/bias",
        "bidirectional_rnn/fw/lstm_cell/w_f_diag", "bidirectional_rnn/fw/lstm_cell/w_i_diag",
        "bidirectional_rnn/fw/lstm_cell/w_o_diag",
        "bidirectional_rnn/fw/lstm_cell/projection/kernel",
        "bidirectional_rnn/bw/basic_rnn_cell/kernel", "bidirectional_rnn/bw/basic_rnn_cell/bias"]


def test_cell_scopes_reuse_and_uniquify_as_tf1():
    """(TF 2.21 does the same) a cell object keeps its variables across calls; a new cell
    right after another in the same scope collides; after another scope it is uniquified."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3, 4])
        cell = rc.GRUCell(2)
        tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, scope="a")
        tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, scope="b")
        assert len(tf.trainable_variables()) == 4
        assert cell.trainable_weights == tf.trainable_variables()
        tf.nn.dynamic_rnn(rc.GRUCell(2), x, dtype=tf.float32, scope="a")
        assert tf.trainable_variables()[4].op.name == "a/gru_cell_1/gates/kernel"
        tf.nn.dynamic_rnn(rc.BasicLSTMCell(3), x, dtype=tf.float32)
        with pytest.raises(ValueError, match="Variable rnn/basic_lstm_cell/kernel already "
                                             "exists"):
            tf.nn.dynamic_rnn(rc.BasicLSTMCell(3), x, dtype=tf.float32)


def test_state_sizes_and_zero_states():
    with tf.Graph().as_default():
        lstm = rc.BasicLSTMCell(3)
        assert lstm.state_size == rc.LSTMStateTuple(3, 3) and lstm.output_size == 3
        zs = lstm.zero_state(5, tf.float32)
        assert isinstance(zs, rc.LSTMStateTuple) and zs.dtype == tf.float32
        assert zs.c.op.name == "BasicLSTMCellZeroState/zeros" and zs.h.shape == (5, 3)
        proj = rc.LSTMCell(4, num_proj=2, state_is_tuple=False)
        assert (proj.state_size, proj.output_size) == (6, 2)
        assert proj.zero_state(3, tf.float64).shape == (3, 6)
        multi = rc.MultiRNNCell([rc.BasicLSTMCell(3), rc.GRUCell(2)])
        assert multi.state_size == (rc.LSTMStateTuple(3, 3), 2) and multi.output_size == 2
        state = multi.zero_state(tf.constant(7), tf.float32)
        assert state[1].op.name == "MultiRNNCellZeroState/GRUCellZeroState/zeros"
        assert state[1].shape.as_list() == [7, 2]


def test_sequence_length_zeroes_outputs_and_copies_state():
    with tf.Graph().as_default():
        x = tf.constant(cases.inputs())
        out, state = tf.nn.dynamic_rnn(rc.GRUCell(3), x, sequence_length=cases.SEQ_LEN,
                                       dtype=tf.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out, state = sess.run([out, state])
    assert np.all(out[1, 2:] == 0) and np.all(out[2] == 0) and np.any(out[0, 3] != 0)
    np.testing.assert_array_equal(state[1], out[1, 1])
    np.testing.assert_array_equal(state[2], np.zeros(3))


def test_dropout_wrapper():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x = tf.constant(cases.inputs()[:, 0])
        cell = rc.GRUCell(3)
        ref, _ = cell(x, cell.zero_state(3, tf.float32))
        plain = rc.DropoutWrapper(cell)
        n_ops = len(tf.get_default_graph().get_operations())
        plain(x, cell.zero_state(3, tf.float32))
        added = tf.get_default_graph().get_operations()[n_ops:]
        assert not [op for op in added if "dropout" in op.name]
        dropped = rc.DropoutWrapper(cell, output_keep_prob=0.5, seed=5)
        out, _ = dropped(x, cell.zero_state(3, tf.float32))
        assert len(tf.trainable_variables()) == 4
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            r, o1 = sess.run([ref, out])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert np.array_equal(sess.run(out), o1)
    kept = o1 != 0
    assert kept.any() and (~kept).any()
    np.testing.assert_allclose(o1[kept], 2 * r[kept], rtol=1e-6)
    # the per-part seeds TF derives (md5 of seed + "input_0" ...), checked against TF 2.21
    assert [dropped._gen_seed(p, i) for p, i in [("input", 0), ("state", 1), ("output", 0)]] \
        == [146547860, 1572617384, 740058876]


def test_dropout_wrapper_keeps_lstm_memory():
    with tf.Graph().as_default():
        x = tf.constant(cases.inputs()[:, 0])
        cell = rc.BasicLSTMCell(3)
        state0 = cell.zero_state(3, tf.float32)
        _, ref = cell(x, state0)
        _, new = rc.DropoutWrapper(cell, state_keep_prob=0.5, seed=1)(x, state0)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ref, new = sess.run([ref, new])
    np.testing.assert_array_equal(new.c, ref.c)
    assert np.any(new.h == 0) and np.any(new.h != 0)


def test_construction_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3, 4])
        with pytest.raises(ValueError, match=r"dynamic_rnn: inputs must have rank at least 3"):
            tf.nn.dynamic_rnn(rc.BasicLSTMCell(3), tf.placeholder(tf.float32, [2, 4]),
                              dtype=tf.float32)
        with pytest.raises(ValueError, match="argument `dtype` must be specified"):
            tf.nn.dynamic_rnn(rc.BasicLSTMCell(3), x)
        with pytest.raises(ValueError, match="only supports floating point"):
            tf.nn.dynamic_rnn(rc.BasicLSTMCell(3), tf.placeholder(tf.int32, [2, 3, 4]),
                              dtype=tf.int32)
        with pytest.raises(ValueError, match="depth of inputs"):
            tf.nn.dynamic_rnn(rc.GRUCell(3), tf.placeholder(tf.float32, [2, 3, None]),
                              dtype=tf.float32)
        with pytest.raises(ValueError, match="sequence_length must be a vector"):
            tf.nn.dynamic_rnn(rc.GRUCell(3), x, sequence_length=[[1]], dtype=tf.float32)
        with pytest.raises(TypeError, match="is not an RNNCell"):
            tf.nn.dynamic_rnn(object(), x, dtype=tf.float32)
        with pytest.raises(TypeError, match="must be a sequence"):
            tf.nn.static_rnn(rc.GRUCell(2), x)
        with pytest.raises(ValueError, match="argument `dtype` must be specified"):
            tf.nn.static_rnn(rc.GRUCell(2), [x[:, 0]])
        with pytest.raises(ValueError, match="at least one cell"):
            rc.MultiRNNCell([])
        with pytest.raises(ValueError, match="state_is_tuple is not set"):
            rc.MultiRNNCell([rc.BasicLSTMCell(2)], state_is_tuple=False)
        with pytest.raises(ValueError, match="input_keep_prob must be between 0 and 1"):
            rc.DropoutWrapper(rc.GRUCell(2), input_keep_prob=1.5)


def test_sequence_length_of_wrong_size_fails_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3, 4])
        n = tf.placeholder(tf.int32, [None])
        out, _ = tf.nn.dynamic_rnn(rc.GRUCell(2), x, sequence_length=n, dtype=tf.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"Expected shape for Tensor rnn/sequence_length:0"):
                sess.run(out, {x: np.ones([2, 3, 4]), n: [1, 2, 3]})


def test_unknown_batch_and_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None, 2])
        out, state = tf.nn.dynamic_rnn(rc.BasicLSTMCell(3), x, dtype=tf.float32)
        assert out.shape.as_list() == [None, None, 3] and state.h.shape.as_list() == [None, 3]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(out, {x: np.ones([5, 7, 2], np.float32)})
    assert got.shape == (5, 7, 3)


def test_contrib_rnn_aliases():
    assert tf.contrib.rnn.LSTMCell is rc.LSTMCell
    assert tf.contrib.rnn.static_rnn is tf.nn.static_rnn
