"""`tf.keras.callbacks`: hooks into `fit` (`on_{train,epoch,batch}_{begin,end}` with a logs
dict), and the standard ones: BaseLogger (epoch averages), History, ProgbarLogger (Keras's
progress bar), EarlyStopping, ModelCheckpoint, LearningRateScheduler, ReduceLROnPlateau,
CSVLogger, LambdaCallback, TerminateOnNaN, TensorBoard (our event files)."""

from __future__ import annotations

import csv
import math
import os

import numpy as np

from tensorweave.keras import backend as K
from tensorweave.keras.utils import Progbar


class Callback:
    """Base class: `self.model` and `self.params` are set before training starts."""

    def __init__(self):
        self.model, self.params, self.validation_data = None, {}, None

    def set_model(self, model) -> None:
        self.model = model

    def set_params(self, params) -> None:
        self.params = params

    def on_train_begin(self, logs=None): ...
    def on_train_end(self, logs=None): ...
    def on_epoch_begin(self, epoch, logs=None): ...
    def on_epoch_end(self, epoch, logs=None): ...
    def on_batch_begin(self, batch, logs=None): ...
    def on_batch_end(self, batch, logs=None): ...
    on_train_batch_begin = on_batch_begin
    on_train_batch_end = on_batch_end


class CallbackList:
    """Calls every callback in order with the same logs dict."""

    def __init__(self, callbacks, model=None, params=None):
        self.callbacks = list(callbacks)
        for c in self.callbacks:
            c.set_model(model)
            c.set_params(params or {})

    def _each(self, method: str, *args) -> None:
        for c in self.callbacks:
            getattr(c, method)(*args)

    def on_train_begin(self, logs=None):
        self._each("on_train_begin", logs if logs is not None else {})

    def on_train_end(self, logs=None):
        self._each("on_train_end", logs if logs is not None else {})

    def on_epoch_begin(self, epoch, logs=None):
        self._each("on_epoch_begin", epoch, logs if logs is not None else {})

    def on_epoch_end(self, epoch, logs=None):
        self._each("on_epoch_end", epoch, logs if logs is not None else {})

    def on_batch_begin(self, batch, logs=None):
        self._each("on_batch_begin", batch, logs if logs is not None else {})

    def on_batch_end(self, batch, logs=None):
        self._each("on_batch_end", batch, logs if logs is not None else {})


class BaseLogger(Callback):
    """Averages batch values over the epoch (weighted by batch size) into the epoch logs."""

    def __init__(self, stateful_metrics=None):
        super().__init__()
        self.names = None

    def on_epoch_begin(self, epoch, logs=None):
        self.seen, self.totals = 0, {}

    def on_batch_end(self, batch, logs=None):
        size = logs.get("size", 0)
        self.seen += size
        for k, v in logs.items():
            if k not in ("batch", "size"):
                self.totals[k] = self.totals.get(k, 0.0) + v * size

    def on_epoch_end(self, epoch, logs=None):
        for k in self.params.get("metrics", []):
            if k in self.totals:
                logs[k] = self.totals[k] / max(self.seen, 1)


class History(Callback):
    """`history.history`: {metric: [value per epoch]}; `history.epoch`."""

    def on_train_begin(self, logs=None):
        self.epoch, self.history = [], {}

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)


class ProgbarLogger(Callback):
    """Prints "Epoch i/n" and a progress bar per epoch with the running averages."""

    def __init__(self, count_mode="samples", stateful=()):
        super().__init__()
        self.use_steps = count_mode == "steps"

    def on_epoch_begin(self, epoch, logs=None):
        self.verbose = self.params.get("verbose", 1)
        if self.verbose:
            print(f"Epoch {epoch + 1}/{self.params['epochs']}")
        self.target = self.params["steps"] if self.use_steps or not self.params.get(
            "samples") else self.params["samples"]
        self.progbar = Progbar(self.target, verbose=self.verbose,
                               unit_name="step" if self.use_steps else "sample")
        self.seen, self.log_values = 0, []

    def on_batch_end(self, batch, logs=None):
        self.seen += 1 if self.use_steps or not self.params.get("samples") else logs["size"]
        values = [(k, logs[k]) for k in self.params.get("metrics", []) if k in logs]
        if self.seen < self.target:
            self.progbar.update(self.seen, values)

    def on_epoch_end(self, epoch, logs=None):
        values = [(k, logs[k]) for k in self.params.get("metrics", []) if k in logs]
        self.progbar.update(self.target, values, finalize=True)


def _better(monitor: str, mode: str):
    if mode == "min" or (mode == "auto" and "acc" not in monitor):
        return np.less
    return np.greater


