"""While loops split over two CPU devices give what the same loop gives on one device."""

from __future__ import annotations

import time

import numpy as np
import pytest

import tensorweave as tf

_TWO = {"device_count": {"CPU": 2}}


def _run(build, split: bool, steps: int = 1):
    """Builds `build(other_device)` and runs its fetches; with a train op, runs it `steps`
    times with the fetches and then fetches the trained variables."""
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(3)
        fetches, train = build("/cpu:1" if split else "/cpu:0")
        init = tf.global_variables_initializer()
    with tf.Session(graph=g, config=tf.ConfigProto(**_TWO)) as s:
        s.run(init)
        if split:
            assert _control_loops(s, fetches), "the loop was not split over the devices"
        if train is None:
            return s.run(fetches)
        got = [s.run([fetches, train])[0] for _ in range(steps)]
        return got + s.run(tf.trainable_variables())


def _control_loops(s, fetches) -> set[str]:
    """The devices whose partition of `fetches`' step has a control loop (a split frame)."""
    meta = tf.RunMetadata()
    s.run(fetches, options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
    return {n.device for p in meta.partition_graphs for n in p.node
            if n.name.startswith("_cloop")}


def _same(build, steps=1, rtol=0.0):
    one, two = _run(build, False, steps), _run(build, True, steps)
    for a, b in zip(_flat(one), _flat(two), strict=True):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=0)


def _flat(x):
    if isinstance(x, (list, tuple)):
        return [y for e in x for y in _flat(e)]
    return [np.asarray(x)]


def test_counter_loop_with_a_body_op_on_another_device():
    def build(dev):
        def body(i, x):
            with tf.device(dev):
                y = x * 2.0 + tf.cast(i, tf.float32)
            return i + 1, y
        return tf.while_loop(lambda i, x: i < 7, body, [0, tf.constant(1.0)]), None
    _same(build)
    assert _run(build, True)[1] == pytest.approx(1.0 * 2 ** 7 + sum(i * 2 ** (6 - i)
                                                                    for i in range(7)))


def test_iterations_in_flight_each_get_their_own_tensor():
    """Ten iterations run at once: iteration i's recv must take iteration i's send."""
    def build(dev):
        ta = tf.TensorArray(tf.float32, size=40)

        def body(i, ta):
            with tf.device(dev):
                v = tf.cast(i, tf.float32) ** 2
            return i + 1, ta.write(i, v)
        _, ta = tf.while_loop(lambda i, ta: i < 40, body, [0, ta], parallel_iterations=10)
        return ta.stack(), None
    _same(build)
    np.testing.assert_array_equal(_run(build, True), np.arange(40, dtype=np.float32) ** 2)


def test_a_loop_nested_in_a_loop_split_over_two_devices():
    def build(dev):
        def outer(i, t):
            def inner(j, u):
                with tf.device(dev):
                    v = u * 1.5 + tf.cast(j * i, tf.float32)
                return j + 1, v
            _, u = tf.while_loop(lambda j, u: j < i, inner, [0, t])
            return i + 1, u - 1.0
        return tf.while_loop(lambda i, t: i < 5, outer, [0, tf.constant(1.0)])[1], None
    _same(build)


def test_a_cond_inside_a_split_loop():
    def build(dev):
        def body(i, x):
            with tf.device(dev):
                y = tf.cond(tf.equal(i % 2, 0), lambda: x + 1.0, lambda: x * 3.0)
            return i + 1, y
        return tf.while_loop(lambda i, x: i < 6, body, [0, tf.constant(1.0)])[1], None
    _same(build)
    assert _run(build, True) == 66.0   # 1 → 2 → 6 → 7 → 21 → 22 → 66


def test_scan_split_over_devices():
    def build(dev):
        xs = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))

        def step(a, x):
            with tf.device(dev):
                return a * 0.5 + tf.sin(x)
        return tf.scan(step, xs, initializer=tf.zeros([2])), None
    _same(build)


class _OnDevice(tf.nn.rnn_cell.RNNCell):
    """Runs `cell` under `tf.device(dev)`: the loop is on one device, the cell on another."""

    def __init__(self, cell, dev):
        super().__init__()
        self.cell, self.dev = cell, dev

    @property
    def state_size(self):
        return self.cell.state_size

    @property
    def output_size(self):
        return self.cell.output_size

    def __call__(self, x, state, scope=None):
        with tf.device(self.dev):
            return self.cell(x, state)


