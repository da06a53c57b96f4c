"""`tf.train.QueueRunner`: threads that run enqueue ops until the queue closes, as TF1.

Each enqueue op gets a thread looping `sess.run(enqueue_op)`. A queue-closed exception
(OutOfRangeError by default) ends a thread normally; the last thread of a session to end
runs `close_op`. With a coordinator, one more thread waits for the stop request and runs
`cancel_op` (closing the queue and cancelling pending enqueues), so blocked threads wake.
Any other exception requests a stop with it (or, without a coordinator, is recorded in
`exceptions_raised` and re-raised in the thread).
"""

from __future__ import annotations

import logging
import threading
import weakref

from tensorweave import errors
from tensorweave.framework.graph import (
    GraphKeys,
    add_to_collection,
    get_collection,
    get_default_graph,
)
from tensorweave.proto import queue_runner_pb2
from tensorweave.training import meta_graph
from tensorweave.training.meta_graph import prepend_name_scope, strip_name_scope

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]

_log = logging.getLogger(__name__)


class QueueRunner:
    """Holds a queue's enqueue ops and starts the threads that run them."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None,
                 import_scope=None):
        self._lock = threading.Lock()
        self._runs_per_session: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._exceptions_raised: list = []
        if queue_runner_def is not None:
            if queue or enqueue_ops:
                raise ValueError("queue_runner_def and queue are mutually exclusive.")
            self._init_from_proto(queue_runner_def, import_scope)
            return
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = (cancel_op if cancel_op is not None
                           else queue.close(cancel_pending_enqueues=True))
        self._queue_closed_exception_types = tuple(
            queue_closed_exception_types or (errors.OutOfRangeError,))

    def _init_from_proto(self, queue_runner_def, import_scope) -> None:
        """The runner a QueueRunnerDef names, its ops looked up in the default graph (the
        queue becomes its op, as in TF: `name` and the ops are what the threads need)."""
        g = get_default_graph()

        def element(name):
            return g.as_graph_element(prepend_name_scope(name, import_scope))

        self._queue = element(queue_runner_def.queue_name)
        self._enqueue_ops = [element(n) for n in queue_runner_def.enqueue_op_name]
        self._close_op = element(queue_runner_def.close_op_name)
        self._cancel_op = element(queue_runner_def.cancel_op_name)
        codes = list(queue_runner_def.queue_closed_exception_types)
        self._queue_closed_exception_types = tuple(
            errors.exception_type_from_error_code(c) for c in codes) or (
                errors.OutOfRangeError,)

    def to_proto(self, export_scope=None):
        """This runner as a QueueRunnerDef (op names relative to `export_scope`), or None when
        its queue lies outside `export_scope`."""
        if export_scope is not None and not self.queue.name.startswith(export_scope):
            return None
        return queue_runner_pb2.QueueRunnerDef(
            queue_name=strip_name_scope(self.queue.name, export_scope),
            enqueue_op_name=[strip_name_scope(op.name, export_scope)
                             for op in self.enqueue_ops],
            close_op_name=strip_name_scope(self.close_op.name, export_scope),
            cancel_op_name=strip_name_scope(self.cancel_op.name, export_scope),
            queue_closed_exception_types=[errors.error_code_from_exception_type(cls)
                                          for cls in self.queue_closed_exception_types])

    @staticmethod
    def from_proto(queue_runner_def, import_scope=None):
        """The QueueRunner a QueueRunnerDef describes, in the default graph."""
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self) -> list:
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self) -> tuple:
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list:
        return self._exceptions_raised

    @property
    def name(self) -> str:
        return self._queue.name

    def _finish(self, sess) -> None:
        with self._lock:
            self._runs_per_session[sess] -= 1
            last = self._runs_per_session[sess] == 0
        if last:
            try:
                sess.run(self._close_op)
            except Exception as e:  # noqa: BLE001 - TF ignores a failing close
                _log.debug("Ignored exception: %s", e)

    def _run(self, sess, enqueue_op, coord=None) -> None:
        finished = False
        try:
            while not (coord and coord.should_stop()):
                try:
                    sess.run(enqueue_op)
                except self._queue_closed_exception_types:
                    finished = True
                    self._finish(sess)
                    return
        except Exception as e:  # noqa: BLE001 - reported through the coordinator
            if coord:
                coord.request_stop(e)
            else:
                _log.error("Exception in QueueRunner: %s", e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not finished:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord) -> None:
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as e:  # noqa: BLE001 - the session may be closed already
            _log.debug("Ignored exception: %s", e)

    def create_threads(self, sess, coord=None, daemon=False, start=False) -> list:
        """The threads running the enqueue ops in `sess` ([] when already running there)."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord),
                                    name=f"QueueRunnerThread-{self.name}-{op.name}")
                   for op in self._enqueue_ops]
        if coord:
            threads.append(threading.Thread(
                target=self._close_on_stop, args=(sess, self._cancel_op, coord),
                name=f"QueueRunnerThread-{self.name}-{self._cancel_op.name}"))
        for t in threads:
            if coord:
                coord.register_thread(t)
            t.daemon = bool(daemon)
            if start:
                t.start()
        return threads


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS) -> None:
    """Adds `qr` to the graph collection `collection` (QUEUE_RUNNERS by default)."""
    add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=GraphKeys.QUEUE_RUNNERS) -> list:
    """Starts the threads of every QueueRunner in `collection` of `sess`'s graph."""
    if sess is None:
        from tensorweave.framework.default_session import get_default_session
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is "
                             "registered. Use `with sess.as_default()` or pass an "
                             "explicit session to tf.start_queue_runners(sess=sess)")
    with sess.graph.as_default():
        threads = []
        for qr in get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads


meta_graph.register_proto_function(GraphKeys.QUEUE_RUNNERS, queue_runner_pb2.QueueRunnerDef,
                                   QueueRunner.to_proto, QueueRunner.from_proto)
