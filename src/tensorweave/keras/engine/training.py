"""`Model.compile/fit/evaluate/predict` in graph mode, as TF 1.x's Keras runs them: compile
builds one target placeholder (`<output>_target`) and one sample-weight placeholder per
output, the total loss (each output's weighted mean loss times its loss weight, plus the
layers' regularization losses), the metric tensors and the training op (the optimizer's
update and the layers' updates, such as batch norm's moving averages). `fit` feeds batches
of numpy arrays (or values drawn from a tf.data dataset or a `utils.Sequence`) with the
learning phase on, and reports epoch averages of loss and metrics to the callbacks.
"""

from __future__ import annotations

import numpy as np

from tensorweave.framework.graph import get_default_graph
from tensorweave.keras import backend as K
from tensorweave.keras import callbacks as cbks
from tensorweave.keras import losses as losses_mod
from tensorweave.keras import metrics as metrics_mod
from tensorweave.keras import optimizers as optimizers_mod
from tensorweave.keras import saving
from tensorweave.keras.engine import data_adapter
from tensorweave.keras.engine.base_layer import producer, to_list
from tensorweave.keras.engine.input_layer import Input
from tensorweave.keras.engine.network import Network
from tensorweave.ops import array_ops, creation_ops, math_ops
from tensorweave.ops.control_flow_ops import group


def _per_output(value, names: list, what: str) -> list:
    """A compile argument given once, as a list (one per output) or a dict by output name."""
    if isinstance(value, dict):
        unknown = set(value) - set(names)
        if unknown:
            raise ValueError(f"Unknown entries in {what} dictionary: {sorted(unknown)}. Only "
                             f"expected following keys: {names}")
        return [value.get(n) for n in names]
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise ValueError(f"When passing a list as {what}, it should have one entry per "
                             f"model output. The model has {len(names)} outputs, but you "
                             f"passed {what}={value}")
        return list(value)
    return [value] * len(names)


