"""One suite, three ways to run it: an in-process session, a session on a single-task server
process, and a session on a worker of a cluster of processes whose variables live on a ps task
(replica_device_setter). Every test must give the same answer on all three."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed.local_cluster import LocalCluster


@pytest.fixture(scope="module", params=["local", "server", "cluster"])
def mode(request):
    """(target, device function for the model's variables or None)."""
    if request.param == "local":
        yield "", None
        return
    if request.param == "server":
        with LocalCluster(ps=0, workers=1) as c:
            yield c.target("worker", 0), None
        return
    with LocalCluster(ps=1, workers=1) as c:
        yield c.target("worker", 0), tf.train.replica_device_setter(cluster=c.spec)


def _session(mode):
    return tf.Session(mode[0])


def _devices(mode):
    return tf.device(mode[1]) if mode[1] is not None else tf.device(None)


@pytest.mark.multiprocess
class TestSessions:
    def test_feeds_fetches_and_structures(self, mode):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 3], name="x")
            y = tf.reduce_sum(x * 2.0, axis=1)
            names = tf.constant(["a", "bc"])
            with _session(mode) as s:
                out = s.run({"y": y, "pair": (y, names)}, {x: np.ones((2, 3), np.float32)})
        np.testing.assert_array_equal(out["y"], [6, 6])
        assert list(out["pair"][1]) == [b"a", b"bc"]

    def test_variables_assign_and_reinitialize(self, mode):
        with tf.Graph().as_default():
            with _devices(mode):
                v = tf.Variable([1.0, 2.0], name="iv")
                bump = v.assign_add([1.0, 1.0])
            with _session(mode) as s:
                s.run(v.initializer)
                s.run(bump)
                np.testing.assert_array_equal(s.run(v), [2, 3])
                s.run(v.initializer)
                np.testing.assert_array_equal(s.run(v), [1, 2])

    def test_training_matches_the_local_run(self, mode):
        def train(target, setter):
            with tf.Graph().as_default():
                tf.set_random_seed(3)
                x = tf.placeholder(tf.float32, [None, 4])
                y = tf.placeholder(tf.int64, [None])
                with tf.device(setter) if setter else tf.device(None):
                    h = tf.layers.dense(x, 8, tf.nn.relu)
                    logits = tf.layers.dense(h, 3)
                    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
                    step = tf.train.AdamOptimizer(0.05).minimize(
                        loss, global_step=tf.train.get_or_create_global_step())
                rng = np.random.default_rng(0)
                fd = {x: rng.random((16, 4), dtype=np.float32), y: rng.integers(0, 3, 16)}
                with tf.Session(target) as s:
                    s.run(tf.global_variables_initializer())
                    losses = [s.run([step, loss], fd)[1] for _ in range(10)]
            return losses

        got = train(*mode)
        want = train("", None)
        np.testing.assert_allclose(got, want, rtol=1e-5)
        assert got[-1] < got[0]

    def test_dataset_iterator_to_the_end(self, mode):
        with tf.Graph().as_default():
            ds = tf.data.Dataset.range(10).map(lambda i: i * 2).batch(4)
            it = tf.data.make_initializable_iterator(ds)
            nxt = it.get_next()
            with _session(mode) as s:
                s.run(it.initializer)
                got = [list(s.run(nxt)) for _ in range(3)]
                with pytest.raises(tf.errors.OutOfRangeError):
                    s.run(nxt)
        assert got == [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18]]

    def test_queue_enqueue_dequeue(self, mode):
        with tf.Graph().as_default():
            with _devices(mode):
                q = tf.FIFOQueue(3, tf.int32, shapes=[[]])
            enq = q.enqueue_many([[1, 2, 3]])
            deq = q.dequeue()
            with _session(mode) as s:
                s.run(enq)
                assert [s.run(deq) for _ in range(3)] == [1, 2, 3]
                with pytest.raises(tf.errors.DeadlineExceededError):
                    s.run(deq, options=tf.RunOptions(timeout_in_ms=300))

    def test_cond_and_while(self, mode):
        with tf.Graph().as_default():
            with _devices(mode):
                w = tf.Variable(3.0, name="cw")
            x = tf.placeholder(tf.float32, [])
            r = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + w), [0, x])[1]
            out = tf.cond(x > 0, lambda: r * 2.0, lambda: r)
            with _session(mode) as s:
                s.run(w.initializer)
                assert s.run(out, {x: 1.0}) == pytest.approx(20.0)
                assert s.run(out, {x: -1.0}) == pytest.approx(8.0)

    def test_errors_keep_class_and_node(self, mode):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None])
            bad = tf.reshape(x, [2, 2], name="needs_four")
            unfed = tf.placeholder(tf.float32, [], name="never_fed") + 1.0
            with _session(mode) as s:
                with pytest.raises(tf.errors.InvalidArgumentError, match="needs_four"):
                    s.run(bad, {x: np.ones(3, np.float32)})
                with pytest.raises(tf.errors.InvalidArgumentError, match="never_fed"):
                    s.run(unfed)
                assert s.run(bad, {x: np.ones(4, np.float32)}).shape == (2, 2)

    def test_callables_and_traced_runs(self, mode):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [])
            y = x * 3.0
            with _session(mode) as s:
                f = s.make_callable(y, [x])
                assert f(2.0) == 6.0
                meta = tf.RunMetadata()
                s.run(y, {x: 1.0}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                      run_metadata=meta)
                assert any(n.node_name for d in meta.step_stats.dev_stats for n in d.node_stats)

    def test_saver_round_trip(self, mode, tmp_path):
        with tf.Graph().as_default():
            with _devices(mode):
                v = tf.Variable([[1.0, 2.0]], name="sv")
            saver = tf.train.Saver()
            with _session(mode) as s:
                s.run(v.initializer)
                path = saver.save(s, os.path.join(str(tmp_path), "m"))
                s.run(v.assign([[5.0, 6.0]]))
                saver.restore(s, path)
                np.testing.assert_array_equal(s.run(v), [[1, 2]])

    def test_large_tensor(self, mode):
        with tf.Graph().as_default():
            with _devices(mode):
                big = tf.Variable(tf.ones([2 * 1024 * 1024]), name="bigv")
            total = tf.reduce_sum(big)
            with _session(mode) as s:
                s.run(big.initializer)
                assert s.run(total) == 2 * 1024 * 1024
                assert s.run(big).nbytes == 8 * 1024 * 1024
