"""`tf.train.Supervisor` (TF1's pre-MonitoredSession training helper): initializes or restores
a session through a SessionManager, and on the chief runs the standard services as threads
(summaries and global_step/sec every `save_summaries_secs`, a checkpoint every
`save_model_secs`) plus the graph's queue runners, all under one Coordinator.

    sv = tf.train.Supervisor(logdir="/tmp/train")
    with sv.managed_session() as sess:
        while not sv.should_stop():
            sess.run(train_op)
"""

from __future__ import annotations

import contextlib
import logging
import os
import time

from tensorweave import dtypes
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.monitoring.summary.writer import FileWriter
from tensorweave.ops.control_flow_ops import group
from tensorweave.ops.summary_ops import merge_all
from tensorweave.ops.variable_scope import global_step as read_global_step
from tensorweave.ops.variables import (
    global_variables,
    global_variables_initializer,
    local_variables_initializer,
    report_uninitialized_variables,
)
from tensorweave.proto.event_pb2 import SessionLog
from tensorweave.proto.summary_pb2 import Summary
from tensorweave.training.coordinator import Coordinator, LooperThread
from tensorweave.training.graph_io import write_graph
from tensorweave.training.meta_graph import create_meta_graph_def
from tensorweave.training.saver import Saver
from tensorweave.training.session_manager import SessionManager

_log = logging.getLogger("tensorweave")


