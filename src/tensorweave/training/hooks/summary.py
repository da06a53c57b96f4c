"""Hooks that write TensorBoard events: `StepCounterHook` (global_step/sec) and
`SummarySaverHook` (the summary op every N steps or seconds), through FileWriterCache."""

from __future__ import annotations

import logging

from tensorweave.monitoring.summary.writer import FileWriterCache
from tensorweave.ops.variable_scope import get_global_step
from tensorweave.proto.event_pb2 import SessionLog
from tensorweave.proto.summary_pb2 import Summary
from tensorweave.training.hooks.basic import global_step_read_or_raise
from tensorweave.training.hooks.timers import SecondOrStepTimer
from tensorweave.training.session_run_hook import SessionRunArgs, SessionRunHook

_log = logging.getLogger("tensorweave")
_STALL_WARNINGS = 5


class StepCounterHook(SessionRunHook):
    """Logs and records `global_step/sec` every N steps or seconds; warns (5 times) when the
    global step does not move.

    Raises:
      ValueError (constructor): not exactly one of `every_n_steps`, `every_n_secs`.
      RuntimeError (begin): no global step.
    """

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step = None
        self._steps_per_run = 1
        self._stall_warnings = 0

    def _set_steps_per_run(self, steps_per_run) -> None:
        self._steps_per_run = steps_per_run

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step_tensor = global_step_read_or_raise("StepCounterHook")
        self._summary_tag = get_global_step().op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def _log_and_record(self, elapsed_steps, elapsed_time, global_step) -> None:
        steps_per_sec = elapsed_steps / elapsed_time
        if self._summary_writer is not None:
            summary = Summary(value=[Summary.Value(tag=self._summary_tag,
                                                   simple_value=steps_per_sec)])
            self._summary_writer.add_summary(summary, global_step)
        _log.info("%s: %g", self._summary_tag, steps_per_sec)

    def after_run(self, run_context, run_values):
        stale = run_values.results
        if self._timer.should_trigger_for_step(stale + self._steps_per_run):
            step = run_context.session.run(self._global_step_tensor)
            if self._timer.should_trigger_for_step(step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(step)
                if elapsed_time is not None and elapsed_time > 0:
                    self._log_and_record(elapsed_steps, elapsed_time, step)
        if stale == self._last_global_step and self._stall_warnings < _STALL_WARNINGS:
            self._stall_warnings += 1
            _log.warning(
                "It seems that global step (tf.train.get_global_step) has not been increased. "
                "Current value (could be stable): %s vs previous value: %s. You could increase "
                "the global step by passing tf.train.get_global_step() to "
                "Optimizer.apply_gradients or Optimizer.minimize.", stale, self._last_global_step)
        self._last_global_step = stale


class SummarySaverHook(SessionRunHook):
    """Runs the summary op (given, or the scaffold's) every N steps or seconds and writes it
    at the step's global step; a START SessionLog first.

    Raises:
      ValueError (constructor): not exactly one of `scaffold`, `summary_op`; or not exactly
        one period.
      RuntimeError (begin): no global step.
    """

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._next_step = None
        self._global_step_tensor = global_step_read_or_raise("SummarySaverHook")

    def before_run(self, run_context):
        self._request_summary = (self._next_step is None
                                 or self._timer.should_trigger_for_step(self._next_step))
        requests = {"global_step": self._global_step_tensor}
        summary_op = self._get_summary_op() if self._request_summary else None
        if summary_op is not None:
            requests["summary"] = summary_op
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        if not self._summary_writer:
            return
        step = run_values.results["global_step"] + 1
        if self._next_step is None or self._request_summary:
            step = run_context.session.run(self._global_step_tensor)
        if self._next_step is None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), step)
        if self._request_summary:
            self._timer.update_last_triggered_step(step)
            for summary in run_values.results.get("summary", []):
                self._summary_writer.add_summary(summary, step)
        self._next_step = step + 1

    def end(self, session=None):
        if self._summary_writer:
            self._summary_writer.flush()

    def _get_summary_op(self):
        op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        if op is None:
            return None
        return op if isinstance(op, list) else [op]
