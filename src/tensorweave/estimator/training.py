"""`TrainSpec`, `EvalSpec` and `train_and_evaluate`, locally or as one task of a cluster.

Without a cluster in `TF_CONFIG`, it trains, then evaluates after each chunk of training until
`max_steps` (TF's local loop: evaluations follow checkpoints). With one, each process runs its
role, as TF 1.15's `_TrainingExecutor` does:
- `ps`: serves its task (`tf.train.Server`) and joins it, never returning;
- `chief` (or `master`) and `worker`: serve their task and train with the Estimator's
  `replica_device_setter` over the ps tasks and `MonitoredTrainingSession(master=own task,
  is_chief)`; only the chief writes checkpoints and summaries. A worker first waits
  `min(60, 5 * (task_id + 1))` s so the chief can initialise the model;
- `evaluator`: after `start_delay_secs`, evaluates each new checkpoint in `model_dir` (a shared
  filesystem), at most one pass per `throttle_secs`, until it has evaluated one whose global
  step reached `max_steps`; returns (its metrics, its export results).
Every evaluation (local or the evaluator's) is followed by the EvalSpec's exporters, writing
SavedModels under `model_dir/export/<name>/<timestamp>` (estimator/exporter.py).
"""

from __future__ import annotations

import logging
import time
from collections import namedtuple

_log = logging.getLogger("tensorweave.estimator")
_DELAY_SECS_PER_WORKER = 5
_MAX_DELAY_SECS = 60


class TrainSpec(namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks"])):
    """What to train on and for how long. Raises ValueError/TypeError for bad values."""

    def __new__(cls, input_fn, max_steps=None, hooks=None):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        return super().__new__(cls, input_fn, max_steps, tuple(hooks or ()))


class EvalSpec(namedtuple("EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters",
                                       "start_delay_secs", "throttle_secs"])):
    """What to evaluate on: `steps` batches (None: the whole input) every `throttle_secs`."""

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {throttle_secs}")
        return super().__new__(cls, input_fn, steps, name, tuple(hooks or ()),
                               _exporters(exporters), start_delay_secs, throttle_secs)


def _exporters(exporters) -> tuple:
    """`exporters` as a tuple. Raises TypeError (not Exporters), ValueError (a name twice)."""
    from tensorweave.estimator.exporter import Exporter

    if exporters is None:
        return ()
    if isinstance(exporters, Exporter):
        exporters = (exporters,)
    try:
        out = tuple(exporters)
    except TypeError:
        out = None
    if out is None or not all(isinstance(e, Exporter) for e in out):
        raise TypeError(f"`exporters` must be an Exporter, an iterable of Exporter, or "
                        f"`None`, found {exporters}.")
    names = [e.name for e in out]
    if len(set(names)) != len(names):
        raise ValueError(f"`exporters` must have unique names. Such a name cannot be "
                         f"`None`. {names} was given.")
    return out


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains `estimator` to `train_spec.max_steps`, evaluating after each chunk of
    `save_checkpoints_steps` steps (or once at the end), each evaluation followed by the
    `eval_spec.exporters` (estimator/exporter.py). Returns (the last evaluation's metrics,
    its export results) where the process evaluates (locally, the evaluator); None on the
    chief and the workers.

    Raises:
      TypeError: the specs are not TrainSpec/EvalSpec.
    """
    from tensorweave.estimator.estimator import Estimator
    if not isinstance(estimator, Estimator):
        raise TypeError(f"`estimator` must have type `tf.estimator.Estimator`, given "
                        f"{type(estimator)}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`, given "
                        f"{type(train_spec)}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`, given "
                        f"{type(eval_spec)}")
    config = estimator.config
    if not config.cluster_spec and config.task_type != "evaluator":
        return _run_local(estimator, train_spec, eval_spec)
    if config.task_type == "evaluator" and config.task_id > 0:
        raise ValueError(f"For distributed training, there can only be one `evaluator` task "
                         f"(with task id 0).  Given task id {config.task_id}")
    role = _ROLES.get(config.task_type)
    if role is None:
        raise ValueError(f"Task type {config.task_type} is not supported. Supported task "
                         f"types are {sorted(_ROLES)}")
    return role(estimator, train_spec, eval_spec)


def _run_local(estimator, train_spec, eval_spec):
    chunk = estimator.config.save_checkpoints_steps
    metrics = None
    while True:
        before = estimator._global_step_on_disk()
        target = train_spec.max_steps
        if chunk and target is not None:
            target = min(target, before + chunk)
        elif chunk:
            target = before + chunk
        estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks), max_steps=target)
        latest = estimator.latest_checkpoint()
        metrics = estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps,
                                     hooks=list(eval_spec.hooks), name=eval_spec.name,
                                     checkpoint_path=latest)
        after = estimator._global_step_on_disk()
        done = train_spec.max_steps is not None and after >= train_spec.max_steps
        last = done or after == before or not chunk
        exports = _export(estimator, train_spec, eval_spec, latest, metrics)
        if last:
            return metrics, exports


def _export(estimator, train_spec, eval_spec, checkpoint_path, metrics) -> list:
    """The exporters' results for one evaluation (final: it reached `max_steps`)."""
    from tensorweave.estimator.exporter import export_all

    final = bool(train_spec.max_steps) and metrics["global_step"] >= train_spec.max_steps
    return export_all(eval_spec.exporters, estimator, checkpoint_path, metrics, final)