def test_dynamic_rnn_and_its_gradients_with_the_cell_on_another_device():
    """The forward loop is split; so is the gradient loop (it pops the forward stacks)."""
    def build(dev):
        x = tf.constant(np.random.RandomState(0).randn(3, 5, 4).astype(np.float32))
        with tf.device(dev):
            cell = tf.nn.rnn_cell.LSTMCell(6)
        out, state = tf.nn.dynamic_rnn(_OnDevice(cell, dev), x, dtype=tf.float32)
        loss = tf.reduce_sum(out ** 2) + tf.reduce_sum(state.c)
        grads = tf.gradients(loss, tf.trainable_variables() + [x],
                             colocate_gradients_with_ops=True)
        return [out, grads], None
    _same(build, rtol=1e-6)  # NOTE: same kernels and order either way; 1e-6 for BLAS paths


def test_training_through_a_loop_that_reads_a_variable_on_another_device():
    def build(dev):
        with tf.device(dev):
            w = tf.Variable(np.full((3, 3), 0.3, np.float32), name="w")
        x = tf.constant(np.ones((2, 3), np.float32))

        def body(i, h):
            with tf.device(dev):
                z = tf.matmul(h, w)
            return i + 1, tf.tanh(z) + x
        _, h = tf.while_loop(lambda i, h: i < 4, body, [0, x])
        loss = tf.reduce_sum(h ** 2)
        return loss, tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    losses = _run(build, True, steps=3)
    assert losses[2] < losses[0]
    _same(build, steps=3, rtol=1e-6)


def test_a_failing_op_in_the_split_body_names_its_node_without_hanging():
    g = tf.Graph()
    with g.as_default():
        def body(i, x):
            with tf.device("/cpu:1"):
                y = tf.debugging.check_numerics(x * 10.0, "too big", name="numerics_in_loop")
            return i + 1, y
        out = tf.while_loop(lambda i, x: i < 100, body, [0, tf.constant(1e30)])[1]
    with tf.Session(graph=g, config=tf.ConfigProto(**_TWO)) as s:
        t = time.monotonic()
        with pytest.raises(tf.errors.InvalidArgumentError, match="numerics_in_loop"):
            s.run(out)
        assert time.monotonic() - t < 10


def test_an_inner_loop_wholly_on_the_other_device_one_iteration_at_a_time():
    """The outer frame is split (its body enters a loop that lives on /cpu:1);
    parallel_iterations=1 runs the iterations strictly one after another."""
    def build(dev):
        def outer(i, t):
            def inner(j, u):
                with tf.device(dev):
                    return j + 1, u + 1.0
            with tf.device(dev):
                r = tf.while_loop(lambda j, u: j < i, inner, [0, t])[1]
            return i + 1, r * 0.5
        return tf.while_loop(lambda i, t: i < 4, outer, [0, tf.constant(1.0)],
                             parallel_iterations=1)[1], None
    _same(build)
    assert _run(build, True) == 2.1875


def test_a_split_loop_on_the_untaken_branch_of_a_cond():
    """The leader's loop is dead; the follower's control loop sees a dead predicate and
    stops after one iteration instead of waiting."""
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.bool, [])

        def loop():
            def body(i, x):
                with tf.device("/cpu:1"):
                    return i + 1, x * 2.0
            return tf.while_loop(lambda i, x: i < 3, body, [0, tf.constant(1.0)])[1]
        out = tf.cond(p, loop, lambda: tf.constant(-1.0))
    with tf.Session(graph=g, config=tf.ConfigProto(**_TWO)) as s:
        assert s.run(out, {p: True}) == 8.0
        assert s.run(out, {p: False}) == -1.0


def test_a_split_loop_blocked_on_the_other_device_ends_at_the_deadline():
    """The third iteration's dequeue on /cpu:1 waits on an empty queue; the step fails with
    DeadlineExceeded after operation_timeout_in_ms, naming a node of the loop."""
    g = tf.Graph()
    with g.as_default():
        q = tf.FIFOQueue(4, tf.float32, shapes=[[]])

        def body(i, x):
            with tf.device("/cpu:1"):
                y = x + q.dequeue()
            return i + 1, y
        out = tf.while_loop(lambda i, x: i < 3, body, [0, tf.constant(0.0)])[1]
        enqueue = q.enqueue(1.0)
    config = tf.ConfigProto(operation_timeout_in_ms=1000, **_TWO)
    with tf.Session(graph=g, config=config) as s:
        s.run(enqueue)
        s.run(enqueue)
        t = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError, match="while/"):
            s.run(out)
        assert time.monotonic() - t < 10
