"""The standard hooks that need no files: stop at a step, log tensors, catch NaN losses,
feed each step, run final ops, wait for a global step (TF's basic_session_run_hooks)."""

from __future__ import annotations

import logging
import time

import numpy as np

from tensorweave import errors
from tensorweave.framework.graph import get_default_graph
from tensorweave.training.hooks.timers import NeverTriggerTimer, SecondOrStepTimer
from tensorweave.training.session_run_hook import SessionRunArgs, SessionRunHook
from tensorweave.training.training_util import get_or_create_global_step_read

_log = logging.getLogger("tensorweave")


def global_step_read_or_raise(hook_name: str):
    """The cached global-step read tensor; RuntimeError naming the hook when there is none."""
    tensor = get_or_create_global_step_read()
    if tensor is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return tensor


def as_graph_element(obj):
    """A tensor (or its name) of the default graph; a bare op name must have one output.

    Raises:
      ValueError: `obj` belongs to another graph, or an op name is ambiguous.
    """
    graph = get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError(f"Passed {obj} should have graph attribute that is equal to "
                             f"current graph {graph}.")
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError):
        return element
    raise ValueError(f"Name {obj} is ambiguous, as this `Operation` has multiple outputs "
                     "(at least 2).")


class StopAtStepHook(SessionRunHook):
    """Requests a stop when the global step reaches `last_step` (or start + `num_steps`).

    Raises (constructor): ValueError unless exactly one of `num_steps`, `last_step` is given.
    """

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self):
        self._global_step_tensor = global_step_read_or_raise("StopAtStepHook")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = session.run(self._global_step_tensor) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if run_values.results + 1 >= self._last_step:
            # NOTE: the fetched value may predate this step's increment; read it again.
            if run_context.session.run(self._global_step_tensor) >= self._last_step:
                run_context.request_stop()


class LoggingTensorHook(SessionRunHook):
    """Logs tensors (`{tag: tensor}` or a list of tensors/names) every N steps or seconds,
    and/or at the end: `loss = 0.25, step = 100 (0.123 sec)`.

    Raises (constructor): ValueError unless `at_end` and/or exactly one period is given.
    """

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and "
                             "every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if isinstance(tensors, dict):
            self._tag_order = sorted(tensors.keys())
        else:
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        self._tensors = tensors
        self._formatter = formatter
        self._timer = (NeverTriggerTimer() if only_at_end else
                       SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter))
        self._log_at_end = at_end

    def begin(self):
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: as_graph_element(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, values) -> None:
        elapsed, _ = self._timer.update_last_triggered_step(self._iter_count)
        with np.printoptions(suppress=True):
            if self._formatter:
                _log.info(self._formatter(values))
                return
            stats = ", ".join(f"{tag} = {values[tag]!s}" for tag in self._tag_order)
        if elapsed is not None:
            _log.info("%s (%.3f sec)", stats, elapsed)
        else:
            _log.info("%s", stats)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self) -> str:
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fails (NanLossDuringTrainingError) or requests a stop when `loss_tensor` is NaN."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                _log.error(message)
                raise NanLossDuringTrainingError
            _log.warning(message)
            run_context.request_stop()


class FeedFnHook(SessionRunHook):
    """Feeds `feed_fn()` (a feed dict) into every step."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


_FINAL_OPS_INPUT_WARNING = (
    "An OutOfRangeError or StopIteration exception is raised by the code in FinalOpsHook. "
    "This typically means the Ops running by the FinalOpsHook have a dependency back to some "
    "input source, which should not happen. For example, for metrics in "
    "tf.estimator.Estimator, all metrics functions return two Ops: `value_op` and "
    "`update_op`. The `value_op` should depend on variable reads only, not on another batch "
    "of input.")


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` when the session ends; their values are in `final_ops_values`."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is None:
            return
        try:
            self._final_ops_values = session.run(self._final_ops,
                                                 feed_dict=self._final_ops_feed_dict)
        except (errors.OutOfRangeError, StopIteration):
            _log.warning(_FINAL_OPS_INPUT_WARNING)
            raise


class GlobalStepWaiterHook(SessionRunHook):
    """Holds this worker's first step until the global step reaches `wait_until_step`
    (lets the chief start first). Polls every 0.5 s; a coordinator stop ends the wait."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = False
        self._global_step_tensor = global_step_read_or_raise("_GlobalStepWaiterHook")

    def after_create_session(self, session, coord):
        self._coord = coord

    def before_run(self, run_context):
        if self._worker_is_started:
            return None
        if self._wait_until_step > 0:
            self._wait(run_context.session)
        self._worker_is_started = True
        return None

    def _wait(self, session) -> None:
        _log.info("Waiting for global step %d before starting training.", self._wait_until_step)
        last_logged = 0
        coord = getattr(self, "_coord", None)
        while True:
            current = session.run(self._global_step_tensor)
            if current >= self._wait_until_step or (coord is not None and coord.should_stop()):
                return
            if current - last_logged > 1000:
                _log.info("Waiting for global step %d before starting training. Current step "
                          "is %d.", self._wait_until_step, current)
                last_logged = current
            time.sleep(0.5)