class Supervisor:
    """See the module docstring. `USE_DEFAULT` arguments are taken from the graph's
    collections, else built (and added there); pass None to switch one off.

    Raises (constructor):
      ValueError: a non-chief graph holds a variable without a device.
    """

    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT,
                 is_chief=True, init_op=USE_DEFAULT, init_feed_dict=None,
                 local_init_op=USE_DEFAULT, logdir=None, summary_op=USE_DEFAULT,
                 saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        self._graph = graph if graph is not None else get_default_graph()
        with self._graph.as_default():
            self._init_ops(ready_op, ready_for_local_init_op, init_op, local_init_op)
            self._init_feed_dict = init_feed_dict
            self._saver = self._init_saver(saver)
            self._summary_op = self._init_summary_op(summary_op)
            self._global_step = self._init_global_step(global_step)
        self._meta_graph_def = create_meta_graph_def(
            graph_def=self._graph.as_graph_def(add_shapes=True),
            saver_def=self._saver.saver_def if self._saver else None)
        self._is_chief = is_chief
        self._coord = Coordinator()
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        self._local_init_run_options = local_init_run_options
        self._logdir = self._save_summaries_secs = self._save_model_secs = None
        self._save_path = self._summary_writer = None
        if is_chief:
            self._init_chief_io(logdir, save_summaries_secs, save_model_secs,
                                checkpoint_basename, summary_writer)
        self._session_manager = session_manager or SessionManager(
            local_init_op=self._local_init_op, ready_op=self._ready_op,
            ready_for_local_init_op=self._ready_for_local_init_op, graph=self._graph,
            recovery_wait_secs=recovery_wait_secs,
            local_init_run_options=local_init_run_options)
        self._verify_setup()
        self._graph.finalize()

    # -- defaults from the graph -------------------------------------------------------------
    def _get_first_op_from_collection(self, key):
        found = self._graph.get_collection(key)
        if len(found) > 1:
            _log.info("Found %d %s operations. Returning the first one.", len(found), key)
        return found[0] if found else None

    def _default(self, given, key, build):
        if given is not Supervisor.USE_DEFAULT:
            return given
        value = self._get_first_op_from_collection(key)
        if value is None:
            value = build()
            if value is not None:
                self._graph.add_to_collection(key, value)
        return value

    def _init_ops(self, ready_op, ready_for_local_init_op, init_op, local_init_op) -> None:
        self._ready_op = self._default(ready_op, GraphKeys.READY_OP,
                                       report_uninitialized_variables)
        self._ready_for_local_init_op = self._default(
            ready_for_local_init_op, GraphKeys.READY_FOR_LOCAL_INIT_OP, lambda: None)
        self._init_op = self._default(init_op, GraphKeys.INIT_OP, global_variables_initializer)
        self._local_init_op = self._default(
            local_init_op, GraphKeys.LOCAL_INIT_OP,
            lambda: group(local_variables_initializer(),
                          *self._graph.get_collection(GraphKeys.TABLE_INITIALIZERS)))

    def _init_saver(self, saver):
        return self._default(saver, GraphKeys.SAVERS,
                             lambda: Saver() if global_variables() else None)

    def _init_summary_op(self, summary_op):
        return self._default(summary_op, GraphKeys.SUMMARY_OP, merge_all)

    def _init_global_step(self, global_step):
        return self._default(global_step, GraphKeys.GLOBAL_STEP, self._default_global_step)

    def _default_global_step(self):
        try:
            step = self._graph.get_tensor_by_name("global_step:0")
        except KeyError:
            return None
        if step.dtype.base_dtype in (dtypes.int32, dtypes.int64):
            return step
        _log.warning("Found 'global_step' is not an int type: %s", step.dtype)
        return None

    def _init_chief_io(self, logdir, save_summaries_secs, save_model_secs, basename,
                       summary_writer) -> None:
        self._logdir = logdir
        self._save_summaries_secs = save_summaries_secs
        self._save_model_secs = save_model_secs
        if logdir:
            self._save_path = os.path.join(logdir, basename)
        if summary_writer is Supervisor.USE_DEFAULT:
            self._summary_writer = FileWriter(logdir) if logdir else None
        else:
            self._summary_writer = summary_writer
        self._graph_added_to_summary = False

    def _verify_setup(self) -> None:
        if self._is_chief:
            return
        for op in self._graph.get_operations():
            if op.type in ("Variable", "VariableV2") and not op.device:
                raise ValueError("When using replicas, all Variables must have their device "
                                 f"set: {op}")

    # -- properties --------------------------------------------------------------------------
    is_chief = property(lambda self: self._is_chief)
    session_manager = property(lambda self: self._session_manager)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    global_step = property(lambda self: self._global_step)
    saver = property(lambda self: self._saver)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_path = property(lambda self: self._save_path)

    # -- sessions and services ---------------------------------------------------------------
    def _write_graph(self) -> None:
        if self._logdir:
            write_graph(self._graph.as_graph_def(add_shapes=True), self._logdir, "graph.pbtxt")
        if self._summary_writer and not self._graph_added_to_summary:
            self._summary_writer.add_graph(self._graph)
            self._summary_writer.add_meta_graph(self._meta_graph_def)
            self._graph_added_to_summary = True

    def start_standard_services(self, sess):
        """Starts the summary, step-counter and checkpoint threads (chief only); returns them.

        Raises:
          RuntimeError: not the chief.
        """
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because "
                               "only chief supervisors can write events.")
        if not self._logdir:
            _log.warning("Standard services need a 'logdir' passed to the SessionManager")
            return None
        if self._global_step is not None and self._summary_writer:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START),
                                                 read_global_step(sess, self._global_step))
        threads = []
        if self._save_summaries_secs and self._summary_writer:
            if self._summary_op is not None:
                threads.append(SVSummaryThread(self, sess))
            if self._global_step is not None:
                threads.append(SVStepCounterThread(self, sess))
        if self.saver and self._save_model_secs:
            threads.append(SVTimerCheckpointThread(self, sess))
        for thread in threads:
            thread.start()
        return threads

    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        """The chief prepares (restores from `logdir` or initializes) a session; a worker
        waits for the chief. Then services and queue runners start."""
        self._coord.clear_stop()
        if self._summary_writer:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self.init_op, saver=self.saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
                config=config, init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                _log.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config,
                                                          max_wait_secs=max_wait_secs)
        if start_standard_services:
            _log.info("Starting queue runners.")
            self.start_queue_runners(sess)
        return sess

    def start_queue_runners(self, sess, queue_runners=None):
        """Starts the (graph's) queue runners' threads under the coordinator."""
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads = []
        for runner in queue_runners:
            threads.extend(runner.create_threads(sess, coord=self._coord, daemon=True,
                                                 start=True))
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling `target(*args, **kwargs)` every interval."""
        return LooperThread.loop(self._coord, timer_interval_secs, target, args, kwargs)

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Stops the services and waits for threads (up to `stop_grace_secs`); a thread's
        error is raised here. Then writes a STOP SessionLog and closes the writer."""
        self._coord.request_stop()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            if close_summary_writer and self._summary_writer:
                self._summary_writer.add_session_log(SessionLog(status=SessionLog.STOP))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex=None) -> None:
        self._coord.request_stop(ex=ex)

    def should_stop(self) -> bool:
        return self._coord.should_stop()

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def wait_for_stop(self) -> None:
        self._coord.wait_for_stop()

    def summary_computed(self, sess, summary, global_step=None) -> None:
        """Writes a summary computed by the caller, at the current global step by default.

        Raises:
          RuntimeError: there is no summary writer.
        """
        if not self._summary_writer:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self.global_step is not None:
            global_step = read_global_step(sess, self.global_step)
        self._summary_writer.add_summary(summary, global_step)

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        """A prepared session for a `with` block; on exit the services stop (an exception in
        the block or a thread is re-raised then, OutOfRangeError excepted) and the session
        closes."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(
                master=master, config=config, start_standard_services=start_standard_services)
            yield sess
        except Exception as e:  # noqa: BLE001 - handed to the coordinator, raised by stop()
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                with contextlib.suppress(Exception):
                    if sess is not None:
                        sess.close()

    # TF1's CamelCase aliases.
    Loop = loop
    PrepareSession = prepare_or_wait_for_session
    RequestStop = request_stop
    ShouldStop = should_stop
    StartQueueRunners = start_queue_runners
    StartStandardServices = start_standard_services
    Stop = stop
    StopOnException = stop_on_exception
    SummaryComputed = summary_computed
    WaitForStop = wait_for_stop


class SVSummaryThread(LooperThread):
    """Runs the summary op every `save_summaries_secs` and writes it at the global step."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self):
        if self._sv.global_step is not None:
            summary, step = self._sess.run([self._sv.summary_op, self._sv.global_step])
        else:
            summary, step = self._sess.run(self._sv.summary_op), None
        if self._sv.summary_writer:
            _log.info("Recording summary at step %s.", step)
            self._sv.summary_writer.add_summary(summary, step)


