"""SyncReplicasOptimizer with a backup worker across processes: 3 worker tasks and a ps, each
its own process; 3 clients (between-graph replication, replica_device_setter), each in a
MonitoredTrainingSession(is_chief) set up by the optimizer's `make_session_run_hook`, and
`replicas_to_aggregate=2`. Worker 2 is the slowest: every round it computes its gradient only
after the round's update was applied, so its gradient is stale and dropped, as TF drops it
(its batch would wreck the model). The two others' halves of the batch give plain gradient
descent on the whole batch, step for step.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed.local_cluster import LocalCluster
from tests.training.test_sync_replicas import LR, X, Y, _loss, _reference, _variables

pytestmark = [pytest.mark.slow, pytest.mark.multiprocess]

ROUNDS = 3
WAIT_S = 60
SLOW = 2
JUNK = (np.full((4, 3), 50.0, np.float32), np.full((4, 1), -80.0, np.float32))


class _Replica:
    """Worker `task`'s graph and its MonitoredTrainingSession."""

    def __init__(self, spec: dict, task: int, batch):
        self.task = task
        self.graph = tf.Graph()
        with self.graph.as_default(), tf.device(tf.train.replica_device_setter(
                cluster=spec, worker_device=f"/job:worker/task:{task}")):
            self.global_step = tf.train.get_or_create_global_step()
            self.vars = [v for v in _variables(False) if v is not None]
            opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(LR),
                                                 replicas_to_aggregate=2,
                                                 total_num_replicas=3)
            loss = _loss(tf.constant(batch[0]), tf.constant(batch[1]), *self.vars)
            self.train_op = opt.minimize(loss, global_step=self.global_step)
            self.hook = opt.make_session_run_hook(is_chief=task == 0, num_tokens=0)
            self.local_step = opt._local_step
        self.target = f"grpc://{spec['worker'][task]}"

    def session(self):
        with self.graph.as_default():
            return tf.train.MonitoredTrainingSession(
                master=self.target, is_chief=self.task == 0, hooks=[self.hook],
                max_wait_secs=WAIT_S, save_checkpoint_secs=None, save_summaries_steps=None,
                log_step_count_steps=None, stop_grace_period_secs=1)


def _wait_for_step(sess, replica: _Replica, step: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while sess.run(replica.global_step) < step:
        assert time.monotonic() < deadline, f"global step never reached {step}"
        time.sleep(0.02)


# NOTE: the chief's queue runner is left waiting in take_grad for a round that never comes (as
# TF's is); closing the session ends its step with an error its thread reports.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_three_workers_aggregating_two_drop_the_slowest_workers_stale_gradients():
    batches = [(X[:4], Y[:4]), (X[4:], Y[4:]), JUNK]
    with LocalCluster(ps=1, workers=3) as c:
        replicas = [_Replica(c.spec, t, batches[t]) for t in range(3)]
        sessions: list = [None] * 3
        chief_ready = threading.Event()
        ready = threading.Barrier(3, timeout=WAIT_S * 2)
        rounds = threading.Barrier(3, timeout=WAIT_S)
        failures: list = []
        found: list = []

        def worker(t):
            r = replicas[t]
            try:
                # NOTE: the others' sessions start once the chief's has made the model ready:
                # one that finds it not ready sleeps recovery_wait_secs (30 s, as TF's) first
                if t:
                    assert chief_ready.wait(WAIT_S * 2), "the chief's session never came"
                    if failures:
                        return
                sess = sessions[t] = r.session()
                if not t:
                    chief_ready.set()
                ready.wait()
                for k in range(ROUNDS):
                    if t == SLOW:
                        _wait_for_step(sess, r, k + 1)
                    sess.run(r.train_op)
                    rounds.wait()
                if t == 0:
                    _wait_for_step(sess, r, ROUNDS)
                    found.extend(sess.run(r.vars + [r.global_step]))
            except Exception as e:  # noqa: BLE001 -- re-raised in the test thread
                failures.append(e)
                chief_ready.set()
                ready.abort()
                rounds.abort()

        threads = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT_S * 4)
        try:
            assert not any(t.is_alive() for t in threads), "a worker hung"
            if failures:
                raise failures[0]
        finally:
            for s in sessions:
                if s is not None:
                    s.close()
    *weights, step = found
    assert step == ROUNDS
    for got, want in zip(weights, _reference(ROUNDS)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
