"""What `fit`/`evaluate`/`predict` accept, as lists of per-input and per-output arrays:
numpy arrays (one, a list, or a dict by input/output name), a tf.data `Dataset` (its
iterator's values, run in the Keras session), a `utils.Sequence` or a generator of
`(x, y[, sample_weight])` tuples. `Batches` cuts numpy data into batches (shuffled each epoch
when asked) or draws `steps` batches from the other kinds.
"""

from __future__ import annotations

import numpy as np

from tensorweave.keras import backend as K


def _as_list(data, names: list, what: str) -> list:
    if data is None:
        return []
    if isinstance(data, dict):
        missing = [n for n in names if n not in data]
        if missing:
            raise ValueError(f"No data provided for {missing[0]!r}. Need data for each key in: "
                             f"{names}")
        return [np.asarray(data[n]) for n in names]
    arrays = [np.asarray(d) for d in data] if isinstance(data, (list, tuple)) \
        else [np.asarray(data)]
    if len(arrays) != len(names):
        raise ValueError(f"Error when checking model {what}: the list of Numpy arrays that you "
                         f"are passing to your model is not the size the model expected. "
                         f"Expected to see {len(names)} array(s), but instead got "
                         f"{len(arrays)} array(s).")
    return arrays


def match_rank(y: np.ndarray, rank: int | None) -> np.ndarray:
    """Targets of one dimension less than the output get a trailing axis (Keras does so)."""
    y = np.asarray(y)
    if rank is not None and y.ndim == rank - 1:
        return y[..., None]
    return y


def _check_inputs(model, xs: list) -> None:
    for x, t, name in zip(xs, model.inputs, model.input_names):
        want = t.shape.as_list() if t.shape.ndims is not None else None
        if want is None:
            continue
        if x.ndim != len(want) or any(w is not None and w != d
                                      for w, d in zip(want[1:], x.shape[1:])):
            raise ValueError(f"Error when checking input: expected {name} to have shape "
                             f"{tuple(want[1:])} but got array with shape {x.shape[1:]}")


def standardize_inputs(model, x) -> list:
    xs = _as_list(x, model.input_names, "input")
    _check_inputs(model, xs)
    return xs


def _class_weights(ys, class_weight) -> list | None:
    if not class_weight:
        return None
    out = []
    for y in ys:
        labels = y.argmax(-1) if y.ndim > 1 and y.shape[-1] > 1 else y.reshape(len(y), -1)[:, 0]
        out.append(np.asarray([class_weight.get(int(c), 1.0) for c in labels], np.float32))
    return out


def standardize(model, x, y=None, sample_weight=None, class_weight=None):
    """(inputs, targets, sample weights): lists matching the model's inputs and outputs.

    Raises:
      ValueError: the wrong number of arrays, mismatched shapes or sample counts.
    """
    xs = standardize_inputs(model, x)
    ys = _as_list(y, model.output_names, "target") if y is not None else []
    counts = {len(a) for a in xs + ys}
    if len(counts) > 1:
        raise ValueError("Input arrays should have the same number of samples as target "
                         f"arrays. Found sample counts {sorted(counts)}.")
    if sample_weight is not None:
        ws = [np.asarray(w, np.float32) for w in
              _as_list(sample_weight, model.output_names, "sample_weight")]
    else:
        ws = _class_weights(ys, class_weight)
    return xs, ys, ws


def _is_numpy(x) -> bool:
    return isinstance(x, (np.ndarray, list, tuple, dict)) and not hasattr(x, "__next__")


class Batches:
    """The batches of one epoch, again each epoch: `epoch()` yields (xs, ys, ws)."""

    def __init__(self, model, x, y, sample_weight, class_weight, batch_size: int,
                 shuffle, steps):
        self.model, self.batch_size, self.shuffle, self.steps = model, batch_size, shuffle, steps
        self.class_weight = class_weight
        self._source = None
        self.samples: int | None
        if _is_numpy(x):
            self.xs, self.ys, self.ws = standardize(model, x, y, sample_weight, class_weight)
            self.samples = len(self.xs[0]) if self.xs else 0
            self.steps = -(-self.samples // batch_size) if steps is None else steps
            self.unit = "samples"
        else:
            self._source = _source_of(x)
            self.samples = None
            if steps is None:
                steps = len(x) if hasattr(x, "__len__") else None
            if steps is None:
                raise ValueError("When using a dataset or a generator, specify the number of "
                                 "steps (`steps_per_epoch` / `steps`).")
            self.steps, self.unit = steps, "steps"

    def take(self, indices: np.ndarray) -> Batches:
        """The examples at `indices` (numpy data only), as another Batches."""
        out = object.__new__(Batches)
        out.__dict__.update(self.__dict__)
        out.xs = [a[indices] for a in self.xs]
        out.ys = [a[indices] for a in self.ys]
        out.ws = [a[indices] for a in self.ws] if self.ws else None
        out.samples = len(indices)
        out.steps = -(-out.samples // self.batch_size)
        return out

    def epoch(self):
        if self._source is not None:
            for _ in range(self.steps):
                yield standardize(self.model, *self._source(), self.class_weight)
            return
        order = np.arange(self.samples)
        if self.shuffle:
            np.random.shuffle(order)
        for k in range(self.steps):
            idx = order[k * self.batch_size:(k + 1) * self.batch_size]
            if len(idx) == 0:
                return
            yield ([a[idx] for a in self.xs], [a[idx] for a in self.ys],
                   [a[idx] for a in self.ws] if self.ws else None)


def _source_of(x):
    """A callable returning the next (x, y[, w]) of a dataset, Sequence or generator."""
    if hasattr(x, "make_one_shot_iterator") or hasattr(x, "_variant_tensor_attr") or \
            type(x).__name__.endswith("Dataset"):
        from tensorweave.data.iterator import make_one_shot_iterator

        nxt = make_one_shot_iterator(x).get_next()
        return lambda: _split(K.get_session().run(nxt))
    if hasattr(x, "__getitem__") and hasattr(x, "__len__"):
        state = {"i": 0}

        def item():
            batch = x[state["i"] % len(x)]
            state["i"] += 1
            return _split(batch)
        return item
    return lambda: _split(next(x))


def _split(batch):
    if isinstance(batch, tuple) and len(batch) in (2, 3):
        return batch if len(batch) == 3 else (batch[0], batch[1], None)
    return batch, None, None


def validation(model, data: Batches, split: float, given, batch_size: int, steps):
    """The validation Batches: `validation_data` ((x, y) or (x, y, w), a dataset...), or the
    last `split` of the training data (which `data` then stops using), or None."""
    if given is not None:
        if isinstance(given, (tuple, list)) and len(given) in (2, 3) and _is_numpy(given[0]):
            w = given[2] if len(given) == 3 else None
            return Batches(model, given[0], given[1], w, None, batch_size, False, None)
        return Batches(model, given, None, None, None, batch_size, False, steps)
    if split and data.samples:
        cut = int(data.samples * (1.0 - split))
        val = data.take(np.arange(cut, data.samples))
        data.__dict__.update(data.take(np.arange(cut)).__dict__)
        return val
    return None
