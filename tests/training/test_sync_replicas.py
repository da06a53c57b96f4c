"""SyncReplicasOptimizer with replicas simulated in one process: one Session, one thread per
replica running that replica's train op (its own optimizer instance and batch, sharing the
variables, accumulators and token queue by name), plus the chief's queue runner.

Equivalence: averaging the gradients of the replicas' equal slices of a batch is the gradient
of the batch's mean loss, so K synchronous steps equal K steps of plain GradientDescent.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.training.coordinator import Coordinator
from tensorweave.training.sync_replicas_optimizer import SyncReplicasOptimizer

LR = 0.1
STEPS = 4
WAIT_S = 10
_RNG = np.random.RandomState(11)
X = _RNG.randn(8, 3).astype(np.float32)
Y = _RNG.randn(8, 1).astype(np.float32)
W0 = _RNG.randn(3, 1).astype(np.float32)
B0 = np.array([0.5], np.float32)
IDS = np.array([3, 1, 3, 0], np.int32)        # embedding rows (the same in every replica)


def _loss(x, y, w, b, emb=None):
    pred = tf.matmul(x, w) + b
    if emb is not None:   # a sparse gradient: rows of `emb` gathered by IDS
        pred += tf.reduce_sum(tf.gather(emb, IDS) * x[:, :2], axis=1, keepdims=True)
    return tf.reduce_mean(tf.square(pred - y))


def _variables(sparse: bool):
    w = tf.Variable(W0, name="w")
    b = tf.Variable(B0, name="b")
    emb = tf.Variable(np.arange(10, dtype=np.float32).reshape(5, 2) / 10, name="emb") \
        if sparse else None
    return w, b, emb


def _reference(steps: int, sparse: bool = False, x=X, y=Y) -> list:
    """Plain GradientDescent on the whole batch's mean loss."""
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        w, b, emb = _variables(sparse)
        loss = _loss(tf.constant(x[:len(IDS)] if sparse else x),
                     tf.constant(y[:len(IDS)] if sparse else y), w, b, emb)
        step = tf.train.GradientDescentOptimizer(LR).minimize(loss, global_step=gs)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(steps):
                s.run(step)
            return s.run([v for v in (w, b, emb) if v is not None])


class _Cluster:
    """The graph of `n` replicas; replica 0 is the chief."""

    def __init__(self, batches, replicas_to_aggregate, sparse=False):
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.global_step = tf.train.get_or_create_global_step()
            self.vars = [v for v in _variables(sparse) if v is not None]
            self.opts, self.train_ops = [], []
            for x, y in batches:
                opt = SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(LR),
                                            replicas_to_aggregate,
                                            total_num_replicas=len(batches))
                emb = self.vars[2] if sparse else None
                loss = _loss(tf.constant(x), tf.constant(y), self.vars[0], self.vars[1], emb)
                self.train_ops.append(opt.minimize(loss, global_step=self.global_step))
                self.opts.append(opt)
            self.init = [tf.global_variables_initializer(), tf.local_variables_initializer()]

    def start(self, sess, coord, num_tokens=0) -> None:
        """What the chief and the other replicas run before training (TF's hook does this)."""
        sess.run(self.init)
        sess.run(self.opts[0].chief_init_op)
        for opt in self.opts[1:]:
            sess.run(opt.local_step_init_op)
        sess.run(self.opts[0].get_init_tokens_op(num_tokens))
        self.opts[0].get_chief_queue_runner().create_threads(sess, coord, daemon=True,
                                                             start=True)


def _run_replicas(cluster, sess, rounds, late=()):
    """One thread per replica, each running its train op once per round; replicas in `late`
    first wait for the round's update, so their gradient is stale. Raises what a thread
    raised."""
    n = len(cluster.train_ops)
    barrier = threading.Barrier(n, timeout=WAIT_S)
    errors: list = []
    opts = tf.RunOptions(timeout_in_ms=WAIT_S * 1000)

    def replica(r):
        try:
            for k in range(rounds):
                if r in late:
                    _wait_for_step(sess, cluster.global_step, k + 1)
                sess.run(cluster.train_ops[r], options=opts)
                barrier.wait()
        except Exception as e:  # noqa: BLE001 - re-raised in the test thread
            errors.append(e)
            barrier.abort()
    threads = [threading.Thread(target=replica, args=(r,), daemon=True) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S * 2)
    assert not any(t.is_alive() for t in threads), "a replica thread hung"
    if errors:
        raise errors[0]