class Model(Network):
    """A Keras model: a functional network or a subclassed one, with the training API."""

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None,
                sample_weight_mode=None, weighted_metrics=None, target_tensors=None,
                **kwargs):
        """Builds the loss, metrics and training op (see the module docstring).

        Raises:
          ValueError: no loss, or per-output arguments that do not match the outputs.
        """
        if loss is None:
            raise ValueError("The model cannot be compiled because it has no loss to optimize.")
        if not self._has_tensors():
            # NOTE: built (and compiled) when data first arrives, as TF 1.x's Keras defers it
            self._deferred_compile = dict(optimizer=optimizer, loss=loss, metrics=metrics,
                                          loss_weights=loss_weights,
                                          target_tensors=target_tensors)
            self.optimizer = optimizers_mod.get(optimizer)
            return
        self.optimizer = optimizers_mod.get(optimizer)
        names = self.output_names
        self.loss_functions = [losses_mod.get(fn) for fn in _per_output(loss, names, "loss")]
        weights = _per_output(loss_weights if loss_weights is not None else 1.0, names,
                              "loss_weights")
        with get_default_graph().name_scope("training"):
            self._build_targets(target_tensors)
            self._train_outputs, self._train_updates = self._phase_outputs(True)
            self._eval_outputs, _ = self._phase_outputs(False)
            self.total_loss, losses = self._total_loss(self._train_outputs, weights)
            eval_loss, eval_losses = self._total_loss(self._eval_outputs, weights)
            self._metric_tensors = self._build_metrics(metrics, self._train_outputs, losses)
            self._eval_fetches = [eval_loss, *self._build_metrics(
                metrics, self._eval_outputs, eval_losses)]
        self._train_op = None
        self.loss, self._compile_metrics = loss, metrics

    def _phase_outputs(self, training: bool) -> tuple[list, list]:
        """The outputs with the learning phase fixed to `training` (the layers called again
        with a Python `training`, so dropout and batch norm need no `cond` at run time), and
        the updates that call created; the model's own outputs when no layer cares."""
        cares = self._expects_training_arg if not self._is_graph_network else \
            any(n.layer._expects_training_arg for n in self._nodes)
        if not cares:
            return self.outputs, self.updates
        before = {id(u) for u in self.updates}
        outs = self.call(self._nested_inputs, training=training)
        return to_list(outs), [u for u in self.updates if id(u) not in before]

    # -- building on the first data (models without an input shape) ---------------------------
    def _has_tensors(self) -> bool:
        return self._is_graph_network or bool(getattr(self, "outputs", None))

    def _build_from(self, x) -> None:
        """Builds the model on placeholders shaped like `x` (its first array), then runs a
        deferred `compile`."""
        if self._has_tensors() or x is None:
            return
        sample = np.asarray(x[0] if isinstance(x, (list, tuple)) else x)
        dtype = K.floatx() if sample.dtype.kind == "f" else str(sample.dtype)
        self._build_on(Input(batch_shape=(None, *sample.shape[1:]), dtype=dtype))
        deferred = getattr(self, "_deferred_compile", None)
        if deferred is not None:
            self._deferred_compile = None
            self.compile(**deferred)

    def _build_on(self, inputs) -> None:
        """A subclassed model: calls it on `inputs`; its outputs are `output_1`, ..."""
        outputs = to_list(self(inputs))
        self._nested_inputs, self.inputs, self.outputs = inputs, [inputs], outputs
        self.input_names = [producer(inputs)[0].layer.name]
        self.output_names = [f"output_{i + 1}" for i in range(len(outputs))]
        self._nodes = []

    def _build_targets(self, target_tensors) -> None:
        given = _per_output(target_tensors, self.output_names, "target_tensors") \
            if target_tensors is not None else [None] * len(self.outputs)
        self.targets, self.sample_weights = [], []
        for out, name, target in zip(self.outputs, self.output_names, given):
            rank = out.shape.ndims
            self.targets.append(target if target is not None else K.placeholder(
                ndim=rank, name=f"{name}_target", dtype=out.dtype.base_dtype))
            ones = creation_ops.ones(array_ops.shape(out)[:1], dtype=K.floatx())
            self.sample_weights.append(array_ops.placeholder_with_default(
                ones, [None], name=f"{name}_sample_weights"))   # NOTE: ones when not fed

    def _total_loss(self, outputs, weights) -> tuple:
        """(total loss, [each output's weighted mean loss]) of `outputs`."""
        total, per_output = None, []
        for fn, out, target, sw, w in zip(self.loss_functions, outputs, self.targets,
                                          self.sample_weights, weights):
            with get_default_graph().name_scope("loss"):
                per_sample = fn(target, out)
                while per_sample.shape.ndims is not None and per_sample.shape.ndims > 1:
                    per_sample = K.mean(per_sample, axis=-1)
                nonzero = K.mean(math_ops.cast(math_ops.not_equal(sw, 0.0), K.floatx()))
                value = K.mean(per_sample * sw) / K.maximum(nonzero, K.epsilon())
            per_output.append(value)
            total = value * w if total is None else total + value * w
        for reg in self.losses:
            total = total + reg
        return total, per_output

    def _build_metrics(self, metrics, outputs, output_losses) -> list:
        """The metric tensors of `outputs` (after the per-output losses of a multi-output
        model); sets `metrics_names`."""
        per_output = _per_output(metrics or [], self.output_names, "metrics") \
            if isinstance(metrics, dict) else [metrics or []] * len(self.outputs)
        self.metrics_names = ["loss"]
        tensors = []
        if len(self.outputs) > 1:
            self.metrics_names += [f"{n}_loss" for n in self.output_names]
            tensors += output_losses
        for out, name, target, fn_loss, wanted in zip(outputs, self.output_names,
                                                      self.targets, self.loss_functions,
                                                      per_output):
            for m in metrics_mod_list(wanted):
                label, fn = metrics_mod.resolve(m, fn_loss, K.int_shape(out))
                self.metrics_names.append(label if len(self.outputs) == 1 else
                                          f"{name}_{label}")
                with get_default_graph().name_scope("metrics"):
                    tensors.append(K.mean(fn(target, out)))
        return tensors

    @property
    def train_op(self):
        if self._train_op is None:
            with get_default_graph().name_scope("training"):
                updates = self.optimizer.get_updates(self.total_loss, self.trainable_weights)
                self._train_op = group(*updates, *self._train_updates)
        return self._train_op

    # -- running ----------------------------------------------------------------------------------
    def _feed(self, xs, ys=None, weights=None, training=False) -> dict:
        feed = dict(zip(self.inputs, xs))
        if ys is not None:
            for target, y, out in zip(self.targets, ys, self.outputs):
                feed[target] = data_adapter.match_rank(y, out.shape.ndims)
            for holder, w, y in zip(self.sample_weights, weights or [None] * len(ys), ys):
                feed[holder] = np.ones(len(y), np.float32) if w is None else w
        feed.update(K.learning_phase_feed(training))
        return feed

    def _run_batch(self, fetches, xs, ys, ws, training):
        return K.get_session().run(fetches, self._feed(xs, ys, ws, training))

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None,
                       reset_metrics=True):
        self._build_from(x)
        xs, ys, ws = data_adapter.standardize(self, x, y, sample_weight, class_weight)
        out = self._run_batch([self.train_op, self.total_loss, *self._metric_tensors],
                              xs, ys, ws, True)[1:]
        return out[0] if len(out) == 1 else out

    def test_on_batch(self, x, y=None, sample_weight=None, reset_metrics=True):
        self._build_from(x)
        xs, ys, ws = data_adapter.standardize(self, x, y, sample_weight)
        out = self._run_batch(self._eval_fetches, xs, ys, ws, False)
        return out[0] if len(out) == 1 else out

    def predict_on_batch(self, x):
        self._build_from(x)
        xs = data_adapter.standardize_inputs(self, x)
        out = K.get_session().run(getattr(self, "_eval_outputs", self.outputs), self._feed(xs))
        return out[0] if len(out) == 1 else out

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            validation_freq=1, **kwargs):
        """Trains for `epochs` epochs; returns the `History` callback.

        Raises:
          RuntimeError: the model was not compiled.
          ValueError: inputs or targets that do not match the model.
        """
        self._build_from(x)
        self._check_compiled()
        data = data_adapter.Batches(self, x, y, sample_weight, class_weight, batch_size or 32,
                                    shuffle, steps_per_epoch)
        val = data_adapter.validation(self, data, validation_split, validation_data,
                                      batch_size or 32, validation_steps)
        history = cbks.History()
        callback_list = cbks.CallbackList(
            [cbks.BaseLogger(self.metrics_names[1:])] + list(callbacks or []) + [history]
            + ([cbks.ProgbarLogger(data.unit, stateful=())] if verbose else []),
            model=self, params={"epochs": epochs, "steps": data.steps, "samples": data.samples,
                                "verbose": verbose, "batch_size": batch_size or 32,
                                "do_validation": val is not None,
                                "metrics": self._all_metric_names(val is not None)})
        self.stop_training = False
        fetches = [self.train_op, self.total_loss, *self._metric_tensors]
        callback_list.on_train_begin()
        for epoch in range(initial_epoch, epochs):
            callback_list.on_epoch_begin(epoch)
            for step, (xs, ys, ws) in enumerate(data.epoch()):
                logs = {"batch": step, "size": len(ys[0]) if ys else 1}
                callback_list.on_batch_begin(step, logs)
                values = self._run_batch(fetches, xs, ys, ws, True)[1:]
                logs.update(zip(self.metrics_names, (float(v) for v in values)))
                callback_list.on_batch_end(step, logs)
                if self.stop_training:
                    break
            epoch_logs: dict = {}
            if val is not None and (epoch + 1) % validation_freq == 0:
                scores = self._evaluate_batches(val)
                epoch_logs.update({f"val_{n}": v for n, v in zip(self.metrics_names, scores)})
            callback_list.on_epoch_end(epoch, epoch_logs)
            if self.stop_training:
                break
        callback_list.on_train_end()
        return history

    def _all_metric_names(self, validation: bool) -> list:
        names = list(self.metrics_names)
        return names + [f"val_{n}" for n in names] if validation else names

    def _check_compiled(self) -> None:
        if getattr(self, "optimizer", None) is None:
            raise RuntimeError("You must compile your model before training/testing. Use "
                               "`model.compile(optimizer, loss)`.")

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, sample_weight=None,
                 steps=None, callbacks=None, **kwargs):
        """The loss (and metrics) over the data, averaged by batch size."""
        self._build_from(x)
        self._check_compiled()
        data = data_adapter.Batches(self, x, y, sample_weight, None, batch_size or 32, False,
                                    steps)
        scores = self._evaluate_batches(data)
        return scores[0] if len(scores) == 1 else scores

    def _evaluate_batches(self, data) -> list:
        fetches = self._eval_fetches
        totals, count = np.zeros(len(fetches)), 0
        for xs, ys, ws in data.epoch():
            n = len(ys[0])
            totals += n * np.asarray(self._run_batch(fetches, xs, ys, ws, False), np.float64)
            count += n
        return [float(v) for v in totals / max(count, 1)]

    def predict(self, x, batch_size=None, verbose=0, steps=None, callbacks=None, **kwargs):
        """The outputs for every example of `x`, concatenated over batches."""
        self._build_from(x)
        data = data_adapter.Batches(self, x, None, None, None, batch_size or 32, False, steps)
        outputs = getattr(self, "_eval_outputs", self.outputs)
        parts = [K.get_session().run(outputs, self._feed(xs)) for xs, _, _ in data.epoch()]
        outs = [np.concatenate([p[i] for p in parts]) for i in range(len(self.outputs))]
        return outs[0] if len(outs) == 1 else outs

    def fit_generator(self, generator, steps_per_epoch=None, epochs=1, verbose=1,
                      callbacks=None, validation_data=None, validation_steps=None,
                      class_weight=None, initial_epoch=0, **kwargs):
        return self.fit(generator, steps_per_epoch=steps_per_epoch, epochs=epochs,
                        verbose=verbose, callbacks=callbacks, validation_data=validation_data,
                        validation_steps=validation_steps, class_weight=class_weight,
                        initial_epoch=initial_epoch)

    def evaluate_generator(self, generator, steps=None, **kwargs):
        return self.evaluate(generator, steps=steps)

    def predict_generator(self, generator, steps=None, **kwargs):
        return self.predict(generator, steps=steps)

    # -- saving -----------------------------------------------------------------------------------
    def save_weights(self, filepath, overwrite=True, save_format=None) -> None:
        saving.save_weights(self, filepath, overwrite, save_format)

    def load_weights(self, filepath, by_name=False):
        saving.load_weights(self, filepath, by_name)

    def save(self, filepath, overwrite=True, include_optimizer=True, save_format=None):
        saving.save_model(self, filepath, overwrite, include_optimizer, save_format)

    def to_json(self, **kwargs) -> str:
        return saving.to_json(self, **kwargs)

    def get_config(self) -> dict:
        if not self._is_graph_network:
            raise NotImplementedError("A subclassed model has no config: implement "
                                      "get_config() to serialize it.")
        return saving.network_config(self)


def metrics_mod_list(wanted) -> list:
    return list(wanted) if isinstance(wanted, (list, tuple)) else [wanted]


__all__ = ["Model"]
