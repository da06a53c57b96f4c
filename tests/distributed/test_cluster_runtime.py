"""Sessions over a cluster of real server processes: placement over tasks, tensors between
tasks, shared variables, and faults that end in errors within a deadline."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed.local_cluster import LocalCluster

pytestmark = pytest.mark.multiprocess

PS0, W0, W1 = "/job:ps/task:0", "/job:worker/task:0", "/job:worker/task:1"


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(ps=1, workers=2) as c:
        yield c


def test_session_sees_every_task_and_runs_across_them(cluster):
    g = tf.Graph()
    with g.as_default():
        with tf.device(PS0):
            v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="cross_v")
        x = tf.placeholder(tf.float32, [2, 3])
        with tf.device(W1):
            y = tf.reduce_sum(v * x, name="on_w1")
        out = y + 1.0
        with tf.Session(cluster.target("worker", 0)) as sess:
            names = [d.name for d in sess.list_devices()]
            assert names[0] == "/job:worker/replica:0/task:0/device:CPU:0"
            assert {"/job:ps/replica:0/task:0/device:CPU:0",
                    "/job:worker/replica:0/task:1/device:CPU:0"} <= set(names)
            sess.run(v.initializer)
            meta = tf.RunMetadata()
            got = sess.run(out, {x: np.ones((2, 3), np.float32)},
                           options=tf.RunOptions(output_partition_graphs=True),
                           run_metadata=meta)
            assert got == pytest.approx(16.0)
            devices = {n.device for pg in meta.partition_graphs for n in pg.node}
            assert {"/job:ps/replica:0/task:0/device:CPU:0",
                    "/job:worker/replica:0/task:1/device:CPU:0",
                    "/job:worker/replica:0/task:0/device:CPU:0"} <= devices


def test_ps_variables_are_shared_by_every_workers_sessions(cluster):
    g = tf.Graph()
    with g.as_default():
        with tf.device(PS0):
            v = tf.Variable(tf.zeros([3]), name="shared_v")
        bump = v.assign_add(tf.ones([3]))
        with tf.Session(cluster.target("worker", 0)) as a:
            a.run(v.initializer)
            a.run(bump)
        with tf.Session(cluster.target("worker", 1)) as b:
            b.run(bump)
            np.testing.assert_array_equal(b.run(v), [2, 2, 2])


def test_reset_clears_containers_on_every_task(cluster):
    g = tf.Graph()
    with g.as_default():
        with tf.device(PS0):
            v = tf.Variable(1.0, name="reset_v")
        with tf.Session(cluster.target("worker", 1)) as sess:
            sess.run(v.initializer)
        tf.Session.reset(cluster.target("worker", 0))
        with tf.Session(cluster.target("worker", 1)) as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="reset_v"):
                sess.run(v)


def test_large_tensor_between_tasks(cluster):
    g = tf.Graph()
    with g.as_default():
        with tf.device(PS0):
            big = tf.Variable(tf.random_uniform([4 * 1024 * 1024], seed=1), name="big_v")
        with tf.device(W1):
            s = tf.reduce_sum(big * 2.0)
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(big.initializer)
            want = float(sess.run(big).astype(np.float64).sum() * 2)
            assert float(sess.run(s)) == pytest.approx(want, rel=1e-4)


def test_a_remote_op_error_keeps_its_class_and_node(cluster):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [])
        with tf.device(W1):
            checked = tf.check_numerics(x * 1.0, "bad value", name="numerics_w1")
        with tf.Session(cluster.target("worker", 0)) as sess:
            assert sess.run(checked, {x: 2.0}) == 2.0
            with pytest.raises(tf.errors.InvalidArgumentError, match="bad value") as e:
                sess.run(checked, {x: np.inf})
            assert "numerics_w1" in str(e.value)
            assert sess.run(checked, {x: 3.0}) == 3.0  # the cluster still serves


def test_loops_and_conds_split_over_tasks(cluster):
    g = tf.Graph()
    with g.as_default():
        with tf.device(PS0):
            w = tf.Variable(2.0, name="loop_w")
        x = tf.placeholder(tf.float32, [])
        with tf.device(W1):
            r = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * w), [0, x])[1]
        c = tf.cond(x > 0, lambda: r + 1.0, lambda: r - 1.0)
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(w.initializer)
            assert sess.run(c, {x: 1.0}) == pytest.approx(33.0)
            assert sess.run(c, {x: -1.0}) == pytest.approx(-33.0)


@pytest.mark.parametrize("update", [lambda v: tf.assign_add(v, 1),
                                    lambda v: tf.assign(v, v + 1)], ids=["assign_add", "assign"])
def test_a_ps_variable_read_under_a_control_dependency_sees_the_update(cluster, update):
    """TF 2.21 gives 1..4: the worker's recv of the ref waits for ^update (graph_partition.cc
    AddReadControl), and the sent tensor aliases the variable's buffer."""
    g = tf.Graph()
    with g.as_default():
        with tf.device(PS0):
            v = tf.Variable(0, name="ctl_read_v")
        with tf.device(W0), tf.control_dependencies([update(v)]):
            r = tf.identity(v.read_value())
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(v.initializer)
            assert [int(sess.run(r)) for _ in range(4)] == [1, 2, 3, 4]


