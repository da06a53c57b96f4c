"""While loops, scans, dynamic_rnn and their gradients compiled on /device:XLA_CPU:0
(runtime/xla_control_flow.py): the same outputs as the CPU device's dataflow executor, the
loop inside the XLA executable, and the loops it cannot compile kept on the CPU with a
logged reason.

Tolerances: the loops here are a few float32 iterations of small GEMMs and elementwise ops;
XLA fuses and reorders the same operations, so each output differs from the CPU's by a few
ulps per operation on its path (k-deep sums: ~k·eps): rtol 1e-5 covers every case below.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

pytest.importorskip("jax", reason="the XLA device needs jax (pip install tensorweave[xla])")

import tensorweave as tf  # noqa: E402

XLA = "/device:XLA_CPU:0"
RTOL = 1e-5


def _both(build, feeds_of):
    """`build()`'s fetches run under the CPU and under XLA_CPU: (cpu values, xla values)."""
    out = []
    for device in ("/cpu:0", XLA):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(1)
            phs, fetches = build(device)
            with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
                _load_same_values(sess)
                out.append(sess.run(fetches, dict(zip(phs, feeds_of))))
    return out


def _load_same_values(sess) -> None:
    """Initializes the variables with the same numbers on both devices (XLA's random
    initializers draw others)."""
    sess.run(tf.global_variables_initializer())
    for k, v in enumerate(tf.global_variables()):
        v.load(np.random.default_rng(k).uniform(-0.3, 0.3, v.shape.as_list())
               .astype(v.dtype.base_dtype.as_numpy_dtype), sess)


def _close(got, want, rtol=RTOL, atol=1e-6):
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)


def test_while_loop_and_its_gradient_compile(compiled):
    def build(device):
        x = tf.placeholder(tf.float32, [2, 3])
        with tf.device(device):
            _, y = tf.while_loop(lambda i, v: i < 4,
                                 lambda i, v: (i + 1, tf.tanh(v * 1.5) + tf.reduce_sum(v)),
                                 [tf.constant(0), x])
            grad = tf.gradients(tf.reduce_sum(y * y), x)[0]
        return [x], [y, grad]

    want, got = _both(build, [X])
    _close(got, want)
    assert {"Enter", "Merge", "Exit", "StackPushV2", "StackPopV2"} <= compiled


def test_a_data_dependent_loop_compiles_forward():
    """No static trip count: a lax.while_loop on the traced condition."""
    def build(device):
        x = tf.placeholder(tf.float32, [])
        with tf.device(device):
            n, v = tf.while_loop(lambda n, v: v < 100.0, lambda n, v: (n + 1, v * 2.0),
                                 [tf.constant(0), x])
        return [x], [n, v]

    want, got = _both(build, [np.float32(3.0)])
    _close(got, want)
    assert got[0] == 6


def test_scan_forward_and_gradient():
    def build(device):
        x = tf.placeholder(tf.float32, [2, 3])
        with tf.device(device):
            s = tf.scan(lambda a, e: a * 0.5 + tf.sin(e), x, initializer=tf.zeros([3]))
            grad = tf.gradients(tf.reduce_sum(s * s), x)[0]
        return [x], [s, grad]

    want, got = _both(build, [X])
    _close(got, want)


def test_maximum_iterations_bounds_a_data_dependent_loop_with_a_gradient(compiled):
    """The condition depends on the data, but maximum_iterations bounds it: the gradient's
    stacks are sized by the bound and the loop compiles."""
    def build(device):
        x = tf.placeholder(tf.float32, [3])
        with tf.device(device):
            y = tf.while_loop(lambda v: tf.reduce_sum(v) < 50.0, lambda v: v * 1.5 + 1.0, [x],
                              maximum_iterations=10)
            grad = tf.gradients(tf.reduce_sum(y * y), x)[0]
        return [x], [y, grad]

    want, got = _both(build, [np.array([1.0, 2.0, 0.5], np.float32)])
    _close(got, want)
    assert "StackPushV2" in compiled


