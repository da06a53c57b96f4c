"""`tf.estimator.Exporter` and its three kinds (TF 1.15's estimator/exporter.py): what
`train_and_evaluate` does with each evaluation of an `EvalSpec(exporters=[...])`.

After every evaluation, each exporter is asked to `export(estimator, export_path,
checkpoint_path, eval_result, is_the_final_export)` with `export_path` =
`model_dir/export/<exporter name>`; an export is a SavedModel in a timestamped directory
there (`Estimator.export_saved_model`), and `export` returns its path (bytes), or None when
it exported nothing.
- `LatestExporter` exports every time, keeping the newest `exports_to_keep`;
- `FinalExporter` exports only the final evaluation (the one that reached `max_steps`);
- `BestExporter` exports when `compare_fn(best_eval_result, current_eval_result)` says the
  new result is better (default: a smaller `loss`), the best so far first read back from the
  eval events under `model_dir` (`event_file_pattern`), so a restarted job keeps its best.
"""

from __future__ import annotations

import abc
import glob
import inspect
import logging
import os
import shutil

_log = logging.getLogger("tensorweave.estimator")


class Exporter(abc.ABC):
    """Exports a model after an evaluation (see the module docstring)."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The directory under `model_dir/export/` its exports go to."""

    @abc.abstractmethod
    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        """Exports (or not); returns the export's path, or None."""


class _SavedModelExporter(Exporter):
    """Exports the estimator's serving graph at `checkpoint_path` every time."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        self._name = name
        self._serving_input_receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text

    @property
    def name(self) -> str:
        return self._name

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        return estimator.export_saved_model(
            export_path, self._serving_input_receiver_fn, assets_extra=self._assets_extra,
            as_text=self._as_text, checkpoint_path=checkpoint_path)


def _check_keep(exports_to_keep) -> None:
    if exports_to_keep is not None and exports_to_keep <= 0:
        raise ValueError(f"`exports_to_keep`, if provided, must be a positive number. Got "
                         f"{exports_to_keep}")


def _garbage_collect(export_path, exports_to_keep) -> None:
    """Deletes all but the newest `exports_to_keep` timestamped exports under `export_path`."""
    if exports_to_keep is None:
        return
    base = os.fsdecode(export_path)
    try:
        names = [n for n in os.listdir(base) if n.isdigit()]
    except FileNotFoundError:
        return
    for old in sorted(names, key=int)[:-exports_to_keep]:
        _log.info("Deleting old export %s", os.path.join(base, old))
        shutil.rmtree(os.path.join(base, old), ignore_errors=True)


class LatestExporter(_SavedModelExporter):
    """Exports after every evaluation; keeps the newest `exports_to_keep` (None: all)."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False,
                 exports_to_keep=5):
        _check_keep(exports_to_keep)
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        self._exports_to_keep = exports_to_keep

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        path = super().export(estimator, export_path, checkpoint_path, eval_result,
                              is_the_final_export)
        _garbage_collect(export_path, self._exports_to_keep)
        return path


class FinalExporter(_SavedModelExporter):
    """Exports once, after the final evaluation."""

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if not is_the_final_export:
            return None
        _log.info("Performing the final export in the end of training.")
        return super().export(estimator, export_path, checkpoint_path, eval_result,
                              is_the_final_export)


def _loss_smaller(best_eval_result, current_eval_result):
    """Whether `current_eval_result` has a smaller `loss` than `best_eval_result`.

    Raises: ValueError when either is empty or has no loss.
    """
    if not best_eval_result or "loss" not in best_eval_result:
        raise ValueError("best_eval_result cannot be empty or no loss is found in it.")
    if not current_eval_result or "loss" not in current_eval_result:
        raise ValueError("current_eval_result cannot be empty or no loss is found in it.")
    return best_eval_result["loss"] > current_eval_result["loss"]


def _check_compare_fn(compare_fn) -> None:
    if compare_fn is None:
        raise ValueError("`compare_fn` must not be None.")
    args = list(inspect.signature(compare_fn).parameters)
    if len(args) != 2:
        raise ValueError(f"compare_fn ({compare_fn}) must include 2 arguments.")
    if args[0] != "best_eval_result":
        raise ValueError(f"compare_fn ({compare_fn}) must include best_eval_result argument.")
    if args[1] != "current_eval_result":
        raise ValueError(f"compare_fn ({compare_fn}) must include current_eval_result "
                         f"argument.")


class BestExporter(_SavedModelExporter):
    """Exports when an evaluation beats the best so far (`compare_fn`); keeps the newest
    `exports_to_keep` exports (None: all).

    Raises (constructor): ValueError for a `compare_fn` without TF's two arguments
    (`best_eval_result`, `current_eval_result`) or `exports_to_keep` <= 0.
    """

    def __init__(self, name="best_exporter", serving_input_receiver_fn=None,
                 event_file_pattern="eval/*.tfevents.*", compare_fn=_loss_smaller,
                 assets_extra=None, as_text=False, exports_to_keep=5):
        _check_compare_fn(compare_fn)
        _check_keep(exports_to_keep)
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        self._event_file_pattern = event_file_pattern
        self._compare_fn = compare_fn
        self._exports_to_keep = exports_to_keep
        self._model_dir = None
        self._best_eval_result = None

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if self._model_dir != estimator.model_dir and self._event_file_pattern:
            self._model_dir = estimator.model_dir
            pattern = os.path.join(estimator.model_dir, self._event_file_pattern)
            self._best_eval_result = self._best_in_events(pattern)
        if self._best_eval_result is not None and not self._compare_fn(
                best_eval_result=self._best_eval_result, current_eval_result=eval_result):
            return None
        _log.info("Exporting a better model (%s instead of %s)...", eval_result,
                  self._best_eval_result)
        path = super().export(estimator, export_path, checkpoint_path, eval_result,
                              is_the_final_export)
        self._best_eval_result = eval_result
        _garbage_collect(export_path, self._exports_to_keep)
        return path

    def _best_in_events(self, pattern: str):
        """The best evaluation result written to the event files matching `pattern`."""
        from tensorweave.formats.events import summary_iterator

        best = None
        for path in sorted(glob.glob(pattern)):
            for event in summary_iterator(path):
                if not event.HasField("summary"):
                    continue
                result = {v.tag: v.simple_value for v in event.summary.value}
                if not result:
                    continue
                if best is None or self._compare_fn(best_eval_result=best,
                                                    current_eval_result=result):
                    best = result
        return best


def export_all(exporters, estimator, checkpoint_path, eval_result,
               is_the_final_export) -> list:
    """Runs every exporter on one evaluation; returns their results (TF's export_results:
    a path, or None where one exported nothing), in order."""
    base = os.path.join(os.fsdecode(estimator.model_dir), "export")
    return [e.export(estimator=estimator, export_path=os.path.join(base, e.name),
                     checkpoint_path=checkpoint_path, eval_result=eval_result,
                     is_the_final_export=is_the_final_export) for e in exporters]


__all__ = ["BestExporter", "Exporter", "FinalExporter", "LatestExporter", "export_all"]