def _wait_for_step(sess, global_step, step: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while sess.run(global_step) < step:
        assert time.monotonic() < deadline, f"global step never reached {step}"
        time.sleep(0.005)


def _train(cluster, rounds, late=()):
    coord = Coordinator()
    with tf.Session(graph=cluster.graph) as sess:
        cluster.start(sess, coord)
        _run_replicas(cluster, sess, rounds, late)
        out = sess.run(cluster.vars + [cluster.global_step])
        coord.request_stop()
    return out


def _halves(x, y, n=2):
    k = len(x) // n
    return [(x[i * k:(i + 1) * k], y[i * k:(i + 1) * k]) for i in range(n)]


def test_two_replicas_match_gradient_descent_on_the_whole_batch():
    *found, step = _train(_Cluster(_halves(X, Y), replicas_to_aggregate=2), STEPS)
    assert step == STEPS
    for got, want in zip(found, _reference(STEPS)):
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_sparse_gradients_go_through_sparse_accumulators():
    batches = _halves(X[:2 * len(IDS)], Y[:2 * len(IDS)])
    cluster = _Cluster(batches, replicas_to_aggregate=2, sparse=True)
    types = {op.type for op in cluster.graph.get_operations()}
    assert {"SparseConditionalAccumulator", "SparseAccumulatorTakeGradient"} <= types
    *found, step = _train(cluster, STEPS)
    # NOTE: both replicas gather the same rows, so TF's per-row mean is the batch's gradient
    assert step == STEPS
    for got, w in zip(found, _reference_sparse(STEPS, batches)):
        np.testing.assert_allclose(got, w, atol=1e-5)


def _reference_sparse(steps, batches) -> list:
    """GradientDescent on the mean of the replicas' losses (each over its own batch)."""
    with tf.Graph().as_default():
        w, b, emb = _variables(True)
        loss = tf.add_n([_loss(tf.constant(x), tf.constant(y), w, b, emb)
                         for x, y in batches]) / len(batches)
        step = tf.train.GradientDescentOptimizer(LR).minimize(loss)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(steps):
                s.run(step)
            return s.run([w, b, emb])


def test_backup_replica_gradients_are_dropped_when_stale():
    """3 replicas, 2 aggregated: the third always arrives after the update, so its gradient
    (of a batch that would wreck the model) is stale and never applied."""
    junk = (np.full((4, 3), 50.0, np.float32), np.full((4, 1), -80.0, np.float32))
    cluster = _Cluster(_halves(X, Y) + [junk], replicas_to_aggregate=2)
    *found, step = _train(cluster, STEPS, late={2})
    assert step == STEPS
    for got, want in zip(found, _reference(STEPS)):
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_free_running_replicas_with_tfs_initial_tokens_make_progress():
    """TF's usual setup (tokens = replicas_to_aggregate, the session hook, no barrier): the
    global step advances, nothing hangs, and closing the session stops every thread."""
    cluster = _Cluster(_halves(X, Y), replicas_to_aggregate=2)
    coord = Coordinator()
    stop = threading.Event()
    sess = tf.Session(graph=cluster.graph)
    sess.run(cluster.init)
    hooks = [opt.make_session_run_hook(is_chief=(r == 0))
             for r, opt in enumerate(cluster.opts)]
    with cluster.graph.as_default():
        for hook in hooks:
            hook.begin()
    for hook in hooks:
        hook.after_create_session(sess, coord)

    def replica(r):
        while not stop.is_set():
            try:
                sess.run(cluster.train_ops[r], options=tf.RunOptions(timeout_in_ms=5000))
            except tf.errors.OpError:
                return
    threads = [threading.Thread(target=replica, args=(r,), daemon=True) for r in range(2)]
    for t in threads:
        t.start()
    _wait_for_step(sess, cluster.global_step, STEPS)
    w = sess.run(cluster.vars[0])
    stop.set()
    coord.request_stop()
    sess.close()
    for t in threads:
        t.join(WAIT_S)
    assert not any(t.is_alive() for t in threads)
    assert np.all(np.isfinite(w)) and not np.allclose(w, W0)


def test_chief_hook_refuses_uninitialized_variables():
    cluster = _Cluster(_halves(X, Y), replicas_to_aggregate=2)
    hook = cluster.opts[0].make_session_run_hook(is_chief=True)
    with cluster.graph.as_default():
        hook.begin()
    with tf.Session(graph=cluster.graph) as sess:
        with pytest.raises(RuntimeError, match="Variables not initialized: global_step, w, b"):
            hook.after_create_session(sess, Coordinator())


def test_names_and_collections_are_tf1s():
    cluster = _Cluster(_halves(X, Y), replicas_to_aggregate=2)
    g, opt = cluster.graph, cluster.opts[0]
    names = {op.name: op for op in g.get_operations()}
    for name in ("sync_rep_local_step", "sync_replicas/conditional_accumulator",
                 "sync_replicas/AccumulatorApplyGradient", "sync_replicas/SetGlobalStep",
                 "sync_replicas/group_deps", "sync_token_q", "sync_token_q_Dequeue",
                 "sync_token_q_EnqueueMany", "sync_replicas_1/conditional_accumulator",
                 "sync_rep_local_step_1"):
        assert name in names, name
    acc = names["sync_replicas/conditional_accumulator"]
    assert acc.get_attr("shared_name") == b"w:0/grad_accum"
    assert names["sync_token_q"].get_attr("shared_name") == b"sync_token_q"
    with g.as_default():
        local = [v.op.name for v in tf.local_variables()]
        assert local == ["sync_rep_local_step", "sync_rep_local_step_1"]
        assert "sync_rep_local_step" not in [v.op.name for v in tf.global_variables()]
    assert opt.get_slot_names() == [] and opt.variables() == []


def test_errors_before_and_during_apply_gradients():
    with tf.Graph().as_default():
        w = tf.Variable(1.0)
        opt = SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(LR), 3,
                                    total_num_replicas=2)
        with pytest.raises(ValueError, match="after apply_gradients"):
            opt.get_chief_queue_runner()
        with pytest.raises(ValueError, match="after apply_gradients"):
            opt.get_init_tokens_op()
        with pytest.raises(ValueError, match="Global step is required"):
            opt.minimize(w * w)
        with pytest.raises(ValueError, match="at least one variable"):
            opt.apply_gradients([], global_step=tf.train.get_or_create_global_step())
        opt.minimize(w * w, global_step=tf.train.get_or_create_global_step())
        with pytest.raises(ValueError, match=r"Too few tokens .* 0 \(given\) vs 1"):
            opt.get_init_tokens_op(num_tokens=0)
        assert opt.get_init_tokens_op(num_tokens=1).type == "QueueEnqueueManyV2"
        assert opt._tokens_per_step == 3