def test_global_step_read_after_a_train_op_across_tasks(cluster):
    g = tf.Graph()
    with g.as_default():
        with tf.device(PS0):
            step = tf.train.get_or_create_global_step()
            w = tf.Variable(1.0, name="w")
        with tf.device(W0):
            train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w),
                                                                   global_step=step)
            with tf.control_dependencies([train]):
                after = tf.identity(step.read_value())
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.global_variables_initializer())
            assert [int(sess.run(after)) for _ in range(3)] == [1, 2, 3]


@pytest.mark.slow
def test_killed_ps_mid_step_fails_the_step_and_a_restart_is_picked_up():
    before = {t.ident for t in threading.enumerate()}
    with LocalCluster(ps=1, workers=1) as c:
        g = tf.Graph()
        with g.as_default():
            with tf.device(PS0):
                q = tf.FIFOQueue(4, tf.float32, shapes=[[]], shared_name="fault_q")
                v = tf.Variable(5.0, name="fault_v")
            got = q.dequeue() + 1.0
            with tf.Session(c.target("worker", 0)) as sess:
                sess.run(v.initializer)
                killer = threading.Timer(0.5, c.kill, ("ps", 0))
                killer.start()
                t = time.monotonic()
                with pytest.raises((tf.errors.UnavailableError, tf.errors.AbortedError),
                                   match="ps") as e:
                    sess.run(got)  # blocks on the empty queue until the ps dies
                killer.join()
                assert time.monotonic() - t < 10, "the step must fail soon after the kill"
                assert "/job:ps/replica:0/task:0" in str(e.value)
                with pytest.raises(tf.errors.UnavailableError, match="ps"):
                    sess.run(v)  # the ps is still down
                c.restart("ps", 0)
                # A new incarnation: the graphs are registered again; its variables are new.
                with pytest.raises(tf.errors.FailedPreconditionError, match="fault_v"):
                    sess.run(v)
                sess.run(v.initializer)
                assert sess.run(v) == 5.0
    leaked = [t.name for t in threading.enumerate() if t.ident not in before and t.is_alive()]
    assert not leaked, f"threads left in the client: {leaked}"


def test_session_creation_names_a_task_that_is_down():
    with LocalCluster(ps=1, workers=1) as c:
        c.kill("ps", 0)
        t = time.monotonic()
        with pytest.raises(tf.errors.UnavailableError, match="/job:ps/replica:0/task:0"):
            tf.Session(c.target("worker", 0),
                       config=tf.ConfigProto(operation_timeout_in_ms=1500))
        assert time.monotonic() - t < 5
        # device_filters leave the ps out: the worker alone serves.
        only_me = tf.ConfigProto(device_filters=["/job:worker/task:0"])
        with tf.Graph().as_default(), tf.Session(c.target("worker", 0), config=only_me) as s:
            assert s.run(tf.constant(3.0) * 2.0) == 6.0