def test_nested_loops_and_their_gradient(compiled):
    """The inner loop's stacks hold 2 x 3 values (the bounds' product); its count per outer
    iteration is itself saved on a stack."""
    def build(device):
        x = tf.placeholder(tf.float32, [3])
        with tf.device(device):
            def outer(i, v):
                _, w = tf.while_loop(lambda j, w: j < 3,
                                     lambda j, w: (j + 1, tf.sin(w) * 1.3 + v),
                                     [tf.constant(0), v])
                return i + 1, tf.tanh(w)

            _, y = tf.while_loop(lambda i, v: i < 2, outer, [tf.constant(0), x])
            grad = tf.gradients(tf.reduce_sum(y * y), x)[0]
        return [x], [y, grad]

    want, got = _both(build, [np.array([1.0, -2.0, 0.5], np.float32)])
    _close(got, want)
    assert "StackPushV2" in compiled


def test_tensor_array_write_read_gather_scatter_in_a_loop():
    def build(device):
        x = tf.placeholder(tf.float32, [4, 3])
        with tf.device(device):
            src = tf.TensorArray(tf.float32, size=4).unstack(x)
            out = tf.TensorArray(tf.float32, size=4, clear_after_read=False)

            def body(i, ta):
                return i + 1, ta.write(i, src.read(i) * tf.cast(i, tf.float32))

            _, out = tf.while_loop(lambda i, ta: i < 4, body, [tf.constant(0), out])
            stacked = out.stack()
            size = out.size()
            picked = out.gather([3, 1])
            concat = out.concat()
        return [x], [stacked, size, picked, concat]

    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    want, got = _both(build, [xs])
    _close(got, want)


def test_dynamic_rnn_lstm_forward_and_gradient(compiled):
    def build(device):
        x = tf.placeholder(tf.float32, [2, 3, 4])
        with tf.device(device):
            cell = tf.nn.rnn_cell.BasicLSTMCell(5, forget_bias=0.0)
            y, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
            loss = tf.reduce_sum(y * y) + tf.reduce_sum(state.h)
            grads = tf.gradients(loss, [x] + tf.trainable_variables())
        return [x], [y, state.c, state.h] + grads

    xs = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(np.float32)
    want, got = _both(build, [xs])
    _close(got, want)
    assert {"TensorArrayReadV3", "TensorArrayGradV3", "StackPopV2"} <= compiled


@pytest.mark.slow
def test_lstm_language_model_trains_on_xla_as_on_cpu():
    """The LSTM LM step (2 layers, embedding, softmax, clipped SGD) compiled as one XLA
    executable: its losses over a few steps are the CPU's, and fall."""
    batch, steps, hidden, vocab = 2, 3, 4, 7
    rng = np.random.default_rng(0)
    feeds = [rng.integers(0, vocab, (batch, steps)), rng.integers(0, vocab, (batch, steps))]

    def losses(device):
        g = tf.Graph()
        with g.as_default():
            inputs = tf.placeholder(tf.int32, [batch, steps])
            targets = tf.placeholder(tf.int32, [batch, steps])
            with tf.device(device):
                init = tf.random_uniform_initializer(-0.3, 0.3, seed=3)
                with tf.variable_scope("model", initializer=init):
                    emb = tf.nn.embedding_lookup(tf.get_variable("embedding", [vocab, hidden]),
                                                 inputs)
                    cell = tf.nn.rnn_cell.MultiRNNCell(
                        [tf.nn.rnn_cell.BasicLSTMCell(hidden, forget_bias=0.0)
                         for _ in range(2)])
                    out, _ = tf.nn.dynamic_rnn(cell, emb,
                                               initial_state=cell.zero_state(batch, tf.float32))
                    w = tf.get_variable("softmax_w", [hidden, vocab])
                    b = tf.get_variable("softmax_b", [vocab])
                    logits = tf.matmul(tf.reshape(out, [-1, hidden]), w) + b
                    loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(
                        labels=tf.reshape(targets, [-1]), logits=logits)) / batch
                params = tf.trainable_variables()
                grads, _ = tf.clip_by_global_norm(tf.gradients(loss, params), 5.0)
                train = tf.train.GradientDescentOptimizer(1.0).apply_gradients(
                    zip(grads, params))
            with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
                _load_same_values(sess)
                fd = dict(zip([inputs, targets], feeds))
                return [sess.run([loss, train], fd)[0] for _ in range(5)]

    want = losses("/cpu:0")
    got = losses(XLA)
    np.testing.assert_allclose(got, want, rtol=1e-4)
    assert got[-1] < got[0]