# -- the roles of a cluster ----------------------------------------------------------------------
def _start_server(config):
    """This task's server (what its sessions and the other tasks talk to)."""
    from tensorweave.distributed.server import Server

    _log.info("Start Tensorflow server.")
    return Server(config.cluster_spec, job_name=config.task_type, task_index=config.task_id,
                  config=config.session_config, start=True)


def _run_ps(estimator, train_spec, eval_spec):
    """Serves the ps task until the process ends (TF's ps never returns)."""
    _start_server(estimator.config).join()


def _run_chief(estimator, train_spec, eval_spec):
    _train_on_own_server(estimator, train_spec, delay_s=0)


def _run_worker(estimator, train_spec, eval_spec):
    delay = min(_MAX_DELAY_SECS, (estimator.config.task_id + 1) * _DELAY_SECS_PER_WORKER)
    _train_on_own_server(estimator, train_spec, delay)


def _train_on_own_server(estimator, train_spec, delay_s: float) -> None:
    """Serves this task while the Estimator trains through it; stops serving after."""
    server = _start_server(estimator.config)
    try:
        if delay_s:
            _log.info("Waiting %d secs before starting training.", delay_s)
            time.sleep(delay_s)
        estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks),
                        max_steps=train_spec.max_steps)
    finally:
        server.stop()


def _run_evaluator(estimator, train_spec, eval_spec):
    """Evaluates (and exports) new checkpoints until one reached `max_steps`; returns its
    metrics and export results."""
    if eval_spec.start_delay_secs:
        _log.info("Waiting %f secs before starting eval.", eval_spec.start_delay_secs)
        time.sleep(eval_spec.start_delay_secs)
    previous, metrics, exports = None, None, []
    while True:
        step = (metrics or {}).get("global_step")
        if step is not None and train_spec.max_steps and step >= train_spec.max_steps:
            _log.info("Exiting evaluation, global_step=%s >= train max_steps=%s", step,
                      train_spec.max_steps)
            return metrics, exports
        started = time.monotonic()
        latest = estimator.latest_checkpoint()
        if latest is None:
            _log.info("Estimator is not trained yet. Will start an evaluation when a "
                      "checkpoint is ready.")
        elif latest == previous:
            _log.info("No new checkpoint ready for evaluation. Skip the current evaluation "
                      "pass as evaluation results are expected to be same for the same "
                      "checkpoint.")
        else:
            metrics = estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps,
                                         hooks=list(eval_spec.hooks), name=eval_spec.name,
                                         checkpoint_path=latest)
            exports = _export(estimator, train_spec, eval_spec, latest, metrics)
            previous = latest
        left = eval_spec.throttle_secs - (time.monotonic() - started)
        if left > 0:
            _log.info("Waiting %f secs before starting next eval run.", left)
            time.sleep(left)


_ROLES = {"ps": _run_ps, "chief": _run_chief, "master": _run_chief, "worker": _run_worker,
          "evaluator": _run_evaluator}
