"""`ProfilerHook`: every N steps or seconds, traces one step (FULL_TRACE) and writes it as a
Chrome trace `timeline-<step>.json` plus the RunMetadata event for TensorBoard."""

from __future__ import annotations

import logging
import os

from tensorweave.monitoring.summary.writer import FileWriterCache
from tensorweave.monitoring.timeline import Timeline
from tensorweave.proto.config_pb2 import RunOptions
from tensorweave.training.hooks.basic import global_step_read_or_raise
from tensorweave.training.hooks.timers import SecondOrStepTimer
from tensorweave.training.session_run_hook import SessionRunArgs, SessionRunHook

_log = logging.getLogger("tensorweave")


class ProfilerHook(SessionRunHook):
    """Captures a step's timeline every `save_steps` / `save_secs` into `output_dir`.

    Raises:
      ValueError (constructor): not exactly one period.
      RuntimeError (begin): no global step.
    """

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True,
                 show_memory=False):
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._file_writer = FileWriterCache.get(output_dir)
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        self._next_step = None
        self._global_step_tensor = global_step_read_or_raise("ProfilerHook")

    def before_run(self, run_context):
        self._request_summary = (self._next_step is not None
                                 and self._timer.should_trigger_for_step(self._next_step))
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) if self._request_summary else None
        return SessionRunArgs({"global_step": self._global_step_tensor}, options=options)

    def after_run(self, run_context, run_values):
        stale = run_values.results["global_step"]
        if self._next_step is None:
            # NOTE: start the period now, so the first trace is N steps/seconds in.
            self._timer.update_last_triggered_step(stale)
        step = stale + 1
        if self._request_summary:
            step = run_context.session.run(self._global_step_tensor)
            self._timer.update_last_triggered_step(step)
            self._save(step, self._output_file.format(step), run_values.run_metadata.step_stats)
            self._file_writer.add_run_metadata(run_values.run_metadata, f"step_{step}")
        self._next_step = step + 1

    def _save(self, step, path, step_stats) -> None:
        _log.info("Saving timeline for %d into '%s'.", step, path)
        trace = Timeline(step_stats).generate_chrome_trace_format(
            show_dataflow=self._show_dataflow, show_memory=self._show_memory)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w") as f:
            f.write(trace)