class EarlyStopping(Callback):
    """Stops training when `monitor` has not improved by `min_delta` for `patience` epochs."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False):
        super().__init__()
        self.monitor, self.patience, self.verbose = monitor, patience, verbose
        self.baseline, self.restore_best_weights = baseline, restore_best_weights
        self.op = _better(monitor, mode)
        self.min_delta = abs(min_delta) * (1 if self.op is np.greater else -1)

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch, self.best_weights = 0, 0, None
        self.best = self.baseline if self.baseline is not None else (
            -np.inf if self.op is np.greater else np.inf)

    def on_epoch_end(self, epoch, logs=None):
        current = (logs or {}).get(self.monitor)
        if current is None:
            return
        if self.op(current - self.min_delta, self.best):
            self.best, self.wait = current, 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            return
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1:05d}: early stopping")


class ModelCheckpoint(Callback):
    """Saves the model (or its weights) after every `period` epochs to `filepath` formatted
    with the epoch and the logs (`weights.{epoch:02d}-{val_loss:.2f}.h5`)."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", period=1, save_freq="epoch"):
        super().__init__()
        self.filepath, self.monitor, self.verbose = filepath, monitor, verbose
        self.save_best_only, self.save_weights_only, self.period = (save_best_only,
                                                                    save_weights_only, period)
        self.op = _better(monitor, mode)
        self.best = -np.inf if self.op is np.greater else np.inf

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if (epoch + 1) % self.period:
            return
        path = os.fspath(self.filepath).format(epoch=epoch + 1, **logs)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None or not self.op(current, self.best):
                return
            self.best = current
        if self.save_weights_only:
            self.model.save_weights(path, overwrite=True)
        else:
            self.model.save(path, overwrite=True)
        if self.verbose:
            print(f"\nEpoch {epoch + 1:05d}: saving model to {path}")


class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate to `schedule(epoch[, lr])` before each epoch."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        lr = float(K.get_value(self.model.optimizer.lr))
        try:
            new = self.schedule(epoch, lr)
        except TypeError:
            new = self.schedule(epoch)
        K.set_value(self.model.optimizer.lr, float(new))
        if self.verbose:
            print(f"\nEpoch {epoch + 1:05d}: LearningRateScheduler setting learning rate to "
                  f"{new}.")

    def on_epoch_end(self, epoch, logs=None):
        logs["lr"] = float(K.get_value(self.model.optimizer.lr))


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by `factor` when `monitor` stalls for `patience` epochs."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0, **kwargs):
        super().__init__()
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0.")
        self.monitor, self.factor, self.patience, self.verbose = monitor, factor, patience, \
            verbose
        self.min_delta, self.cooldown, self.min_lr = min_delta, cooldown, min_lr
        self.op = _better(monitor, mode)

    def on_train_begin(self, logs=None):
        self.wait, self.cooldown_counter = 0, 0
        self.best = -np.inf if self.op is np.greater else np.inf

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        logs["lr"] = float(K.get_value(self.model.optimizer.lr))
        current = logs.get(self.monitor)
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        delta = self.min_delta if self.op is np.greater else -self.min_delta
        if self.op(current - delta, self.best):
            self.best, self.wait = current, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                new = max(logs["lr"] * self.factor, self.min_lr)
                if new < logs["lr"]:
                    K.set_value(self.model.optimizer.lr, new)
                    if self.verbose:
                        print(f"\nEpoch {epoch + 1:05d}: ReduceLROnPlateau reducing learning "
                              f"rate to {new}.")
                self.cooldown_counter, self.wait = self.cooldown, 0


class CSVLogger(Callback):
    """Writes one CSV row of epoch logs per epoch (`epoch,loss,...`)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.sep, self.append = filename, separator, append

    def on_train_begin(self, logs=None):
        exists = self.append and os.path.exists(self.filename)
        self.file = open(self.filename, "a" if self.append else "w", newline="")  # noqa: SIM115
        self.writer, self.keys, self.header_written = None, None, exists

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            self.writer = csv.DictWriter(self.file, ["epoch", *self.keys], delimiter=self.sep)
            if not self.header_written:
                self.writer.writeheader()
        self.writer.writerow({"epoch": epoch, **{k: logs.get(k, "NA") for k in self.keys}})
        self.file.flush()

    def on_train_end(self, logs=None):
        self.file.close()


class LambdaCallback(Callback):
    """A callback from functions: `on_epoch_end=lambda epoch, logs: ...` and so on."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None,
                 on_batch_end=None, on_train_begin=None, on_train_end=None, **kwargs):
        super().__init__()
        noop2, noop1 = (lambda a, b: None), (lambda a: None)
        self.on_epoch_begin = on_epoch_begin or noop2
        self.on_epoch_end = on_epoch_end or noop2
        self.on_batch_begin = on_batch_begin or noop2
        self.on_batch_end = on_batch_end or noop2
        self.on_train_begin = on_train_begin or noop1
        self.on_train_end = on_train_end or noop1


class TerminateOnNaN(Callback):
    """Stops training at the first batch whose loss is NaN or infinite."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and (math.isnan(loss) or math.isinf(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class TensorBoard(Callback):
    """Writes the epoch logs as scalar summaries to an event file under `log_dir` (and the
    graph when `write_graph`), readable by TensorBoard."""

    def __init__(self, log_dir="./logs", histogram_freq=0, write_graph=True, **kwargs):
        super().__init__()
        self.log_dir, self.write_graph = log_dir, write_graph

    def on_train_begin(self, logs=None):
        from tensorweave.monitoring.summary.writer import FileWriter

        self.writer = FileWriter(self.log_dir,
                                 graph=K.get_session().graph if self.write_graph else None)

    def on_epoch_end(self, epoch, logs=None):
        from tensorweave.proto import summary_pb2

        values = [summary_pb2.Summary.Value(tag=k, simple_value=float(v))
                  for k, v in (logs or {}).items()]
        self.writer.add_summary(summary_pb2.Summary(value=values), epoch)
        self.writer.flush()

    def on_train_end(self, logs=None):
        self.writer.close()