class SVStepCounterThread(LooperThread):
    """Records `global_step/sec` every `save_summaries_secs`."""

    def __init__(self, sv, sess, step_counter=None):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess
        self._step_counter = sv.global_step if step_counter is None else step_counter
        self._summary_tag = f"{self._step_counter.op.name}/sec"
        self._last_time, self._last_step, self._logged = 0.0, 0, 0

    def start_loop(self):
        self._last_time = time.time()
        self._last_step = read_global_step(self._sess, self._step_counter)

    def run_loop(self):
        step = read_global_step(self._sess, self._step_counter)
        added, self._last_step = step - self._last_step, step
        now = time.time()
        elapsed, self._last_time = now - self._last_time, now
        rate = added / elapsed if elapsed > 0.0 else float("inf")
        summary = Summary(value=[Summary.Value(tag=self._summary_tag, simple_value=rate)])
        if self._sv.summary_writer:
            self._sv.summary_writer.add_summary(summary, step)
        if self._logged < 10:
            self._logged += 1
            _log.info("%s: %g", self._summary_tag, rate)


class SVTimerCheckpointThread(LooperThread):
    """Saves a checkpoint every `save_model_secs` (the first at once)."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self):
        _log.info("Saving checkpoint to path %s", self._sv.save_path)
        self._sv.saver.save(self._sess, self._sv.save_path, global_step=self._sv.global_step)
        if self._sv.summary_writer and self._sv.global_step is not None:
            step = read_global_step(self._sess, self._sv.global_step)
            self._sv.summary_writer.add_session_log(
                SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._sv.save_path),
                step)
