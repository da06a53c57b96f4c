"""QueueRunner, Coordinator and start_queue_runners: threads stop cleanly, none leak."""

import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.data.queues import FIFOQueue
from tensorweave.framework.graph import GraphKeys, get_collection
from tensorweave.runtime.kernels.cpu import queues as _kernels  # noqa: F401
from tensorweave.training.coordinator import Coordinator
from tensorweave.training.queue_runner import (
    QueueRunner,
    add_queue_runner,
    start_queue_runners,
)

T = tf.RunOptions(timeout_in_ms=5000)


def _live_runner_threads() -> list:
    return [t for t in threading.enumerate() if t.name.startswith("QueueRunnerThread")]


def test_coordinator_stop_and_exception():
    coord = Coordinator()
    assert not coord.should_stop()
    coord.request_stop(errors.OutOfRangeError(None, None, "done"))   # a clean stop
    assert coord.should_stop() and coord.wait_for_stop(0.01)
    coord.join([])
    coord.clear_stop()
    with coord.stop_on_exception():
        raise KeyError("boom")
    assert coord.should_stop()
    with pytest.raises(KeyError):
        coord.raise_requested_exception()
    with pytest.raises(KeyError):
        coord.join()


def test_coordinator_join_reports_stragglers():
    coord = Coordinator()
    ev = threading.Event()
    th = threading.Thread(target=ev.wait, args=(5,), name="straggler")
    th.start()
    coord.request_stop()
    with pytest.raises(RuntimeError, match="straggler"):
        coord.join([th], stop_grace_period_secs=0.05)
    ev.set()
    th.join()


def test_queue_runner_fills_until_stop_and_threads_end():
    with tf.Graph().as_default():
        q = FIFOQueue(4, tf.int32, shapes=[[]])
        counter = tf.Variable(0, name="counter")
        enq = q.enqueue(tf.assign_add(counter, 1))
        qr = QueueRunner(q, [enq] * 2)
        add_queue_runner(qr)
        assert get_collection(GraphKeys.QUEUE_RUNNERS) == [qr]
        d = q.dequeue()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            coord = Coordinator()
            threads = start_queue_runners(sess, coord)
            assert len(threads) == 3
            assert qr.create_threads(sess, coord=coord) == []   # already running
            got = [sess.run(d, options=T) for _ in range(10)]
            assert len(set(got)) == 10 and min(got) >= 1
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
            assert sess.run(q.is_closed())
    assert not _live_runner_threads()


def test_runner_ends_normally_when_source_runs_out():
    with tf.Graph().as_default():
        src = FIFOQueue(10, tf.int32, shapes=[[]], name="src")
        dst = FIFOQueue(2, tf.int32, shapes=[[]], name="dst")
        fill = src.enqueue_many([np.arange(5, dtype=np.int32)])
        qr = QueueRunner(dst, [dst.enqueue(src.dequeue())])
        d = dst.dequeue()
        with tf.Session() as sess:
            sess.run([fill])
            sess.run(src.close())
            coord = Coordinator()
            threads = qr.create_threads(sess, coord=coord, start=True)
            got = []
            try:
                while True:
                    got.append(int(sess.run(d, options=T)))
            except errors.OutOfRangeError:
                coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
            assert got == [0, 1, 2, 3, 4]
            assert qr.exceptions_raised == []
    assert not _live_runner_threads()


def test_runner_error_reaches_coordinator():
    with tf.Graph().as_default():
        q = FIFOQueue(2, tf.float32, shapes=[[]])
        x = tf.constant(np.float32(1.0))
        v = tf.Variable(1.0)            # never initialized: the enqueue fails
        qr = QueueRunner(q, [q.enqueue(x * v)])
        with tf.Session() as sess:
            coord = Coordinator()
            threads = qr.create_threads(sess, coord=coord, start=True)
            with pytest.raises(errors.FailedPreconditionError):
                coord.join(threads, stop_grace_period_secs=5)
    assert not _live_runner_threads()


def test_start_queue_runners_needs_a_session():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="No default session"):
            start_queue_runners()


def test_threads_stop_on_session_close():
    with tf.Graph().as_default():
        q = FIFOQueue(1, tf.int32, shapes=[[]])
        qr = QueueRunner(q, [q.enqueue(1)])
        sess = tf.Session()
        coord = Coordinator()
        threads = qr.create_threads(sess, coord=coord, start=True, daemon=True)
        time.sleep(0.1)                  # the runner blocks on the full queue
        sess.close()
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5, ignore_live_threads=False)
    assert not _live_runner_threads()
