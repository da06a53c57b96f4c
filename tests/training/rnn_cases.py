"""RNN graphs shared by `make_rnn_expected.py` (run with TensorFlow) and `test_rnn.py` (run
with tensorweave). Nothing here imports either: a builder takes `tf` (the module: `tf.nn`
has `dynamic_rnn` and `rnn_cell`) and the case's inputs, builds in the default graph and
returns `{fetch name: tensor}` with the outputs and flattened final states.

Every case is then run the same way (`run_case`): trainable variables get fixed values
(`init_values`: derived from each variable's name, so both sides agree), and the fetches,
plus the gradients of a fixed weighted sum of them with respect to every trainable variable
and the inputs, are evaluated. `train_classifier` runs 5 Adam steps of a small sequence
classifier.
"""

from __future__ import annotations

import zlib

import numpy as np

BATCH, TIME, DEPTH = 3, 4, 2
SEQ_LEN = np.array([4, 2, 0], np.int32)
_X = np.random.default_rng(7).uniform(-1, 1, (BATCH, TIME, DEPTH)).astype(np.float32)


def inputs(time_major: bool = False) -> np.ndarray:
    return np.ascontiguousarray(_X.transpose(1, 0, 2)) if time_major else _X


def init_value(name: str, shape) -> np.ndarray:
    """A fixed value for variable `name` (without ":0"): uniform in [-0.6, 0.6)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return rng.uniform(-0.6, 0.6, shape).astype(np.float32)


def _flat(prefix: str, state, out: dict) -> dict:
    """Adds each tensor of a (nested) state as `prefix/i`."""
    leaves = []

    def walk(s):
        if isinstance(s, (list, tuple)):
            for c in s:
                walk(c)
        else:
            leaves.append(s)

    walk(state)
    for i, t in enumerate(leaves):
        out[f"{prefix}/{i}"] = t
    return out


def _dyn(tf, cell, x, **kw):
    outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, **kw)
    return _flat("state", state, {"outputs": outputs})


def basic_rnn(tf, x):
    return _dyn(tf, tf.nn.rnn_cell.BasicRNNCell(3), x)


def basic_rnn_relu_seq(tf, x):
    return _dyn(tf, tf.nn.rnn_cell.BasicRNNCell(3, activation=tf.nn.relu), x,
                sequence_length=SEQ_LEN)


def basic_lstm(tf, x):
    return _dyn(tf, tf.nn.rnn_cell.BasicLSTMCell(3, forget_bias=0.5), x)


def basic_lstm_seq(tf, x):
    return _dyn(tf, tf.nn.rnn_cell.BasicLSTMCell(3), x, sequence_length=SEQ_LEN)


def basic_lstm_concat_time_major(tf, x):
    cell = tf.nn.rnn_cell.BasicLSTMCell(3, state_is_tuple=False)
    return _dyn(tf, cell, x, time_major=True, sequence_length=SEQ_LEN)


def lstm_peephole_proj_seq(tf, x):
    cell = tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True, num_proj=2, cell_clip=0.8,
                                   forget_bias=0.7)
    return _dyn(tf, cell, x, sequence_length=SEQ_LEN)


def lstm_concat_time_major(tf, x):
    cell = tf.nn.rnn_cell.LSTMCell(3, state_is_tuple=False)
    return _dyn(tf, cell, x, time_major=True)


def gru(tf, x):
    return _dyn(tf, tf.nn.rnn_cell.GRUCell(3), x)


def gru_seq_time_major(tf, x):
    return _dyn(tf, tf.nn.rnn_cell.GRUCell(3), x, time_major=True, sequence_length=SEQ_LEN)


def multi_lstm(tf, x):
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(3),
                                        tf.nn.rnn_cell.BasicLSTMCell(2)])
    return _dyn(tf, cell, x)


def multi_lstm_seq(tf, x):
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(3),
                                        tf.nn.rnn_cell.LSTMCell(2, use_peepholes=True)])
    return _dyn(tf, cell, x, sequence_length=SEQ_LEN)


def multi_concat_state(tf, x):
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicRNNCell(3),
                                        tf.nn.rnn_cell.GRUCell(2)], state_is_tuple=False)
    return _dyn(tf, cell, x, sequence_length=SEQ_LEN)


def residual_in_dropout_wrapper(tf, x):
    """A ResidualWrapper inside a DropoutWrapper that keeps everything (no dropout ops)."""
    cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.ResidualWrapper(
        tf.nn.rnn_cell.GRUCell(DEPTH)), input_keep_prob=1.0, output_keep_prob=1.0)
    return _dyn(tf, cell, x)


def initial_state_gru(tf, x):
    h0 = tf.constant(np.linspace(-0.5, 0.5, BATCH * 3).reshape(BATCH, 3).astype(np.float32))
    outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), x, initial_state=h0,
                                       scope="custom")
    return _flat("state", state, {"outputs": outputs})


def bidirectional(tf, x):
    (fw, bw), (s_fw, s_bw) = tf.nn.bidirectional_dynamic_rnn(
        tf.nn.rnn_cell.LSTMCell(3), tf.nn.rnn_cell.GRUCell(2), x, dtype=tf.float32)
    return _flat("state_bw", s_bw, _flat("state_fw", s_fw, {"fw": fw, "bw": bw}))


def bidirectional_seq_time_major(tf, x):
    (fw, bw), (s_fw, s_bw) = tf.nn.bidirectional_dynamic_rnn(
        tf.nn.rnn_cell.BasicLSTMCell(3), tf.nn.rnn_cell.BasicRNNCell(2), x,
        sequence_length=SEQ_LEN, dtype=tf.float32, time_major=True)
    return _flat("state_bw", s_bw, _flat("state_fw", s_fw, {"fw": fw, "bw": bw}))


def static_lstm_seq(tf, x):
    steps = tf.unstack(x, axis=1)
    outputs, state = tf.nn.static_rnn(tf.nn.rnn_cell.BasicLSTMCell(3), steps,
                                      dtype=tf.float32, sequence_length=SEQ_LEN)
    return _flat("state", state, {"outputs": tf.stack(outputs, axis=1)})


def static_bidirectional_gru(tf, x):
    steps = tf.unstack(x, axis=1)
    outputs, s_fw, s_bw = tf.nn.static_bidirectional_rnn(
        tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.GRUCell(3), steps, dtype=tf.float32,
        sequence_length=SEQ_LEN)
    return _flat("state_bw", s_bw, _flat("state_fw", s_fw,
                                          {"outputs": tf.stack(outputs, axis=1)}))


CASES = {f.__name__: f for f in [
    basic_rnn, basic_rnn_relu_seq, basic_lstm, basic_lstm_seq, basic_lstm_concat_time_major,
    lstm_peephole_proj_seq, lstm_concat_time_major, gru, gru_seq_time_major, multi_lstm,
    multi_lstm_seq, multi_concat_state, residual_in_dropout_wrapper, initial_state_gru,
    bidirectional, bidirectional_seq_time_major, static_lstm_seq, static_bidirectional_gru]}


def time_major(name: str) -> bool:
    return "time_major" in name


def assign_init(tf, sess) -> list:
    """Sets every trainable variable to `init_value`; returns the variables' names."""
    names = []
    for v in tf.trainable_variables():
        name = v.name[:-2]
        sess.run(tf.assign(v, init_value(name, v.shape.as_list())))
        names.append(name)
    return names


