"""While loops whose body spans a worker and a ps task (real server processes, gRPC): the
same results as one process, and a task killed mid-loop ends the step with its name."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed.local_cluster import LocalCluster
from tests.master.test_split_loops import _control_loops, _OnDevice

pytestmark = pytest.mark.multiprocess

PS0, W0 = "/job:ps/task:0", "/job:worker/task:0"


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(ps=1, workers=1) as c:
        yield c


def _both(build, cluster, steps: int = 1):
    """`build(ps, worker)` run over the cluster and in one process; returns both results."""
    out = []
    for target, ps, worker in ((cluster.target("worker", 0), PS0, W0),
                               ("", "/cpu:0", "/cpu:0")):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(5)
            fetch, train = build(ps, worker)
            init = tf.global_variables_initializer()
            with tf.Session(target, graph=g) as s:
                s.run(init)
                if target:
                    assert {d.split("/device")[0] for d in _control_loops(s, fetch)} == \
                        {PS0.replace("/task", "/replica:0/task"), W0.replace(
                            "/task", "/replica:0/task")}, "the loop was not split over tasks"
                got = [s.run([fetch, train] if train is not None else fetch)
                       for _ in range(steps)]
        if target:
            tf.Session.reset(target)   # NOTE: the ps's variables outlive the session
        out.append(got)
    return out


def test_a_loop_body_on_the_ps_trains_as_in_one_process(cluster):
    def build(ps, worker):
        with tf.device(ps):
            w = tf.Variable(np.full((3, 3), 0.2, np.float32), name="split_loop_w")
        with tf.device(worker):
            x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) / 6)

            def body(i, h):
                with tf.device(ps):
                    z = tf.matmul(h, w)
                return i + 1, tf.tanh(z) + x
            _, h = tf.while_loop(lambda i, h: i < 5, body, [0, x])
            loss = tf.reduce_sum(h ** 2)
            train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
        return loss, train
    remote, local = _both(build, cluster, steps=3)
    np.testing.assert_allclose([r[0] for r in remote], [r[0] for r in local], rtol=1e-6)
    assert remote[2][0] < remote[0][0]


def test_a_loop_nested_in_a_loop_over_two_tasks(cluster):
    def build(ps, worker):
        with tf.device(worker):
            def outer(i, t):
                def inner(j, u):
                    with tf.device(ps):
                        v = u * 1.25 + tf.cast(i * j, tf.float32)
                    return j + 1, v
                return i + 1, tf.while_loop(lambda j, u: j < i, inner, [0, t])[1] - 1.0
            return tf.while_loop(lambda i, t: i < 4, outer, [0, tf.constant(0.5)])[1], None
    remote, local = _both(build, cluster)
    assert remote == local


def test_dynamic_rnn_with_cell_variables_on_the_ps_and_the_cell_split(cluster):
    """replica_device_setter puts the LSTM's variables on the ps; the cell runs there too, the
    rest of the loop (no device asked: the client's task) on the worker; the gradients,
    colocated with the forward ops, make the gradient loop split as well. Trains as in one
    process."""
    def build(ps, worker):
        spec = tf.train.ClusterSpec({"ps": ["h:1"], "worker": ["h:2"]}) if ps == PS0 else None
        setter = (tf.train.replica_device_setter(cluster=spec, worker_device=ps)
                  if spec else "/cpu:0")
        x = tf.constant(np.random.RandomState(1).randn(2, 4, 3).astype(np.float32))
        with tf.device(setter):
            cell = tf.nn.rnn_cell.BasicLSTMCell(4)
        out, _ = tf.nn.dynamic_rnn(_OnDevice(cell, setter), x, dtype=tf.float32)
        loss = tf.reduce_mean(out ** 2)
        train = tf.train.GradientDescentOptimizer(0.5).minimize(
            loss, colocate_gradients_with_ops=True)
        return loss, train
    remote, local = _both(build, cluster, steps=2)
    np.testing.assert_allclose([r[0] for r in remote], [r[0] for r in local], rtol=1e-6)


@pytest.mark.slow
def test_a_ps_killed_mid_loop_fails_the_step_naming_it():
    with LocalCluster(ps=1, workers=1) as c:
        g = tf.Graph()
        with g.as_default(), tf.device(W0):
            def body(i, x):
                with tf.device(PS0):
                    y = x * 0.5 + 1.0
                return i + 1, y
            out = tf.while_loop(lambda i, x: i < 10 ** 7, body, [0, tf.constant(0.0)])[1]
            with tf.Session(c.target("worker", 0)) as sess:
                killer = threading.Timer(1.0, c.kill, ("ps", 0))
                killer.start()
                t = time.monotonic()
                with pytest.raises((tf.errors.UnavailableError, tf.errors.AbortedError),
                                   match="ps") as e:
                    sess.run(out)
                killer.join()
                assert time.monotonic() - t < 15, "the step must fail soon after the kill"
                assert "/job:ps/replica:0/task:0" in str(e.value)
