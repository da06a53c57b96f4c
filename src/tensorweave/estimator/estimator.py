"""`tf.estimator.Estimator`: a model_fn run for training, evaluation and prediction, each in
a fresh graph, with its state in checkpoints under `model_dir` (TF 1.15's behaviour).

- `train` builds the TRAIN graph and runs `train_op` in a MonitoredTrainingSession (restores
  the latest checkpoint of model_dir, saves checkpoints and summaries there) until the input
  ends, `steps` more steps ran, or the global step reaches `max_steps`.
- `evaluate` restores a checkpoint, runs every metric's update op over the input (or
  `steps` batches), and returns the metrics with `loss` and `global_step`; it writes them
  as an event file under `model_dir/eval` (or `eval_<name>`) for TensorBoard.
- `predict` yields the predictions of each example (or batch).
"""

from __future__ import annotations

import inspect
import logging
import os
import tempfile

import numpy as np

from tensorweave.estimator.deps import tf
from tensorweave.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorweave.estimator.run_config import RunConfig
from tensorweave.saved_model import export as export_lib
from tensorweave.saved_model.signature_constants import DEFAULT_SERVING_SIGNATURE_DEF_KEY

_log = logging.getLogger("tensorweave.estimator")




class Estimator:
    """Trains, evaluates and predicts with `model_fn(features, labels, mode, params, config)`.

    Raises:
      ValueError: model_dir disagrees with config.model_dir; model_fn lacks `features`.
    """

    def __init__(self, model_fn, model_dir=None, config=None, params=None,
                 warm_start_from=None):
        config = config or RunConfig()
        if not isinstance(config, RunConfig):
            raise ValueError(f"config must be an instance of RunConfig, but provided {config}.")
        model_dir = os.fspath(model_dir) if model_dir is not None else None
        if model_dir and config.model_dir and model_dir != config.model_dir:
            raise ValueError(f"model_dir are set both in constructor and RunConfig, but with "
                             f"different values. In constructor: '{model_dir}', in RunConfig: "
                             f"'{config.model_dir}'.")
        model_dir = model_dir or config.model_dir or tempfile.mkdtemp()
        self._config = config.replace(model_dir=model_dir)
        self._model_fn_args = set(inspect.signature(model_fn).parameters)
        if "features" not in self._model_fn_args:
            raise ValueError(f"model_fn ({model_fn}) must include features argument.")
        self._model_fn = model_fn
        self._params = dict(params or {})
        self._warm_start_from = warm_start_from

    model_dir = property(lambda self: self._config.model_dir)
    config = property(lambda self: self._config)
    params = property(lambda self: dict(self._params))
    model_fn = property(lambda self: self._model_fn)

    # -- checkpoints ----------------------------------------------------------------------
    def latest_checkpoint(self):
        return tf.train.latest_checkpoint(self.model_dir)

    def get_variable_names(self) -> list:
        return [name for name, _ in tf.train.list_variables(self._checkpoint())]

    def get_variable_value(self, name):
        return tf.train.load_variable(self._checkpoint(), name)

    def _checkpoint(self):
        ckpt = self.latest_checkpoint()
        if ckpt is None:
            raise ValueError(f"Could not find trained model in model_dir: {self.model_dir}.")
        return ckpt

    # -- building ---------------------------------------------------------------------------
    def _call_input_fn(self, input_fn, mode):
        args = set(inspect.signature(input_fn).parameters)
        kwargs = {k: v for k, v in (("mode", mode), ("params", self.params),
                                    ("config", self.config)) if k in args}
        result = input_fn(**kwargs)
        if isinstance(result, tf.data.Dataset):
            result = result.make_one_shot_iterator().get_next()
        if isinstance(result, (list, tuple)):
            if len(result) != 2:
                raise ValueError(f"input_fn should return (features, labels) as a len 2 "
                                 f"tuple, got {len(result)} items.")
            return result[0], result[1]
        return result, None

    def _call_model_fn(self, features, labels, mode) -> EstimatorSpec:
        kwargs = {}
        if "labels" in self._model_fn_args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        for name, value in (("mode", mode), ("params", self.params), ("config", self.config)):
            if name in self._model_fn_args:
                kwargs[name] = value
        spec = self._model_fn(features=features, **kwargs)
        if not isinstance(spec, EstimatorSpec):
            raise TypeError(f"model_fn should return an EstimatorSpec, got "
                            f"{type(spec).__name__}: {spec!r}")
        return spec

    def _graph(self):
        g = tf.Graph()
        with g.as_default():
            if self.config.tf_random_seed is not None:
                tf.set_random_seed(self.config.tf_random_seed)
        return g

    # -- train ------------------------------------------------------------------------------
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains until the input ends, `steps` more steps, or global step `max_steps`."""
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None and self._global_step_on_disk() >= max_steps:
            _log.info("Skipping training since max_steps has already saved.")
            return self
        g = self._graph()
        with g.as_default(), g.device(self._device_fn()):
            global_step = tf.train.get_or_create_global_step()
            features, labels = self._call_input_fn(input_fn, ModeKeys.TRAIN)
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN)
            self._run_train(spec, global_step, list(hooks or []), steps, max_steps,
                            saving_listeners)
        return self

    def _device_fn(self):
        """The config's `device_fn`, else with ps tasks in the cluster a replica device
        setter placing variables on them and every other op on this task (TF's)."""
        cfg = self.config
        if cfg.device_fn is not None or not cfg.num_ps_replicas:
            return cfg.device_fn
        return tf.train.replica_device_setter(
            ps_tasks=cfg.num_ps_replicas, worker_device=f"/job:{cfg.task_type}/task:{cfg.task_id}",
            merge_devices=True, cluster=cfg.cluster_spec)

    def _global_step_on_disk(self) -> int:
        ckpt = self.latest_checkpoint()
        if ckpt is None:
            return 0
        return int(tf.train.load_variable(ckpt, "global_step"))

    def _run_train(self, spec, global_step, hooks, steps, max_steps, listeners):
        stop = [] if steps is None and max_steps is None else [
            tf.train.StopAtStepHook(num_steps=steps, last_step=max_steps)]
        hooks = stop + [tf.train.NanTensorHook(spec.loss),
                 tf.train.LoggingTensorHook({"loss": spec.loss, "step": global_step},
                                            every_n_iter=self.config.log_step_count_steps or 100)
                 ] + list(spec.training_hooks) + hooks
        scaffold = spec.scaffold or tf.train.Scaffold()
        if not tf.get_collection(tf.GraphKeys.SAVERS) and scaffold.saver is None:
            tf.add_to_collection(tf.GraphKeys.SAVERS, tf.train.Saver(
                sharded=True, max_to_keep=self.config.keep_checkpoint_max,
                keep_checkpoint_every_n_hours=self.config.keep_checkpoint_every_n_hours,
                defer_build=True, save_relative_paths=True))
        chief_hooks = list(spec.training_chief_hooks)
        if listeners:
            chief_hooks.append(tf.train.CheckpointSaverHook(
                self.model_dir, save_secs=self.config.save_checkpoints_secs,
                save_steps=self.config.save_checkpoints_steps, scaffold=scaffold,
                listeners=listeners))
        # NOTE: with listeners the chief hook above saves, so the session adds none.
        secs = None if listeners else self.config.save_checkpoints_secs
        steps_ = None if listeners else self.config.save_checkpoints_steps
        with tf.train.MonitoredTrainingSession(
                master=self.config.master, is_chief=self.config.is_chief,
                max_wait_secs=self.config.session_creation_timeout_secs,
                checkpoint_dir=self.model_dir, scaffold=scaffold, hooks=hooks,
                chief_only_hooks=chief_hooks, config=self.config.session_config,
                save_summaries_steps=self.config.save_summary_steps,
                log_step_count_steps=self.config.log_step_count_steps,
                save_checkpoint_secs=secs, save_checkpoint_steps=steps_) as sess:
            loss = None
            while not sess.should_stop():
                _, loss = sess.run([spec.train_op, spec.loss])
        _log.info("Loss for final step: %s.", loss)

    # -- evaluate ---------------------------------------------------------------------------
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Metrics of the model in `checkpoint_path` (default: the latest) over the input.

        Returns a dict of metric name -> value, with `loss` and `global_step`.
        """
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        with self._graph().as_default():
            global_step = tf.train.get_or_create_global_step()
            features, labels = self._call_input_fn(input_fn, ModeKeys.EVAL)
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL)
            metrics = dict(spec.eval_metric_ops)
            if "loss" not in metrics:
                metrics["loss"] = tf.metrics.mean(spec.loss)
            update = tf.group(*[u for _, u in metrics.values()])
            values = {k: v for k, (v, _) in metrics.items()}
            values["global_step"] = global_step
            results = self._run_eval(spec, update, values, steps, hooks, checkpoint_path)
        self._write_eval_summary(results, name)
        return results

    def _run_eval(self, spec, update, values, steps, hooks, checkpoint_path):
        if checkpoint_path is None:
            _log.info("Could not find trained model in model_dir: %s, running initialization "
                      "to evaluate.", self.model_dir)
        creator = tf.train.ChiefSessionCreator(
            scaffold=spec.scaffold or tf.train.Scaffold(),
            checkpoint_filename_with_path=checkpoint_path, config=self.config.session_config)
        # NOTE: the end of the input ends the session's `with` (OutOfRangeError); the final
        # values are read by a FinalOpsHook as the session closes, as TF does.
        final = tf.train.FinalOpsHook(values)
        all_hooks = list(spec.evaluation_hooks) + list(hooks or []) + [final]
        with tf.train.MonitoredSession(session_creator=creator, hooks=all_hooks) as sess:
            done = 0
            while not sess.should_stop() and (steps is None or done < steps):
                sess.run(update)
                done += 1
        return {k: _plain(v) for k, v in final.final_ops_values.items()}

    def _write_eval_summary(self, results: dict, name) -> None:
        out = os.path.join(self.model_dir, f"eval_{name}" if name else "eval")
        values = [tf.Summary.Value(tag=k, simple_value=float(v)) for k, v in results.items()
                  if k != "global_step" and np.ndim(v) == 0]
        writer = tf.summary.FileWriterCache.get(out)
        writer.add_summary(tf.Summary(value=values), int(results["global_step"]))
        writer.flush()

    # -- predict ----------------------------------------------------------------------------
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yields predictions (dicts when the model_fn gives a dict) until the input ends."""
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if checkpoint_path is None:
            _log.info("Could not find trained model in model_dir: %s, running initialization "
                      "to predict.", self.model_dir)
        with self._graph().as_default():
            tf.train.get_or_create_global_step()
            features, _ = self._call_input_fn(input_fn, ModeKeys.PREDICT)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT)
            preds = _select(spec.predictions, predict_keys)
            creator = tf.train.ChiefSessionCreator(
                scaffold=spec.scaffold or tf.train.Scaffold(),
                checkpoint_filename_with_path=checkpoint_path,
                config=self.config.session_config)
            with tf.train.MonitoredSession(session_creator=creator,
                                           hooks=list(spec.prediction_hooks) +
                                           list(hooks or [])) as sess:
                while not sess.should_stop():
                    batch = sess.run(preds)
                    yield from _examples(batch, yield_single_examples)

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None,
                           experimental_mode=ModeKeys.PREDICT):
        """Exports the model_fn's PREDICT graph on the receiver's features, with the
        variables of `checkpoint_path` (default: the latest), as a SavedModel in a new
        timestamped directory under `export_dir_base`; returns its path (bytes). Signatures
        are the spec's `export_outputs`, else a predict signature of its predictions.

        Raises:
          ValueError: no checkpoint to export.
        """
        def build():
            tf.train.get_or_create_global_step()
            receiver = serving_input_receiver_fn()
            spec = self._call_model_fn(receiver.features, None, experimental_mode)
            outputs = spec.export_outputs or {
                DEFAULT_SERVING_SIGNATURE_DEF_KEY: export_lib.PredictOutput(
                    spec.predictions)}
            return receiver.receiver_tensors, outputs

        return export_lib.export_saved_model(
            export_dir_base, build, checkpoint_path or self.latest_checkpoint(),
            assets_extra=assets_extra, as_text=as_text)

    export_savedmodel = export_saved_model


def _plain(v):
    return v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v


def _select(predictions, keys):
    if keys is None or not isinstance(predictions, dict):
        return predictions
    keys = [keys] if isinstance(keys, str) else list(keys)
    missing = [k for k in keys if k not in predictions]
    if missing:
        raise ValueError(f"Expected to run at least one output from {sorted(predictions)}, "
                         f"provided {missing}.")
    return {k: predictions[k] for k in keys}


def _examples(batch, single: bool):
    if not single:
        yield batch
        return
    if isinstance(batch, dict):
        n = len(next(iter(batch.values())))
        for i in range(n):
            yield {k: v[i] for k, v in batch.items()}
    else:
        yield from batch