def test_a_loop_whose_gradient_needs_an_unbounded_stack_stays_on_cpu(compiled, caplog):
    """A data-dependent trip count without maximum_iterations: the gradient's stacks have no
    size known at compile time, so the loop runs on the CPU (soft placement) and the log says
    why; the rest still compiles."""
    def build(device):
        x = tf.placeholder(tf.float32, [3])
        with tf.device(device):
            y = tf.while_loop(lambda v: tf.reduce_sum(v) < 50.0, lambda v: v * 1.5 + 1.0, [x])
            grad = tf.gradients(tf.reduce_sum(y * y), x)[0]
            z = tf.reduce_sum(grad * 2.0)
        return [x], [y, grad, z]

    with caplog.at_level(logging.WARNING, logger="tensorweave"):
        want, got = _both(build, [np.array([1.0, 2.0, 0.5], np.float32)])
    _close(got, want)
    assert not compiled & {"Enter", "StackPushV2"}
    assert "Sum" in compiled
    assert any("stays on a CPU" in r.getMessage() and "maximum_iterations" in r.getMessage()
               for r in caplog.records)


def test_a_cond_inside_a_loop_stays_on_cpu(compiled, caplog):
    def build(device):
        x = tf.placeholder(tf.float32, [3])
        with tf.device(device):
            _, y = tf.while_loop(
                lambda i, v: i < 3,
                lambda i, v: (i + 1, tf.cond(tf.reduce_sum(v) > 0, lambda: v - 1.0,
                                             lambda: v * 2.0)), [tf.constant(0), x])
        return [x], [y]

    with caplog.at_level(logging.WARNING, logger="tensorweave"):
        want, got = _both(build, [np.array([1.0, 2.0, 0.5], np.float32)])
    _close(got, want)
    assert "Enter" not in compiled
    assert any("tf.cond" in r.getMessage() for r in caplog.records)


def test_random_ops_in_a_loop_draw_anew_each_iteration():
    g = tf.Graph()
    with g.as_default(), tf.device(XLA):
        ta = tf.TensorArray(tf.float32, size=3)
        _, ta = tf.while_loop(lambda i, t: i < 3,
                              lambda i, t: (i + 1, t.write(i, tf.random_uniform([4], seed=5))),
                              [tf.constant(0), ta])
        rows = ta.stack()
        with tf.Session() as sess:
            a, b = sess.run(rows), sess.run(rows)
    assert len({tuple(r) for r in a}) == 3
    assert not np.array_equal(a, b)
    assert ((a >= 0) & (a < 1)).all()


def test_a_loop_whose_gradient_is_built_outside_the_xla_scope_stays_on_cpu(compiled, caplog):
    """The loop asks for XLA_CPU, its gradient (sharing its stacks) for no device: the two
    are not split over the devices; both run on the CPU, and the log says why."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3])
        with tf.device(XLA):
            _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, tf.sin(v)),
                                 [tf.constant(0), x])
        grad = tf.gradients(tf.reduce_sum(y), x)[0]
        with caplog.at_level(logging.WARNING, logger="tensorweave"), \
                tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            got = sess.run(grad, {x: np.array([0.5, 1.0, -1.0], np.float32)})
    v, want = np.array([0.5, 1.0, -1.0]), np.ones(3)
    for _ in range(3):
        want, v = want * np.cos(v), np.sin(v)
    np.testing.assert_allclose(got, want, rtol=RTOL)
    assert "Enter" not in compiled
    assert any("one device scope" in r.getMessage() for r in caplog.records)
