"""`tf.estimator.inputs`: input_fns over in-memory numpy arrays and pandas frames.

The returned input_fn builds a `tf.data` pipeline (slices, optional shuffle, `num_epochs`
repeats, batches) and returns its next element as `(features, labels)`; the end of the data
raises OutOfRangeError, which ends `Estimator.train`/`evaluate` as TF's queue-fed inputs do.
"""

from __future__ import annotations

import numpy as np

_TARGET_KEY = "__target_key__"


def _check(shuffle, num_epochs, batch_size) -> None:
    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided explicitly as a bool, got {shuffle}.")
    if num_epochs is not None and num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 or None, got {num_epochs}.")
    if batch_size <= 0:
        raise ValueError(f"batch_size must be > 0, got {batch_size}.")


def _pipeline(data: dict, batch_size, num_epochs, shuffle, capacity, seed=None):
    from tensorweave.data import Dataset

    ds = Dataset.from_tensor_slices(data)
    if shuffle:
        ds = ds.shuffle(capacity, seed=seed)
    ds = ds.repeat(num_epochs)
    return ds.batch(batch_size).make_one_shot_iterator().get_next()


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000,
                   num_threads=1):
    """An input_fn giving batches of `x` (an array or a dict of arrays) and `y`.

    Raises:
      ValueError: `shuffle` not a bool, arrays of different lengths, or `y` keys that clash
        with `x` keys.
    """
    _check(shuffle, num_epochs, batch_size)
    x_dict = dict(x) if isinstance(x, dict) else {"__x__": x}
    y_dict = dict(y) if isinstance(y, dict) else ({} if y is None else {_TARGET_KEY: y})
    if set(x_dict) & set(y_dict):
        raise ValueError(f"{sorted(set(x_dict) & set(y_dict))} duplicate keys are found in "
                         "both x and y")
    arrays = {k: np.asarray(v) for k, v in {**x_dict, **y_dict}.items()}
    lengths = {len(v) for v in arrays.values()}
    if len(lengths) > 1:
        raise ValueError(f"Length of tensors in x and y is mismatched. All elements in x and "
                         f"y must have the same length. Lengths: {sorted(lengths)}")

    def input_fn():
        batch = _pipeline(arrays, batch_size, num_epochs, shuffle, queue_capacity)
        features = batch["__x__"] if not isinstance(x, dict) else {k: batch[k] for k in x_dict}
        if y is None:
            return features
        labels = batch[_TARGET_KEY] if not isinstance(y, dict) else {k: batch[k]
                                                                     for k in y_dict}
        return features, labels

    return input_fn


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000,
                    num_threads=1, target_column="target"):
    """An input_fn over a pandas DataFrame `x` (columns become features) and Series `y`."""
    _check(shuffle, num_epochs, batch_size)
    if y is not None and not np.array_equal(x.index, y.index):
        raise ValueError("Index for x and y are mismatched.")
    feats = {c: x[c].values for c in x.columns}
    if y is not None and target_column in feats:
        raise ValueError(f"Cannot use name {target_column} for target column: DataFrame "
                         "already has a column with that name")
    return numpy_input_fn(feats, None if y is None else np.asarray(y.values),
                          batch_size, num_epochs, shuffle, queue_capacity, num_threads)