def run_case(tf, name: str) -> dict:
    """{key: array} for case `name`: `fetch/<k>`, `grad/<var name>`, `grad/inputs`, and
    `names` (the trainable variables, in creation order)."""
    with tf.Graph().as_default():
        x = tf.constant(inputs(time_major(name)))
        fetches = CASES[name](tf, x)
        keys = sorted(fetches)
        loss = tf.add_n([tf.reduce_sum(fetches[k] * _weights(k, fetches[k])) for k in keys])
        cell_ops = _cell_ops(tf.get_default_graph())
        variables = tf.trainable_variables()
        grads = tf.gradients(loss, variables + [x])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            names = assign_init(tf, sess)
            values = sess.run([fetches[k] for k in keys] + grads)
    out = {f"fetch/{k}": v for k, v in zip(keys, values)}
    out.update({f"grad/{n}": g for n, g in zip(names + ["inputs"], values[len(keys):])})
    out["names"] = np.array(names)
    out["cell_ops"] = np.array(cell_ops)
    return out


def _cell_ops(graph) -> list:
    """"name type" of the forward ops built inside a cell's scope (`.../basic_lstm_cell/...`),
    sorted."""
    return sorted(f"{op.name} {op.type}" for op in graph.get_operations()
                  if "_cell" in op.name)


def _weights(key: str, t):
    """A fixed non-uniform weighting of tensor `t` (so gradients differ per element)."""
    shape = t.shape.as_list()
    n = int(np.prod(shape))
    return (np.cos(np.arange(n) * 0.7 + len(key)).reshape(shape) + 1.5).astype(np.float32)


_RNG = np.random.default_rng(3)
CLASSIFIER_FEED = (_RNG.uniform(-1, 1, (4, 5, 3)).astype(np.float32),
                   np.array([0, 1, 1, 0], np.int32), np.array([5, 3, 4, 2], np.int32))


def _classifier(tf):
    """x [batch, 5, 3] → MultiRNNCell(LSTMCell(4), GRUCell(3)) → dense(2) on the last GRU
    state; returns (feed dict, logits, loss)."""
    x = tf.placeholder(tf.float32, [None, 5, 3], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    n = tf.placeholder(tf.int32, [None], name="n")
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.LSTMCell(4), tf.nn.rnn_cell.GRUCell(3)])
    _, state = tf.nn.dynamic_rnn(cell, x, sequence_length=n, dtype=tf.float32)
    logits = tf.layers.dense(state[-1], 2)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    return dict(zip((x, y, n), CLASSIFIER_FEED)), logits, loss


def train_classifier(tf, save_path=None) -> dict:
    """5 Adam steps of the sequence classifier from `init_value` weights: losses, logits after
    training and the trained weights (by name). Saves a checkpoint to `save_path` if given."""
    with tf.Graph().as_default():
        feed, logits, loss = _classifier(tf)
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            names = assign_init(tf, sess)
            losses = [sess.run([loss, train], feed)[0] for _ in range(5)]
            final = sess.run([logits] + tf.trainable_variables(), feed)
            if save_path is not None:
                tf.train.Saver(tf.trainable_variables()).save(sess, save_path,
                                                          write_meta_graph=False)
    out = {"losses": np.array(losses), "logits": final[0], "names": np.array(names)}
    out.update({f"weight/{k}": v for k, v in zip(names, final[1:])})
    return out


def restore_classifier(tf, save_path) -> np.ndarray:
    """The classifier's logits with its weights restored from `save_path`."""
    with tf.Graph().as_default():
        feed, logits, _ = _classifier(tf)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, save_path)
            return sess.run(logits, feed)