@pytest.mark.slow
def test_training_resumes_from_the_latest_checkpoint_after_a_ps_restart(tmp_path):
    with LocalCluster(ps=1, workers=1) as c:
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(1)
            x = tf.placeholder(tf.float32, [None, 3])
            with tf.device(tf.train.replica_device_setter(cluster=c.spec)):
                pred = tf.layers.dense(x, 1)
                loss = tf.reduce_mean(tf.square(pred - 1.0))
                step = tf.train.GradientDescentOptimizer(0.1).minimize(
                    loss, global_step=tf.train.get_or_create_global_step())
            saver = tf.train.Saver()
            fd = {x: np.ones((4, 3), np.float32)}
            with tf.Session(c.target("worker", 0)) as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(step, fd)
                path = saver.save(sess, str(tmp_path / "model"), global_step=3)
                saved_loss = sess.run(loss, fd)
                c.kill("ps", 0)
                with pytest.raises(tf.errors.UnavailableError, match="/job:ps"):
                    sess.run(step, fd)
                c.restart("ps", 0)
                with pytest.raises(tf.errors.FailedPreconditionError):
                    sess.run(step, fd)  # a new ps: its variables are not initialized
                saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
                assert path.endswith("model-3")
                assert sess.run(loss, fd) == pytest.approx(saved_loss)
                assert sess.run(tf.train.get_global_step()) == 3
                sess.run(step, fd)
                assert sess.run(loss, fd) < saved_loss


@pytest.mark.slow
def test_sync_replicas_over_two_worker_processes_match_one_process():
    """Between-graph replication with SyncReplicasOptimizer: each worker its own graph and
    session; accumulators and the token queue live on the ps, shared by name. Two replicas on
    halves of a batch give plain gradient descent on the whole batch."""
    from tests.training.test_sync_replicas import LR, X, Y, _loss, _reference, _variables

    rounds = 3
    with LocalCluster(ps=1, workers=2) as c:
        graphs = []
        for task, (x, y) in enumerate(((X[:4], Y[:4]), (X[4:], Y[4:]))):
            g = tf.Graph()
            with g.as_default(), tf.device(tf.train.replica_device_setter(
                    cluster=c.spec, worker_device=f"/job:worker/task:{task}")):
                gs = tf.train.get_or_create_global_step()
                w, b, _ = _variables(False)
                opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(LR), 2,
                                                     total_num_replicas=2)
                train = opt.minimize(_loss(tf.constant(x), tf.constant(y), w, b),
                                     global_step=gs)
                init = [tf.global_variables_initializer(), tf.local_variables_initializer()]
            graphs.append((g, opt, train, init, [w, b]))
        sessions = [tf.Session(c.target("worker", t), graph=graphs[t][0]) for t in (0, 1)]
        try:
            chief, other = sessions
            g0, opt0, _, init0, vars0 = graphs[0]
            chief.run(init0)
            chief.run(opt0.chief_init_op)
            with g0.as_default():
                chief.run(opt0.get_init_tokens_op(0))
            other.run(graphs[1][3][1])
            other.run(graphs[1][1].local_step_init_op)
            coord = tf.train.Coordinator()
            opt0.get_chief_queue_runner().create_threads(chief, coord, daemon=True, start=True)
            barrier = threading.Barrier(2, timeout=30)
            failures = []

            def replica(t):
                try:
                    for _ in range(rounds):
                        sessions[t].run(graphs[t][2],
                                        options=tf.RunOptions(timeout_in_ms=30000))
                        barrier.wait()
                except Exception as e:  # noqa: BLE001 -- re-raised below
                    failures.append(e)
                    barrier.abort()

            threads = [threading.Thread(target=replica, args=(t,)) for t in (0, 1)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            coord.request_stop()
            assert not failures, failures
            got = chief.run(vars0)
        finally:
            for s in sessions:
                s.close()
    for a, b in zip(got, _reference(rounds)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_step_table_is_bounded_and_remembers_cleaned_steps():
    from tensorweave.distributed.remote import StepTable

    table = StepTable(max_steps=3)
    first = table.find(1)
    for step in range(2, 6):
        table.find(step)
    assert len(table) == 3
    with pytest.raises(tf.errors.AbortedError, match="evicted"):
        first.recv("a;0000000000000001;b;t;0:0", time.monotonic() + 1)
    table.cleanup(4)
    with pytest.raises(tf.errors.AbortedError, match="cleaned up"):
        table.find(4).recv("a;0000000000000001;b;t;0:0", time.monotonic() + 1)
