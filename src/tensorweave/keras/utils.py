"""`tf.keras.utils`: to_categorical, normalize, Sequence, Progbar, get_file (offline: a clear
error), plot_model (when pydot is installed)."""

from __future__ import annotations

import os
import sys
import time

import numpy as np


def to_categorical(y, num_classes=None, dtype="float32") -> np.ndarray:
    """One-hot rows for integer class labels (a trailing axis of 1 is dropped)."""
    y = np.asarray(y, dtype="int64")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.reshape(-1)
    num_classes = int(num_classes or (y.max() + 1 if y.size else 0))
    out = np.zeros((y.size, num_classes), dtype=dtype)
    out[np.arange(y.size), y] = 1
    return out.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2) -> np.ndarray:
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


class Sequence:
    """Batches by index: subclasses define `__getitem__(i)` → (x, y) and `__len__`."""

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def on_epoch_end(self):
        pass

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]


class Progbar:
    """Keras's progress bar: `update(current, values)` redraws
    `32/100 [=========>....................] - ETA: 1s - loss: 0.3456`; at the end
    `100/100 [==============================] - 2s 20ms/sample - loss: 0.2000`.
    Values are averaged over the samples seen (weighted by the step they cover)."""

    def __init__(self, target, width=30, verbose=1, interval=0.05, stateful_metrics=None,
                 unit_name="step"):
        self.target, self.width, self.verbose, self.interval = target, width, verbose, interval
        self.unit_name = unit_name
        self._sums: dict = {}
        self._order: list = []
        self._start = self._last_update = time.time()
        self._seen = 0
        self._dynamic = (hasattr(sys.stdout, "isatty") and sys.stdout.isatty()) or \
            "ipykernel" in sys.modules or "posix" != os.name
        self._total_width = 0

    def update(self, current, values=None, finalize=None):
        finalize = current >= self.target if finalize is None and self.target else finalize
        for k, v in values or []:
            if k not in self._sums:
                self._order.append(k)
                self._sums[k] = [0.0, 0]
            step = max(current - self._seen, 1)
            self._sums[k][0] += v * step
            self._sums[k][1] += step
        self._seen = current
        now = time.time()
        if self.verbose != 1 or (not finalize and now - self._last_update < self.interval):
            if self.verbose == 2 and finalize:
                print(f"{self.target}/{self.target} - {self._tail(now)}", flush=True)
            return
        self._last_update = now
        bar = self._bar(current)
        info = f" - {self._tail(now)}" if finalize else f" - ETA: {self._eta(current, now)}" + \
            self._metrics()
        line = bar + info
        pad = max(self._total_width - len(line), 0)
        self._total_width = len(line)
        if self._dynamic:
            sys.stdout.write("\r" + line + " " * pad + ("\n" if finalize else ""))
        elif finalize:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def add(self, n, values=None):
        self.update(self._seen + n, values)

    def _bar(self, current) -> str:
        if not self.target:
            return f"{current:7d}/Unknown"
        digits = len(str(self.target))
        done = int(self.width * current / self.target)
        arrow = "=" * max(done - 1, 0) + (">" if current < self.target else "=") \
            if done else ""
        return f"{current:{digits}d}/{self.target} [{arrow}{'.' * (self.width - len(arrow))}]"

    def _eta(self, current, now) -> str:
        per = (now - self._start) / max(current, 1)
        eta = int(per * (self.target - current)) if self.target else 0
        return f"{eta // 3600}:{eta % 3600 // 60:02d}:{eta % 60:02d}" if eta > 3600 else \
            f"{eta // 60}:{eta % 60:02d}" if eta > 60 else f"{eta}s"

    def _tail(self, now) -> str:
        elapsed = now - self._start
        per = elapsed / max(self._seen, 1)
        rate = f"{per * 1e6:.0f}us" if per < 1e-3 else f"{per * 1e3:.0f}ms" if per < 1 else \
            f"{per:.0f}s"
        return f"{elapsed:.0f}s {rate}/{self.unit_name}" + self._metrics()

    def _metrics(self) -> str:
        out = ""
        for k in self._order:
            total, count = self._sums[k]
            avg = total / max(count, 1)
            out += f" - {k}: {avg:.4f}" if abs(avg) > 1e-3 else f" - {k}: {avg:.4e}"
        return out


def get_file(fname, origin=None, untar=False, md5_hash=None, file_hash=None,
             cache_subdir="datasets", cache_dir=None, extract=False, **kwargs) -> str:
    """The cached file `~/.keras/<cache_subdir>/<fname>` when it is there; this runtime
    downloads nothing.

    Raises:
      FileNotFoundError: the file is not in the cache (says where to put it).
    """
    base = os.path.expanduser(cache_dir or os.path.join("~", ".keras"))
    path = os.path.join(base, cache_subdir, fname)
    if os.path.exists(path):
        return path
    raise FileNotFoundError(
        f"{fname} is not in the Keras cache ({path}) and tensorweave does not download "
        f"datasets: fetch {origin or fname} on a connected machine and copy it there.")


def plot_model(model, to_file="model.png", show_shapes=False, show_layer_names=True,
               rankdir="TB", **kwargs):
    """Draws the model's layer graph with pydot (ImportError with the reason without it)."""
    try:
        import pydot
    except ImportError as e:
        raise ImportError("plot_model needs pydot (and Graphviz): pip install pydot") from e
    dot = pydot.Dot(graph_type="digraph", rankdir=rankdir)
    for layer in model.layers:
        label = f"{layer.name}: {type(layer).__name__}" if show_layer_names else \
            type(layer).__name__
        dot.add_node(pydot.Node(str(id(layer)), label=label, shape="record"))
        for node in layer.inbound_nodes[:1]:
            from tensorweave.keras.engine.base_layer import producer

            for t in node.inputs:
                src = producer(t)
                if src is not None:
                    dot.add_edge(pydot.Edge(str(id(src[0].layer)), str(id(layer))))
    dot.write(to_file, format=os.path.splitext(to_file)[1][1:] or "png")
    return dot
