"""CPU kernels of tf.data.experimental's dataset ops: ScanDataset, GroupByWindowDataset,
CSVDataset and DatasetToSingleElement (ops/dataset_ops.py; Python API in
data/transforms/experimental.py).

CSVDataset parses as TF's CSVDatasetOp: one record per line (after an optional header line
per file), `field_delim`-separated, double quotes with "" escapes when `use_quote_delim`;
an empty field or one equal to `na_value` takes its column's default, and a column with no
default (an empty `record_defaults` entry) must be present. Errors are InvalidArgumentError
naming the file, record and field.
"""

from __future__ import annotations

import csv
import io

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.cpu.dataset import (
    FunctionRunner,
    GenDataset,
    _closing,
    _runner,
    find_function,
)
from tensorweave.runtime.kernels.cpu.dataset_readers import _files, _open_binary, _str
from tensorweave.runtime.kernels.registry import register_kernel


def _invalid(message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, message)


# -- ScanDataset ----------------------------------------------------------------------------
def _scan_gen(ds, fn, state: tuple):
    with _closing(ds.iterate()) as it:
        for i, el in enumerate(it):
            out = fn(tuple(state) + tuple(el), i)
            state, emitted = out[:len(state)], out[len(state):]
            yield tuple(emitted)


@register_kernel("ScanDataset")
def _scan(node):
    n_state = len(node.attr("Tstate"))

    def run(ds, *rest):
        state, captured = rest[:n_state], rest[n_state:]
        fn = _runner(node, captured, "scan")
        return GenDataset(lambda: _scan_gen(ds, fn, tuple(np.asarray(s) for s in state)))
    return run


# -- GroupByWindowDataset ------------------------------------------------------------------
def _group_gen(ds, key_fn, reduce_fn, size_fn):
    """TF's GroupByWindowDataset: elements gather per key (key_func) until their group holds
    window_size_func(key) of them, then reduce_func(key, window) runs and its dataset's
    elements follow; at the end of input the partial groups flush in ascending key order."""
    groups: dict[int, list] = {}
    sizes: dict[int, int] = {}
    calls = iter(range(1 << 62))
    with _closing(ds.iterate()) as it:
        for i, el in enumerate(it):
            key = _scalar_key(key_fn(el, i)[0])
            if key not in groups:
                sizes[key] = _window_size(size_fn((np.int64(key),), i)[0])
                groups[key] = []
            groups[key].append(el)
            if len(groups[key]) == sizes[key]:
                yield from _reduce(reduce_fn, key, groups.pop(key), next(calls))
    for key in sorted(groups):
        yield from _reduce(reduce_fn, key, groups.pop(key), next(calls))


def _scalar_key(value) -> int:
    arr = np.asarray(value)
    if arr.shape != () or arr.dtype != np.int64:
        raise _invalid(f"key_func must return a scalar int64, got {arr.dtype} of shape "
                       f"[{','.join(map(str, arr.shape))}]")
    return int(arr)


def _window_size(value) -> int:
    size = int(np.asarray(value))
    if size <= 0:
        raise _invalid(f"Window size must be greater than zero, but got {size}.")
    return size


def _reduce(reduce_fn, key: int, window: list, index: int):
    window_ds = GenDataset(lambda: iter(window))
    out = reduce_fn((np.int64(key), window_ds), index)[0]
    with _closing(out.iterate()) as sub:
        yield from sub


@register_kernel("GroupByWindowDataset")
def _group_by_window(node):
    counts = [len(node.attr(a)) for a in ("Tkey_func_other_arguments",
                                          "Treduce_func_other_arguments",
                                          "Twindow_size_func_other_arguments")]

    def run(ds, *captured):
        k, r = counts[0], counts[0] + counts[1]
        key_fn = FunctionRunner(find_function(node, "key_func"), captured[:k], "key_func")
        reduce_fn = FunctionRunner(find_function(node, "reduce_func"), captured[k:r],
                                   "reduce_func")
        size_fn = FunctionRunner(find_function(node, "window_size_func"), captured[r:],
                                 "window_size_func")
        return GenDataset(lambda: _group_gen(ds, key_fn, reduce_fn, size_fn))
    return run


# -- DatasetToSingleElement -----------------------------------------------------------------
@register_kernel("DatasetToSingleElement")
def _single_element(node):
    n = len(node.attr("output_types"))

    def run(ds):
        with _closing(ds.iterate()) as it:
            first = next(it, None)
            if first is None:
                raise _invalid("Dataset was empty.")
            if next(it, None) is not None:
                raise _invalid("Dataset had more than one element.")
        return first[0] if n == 1 else tuple(first)
    return run


# -- CSVDataset -----------------------------------------------------------------------------
_PARSE = {np.dtype(np.int32): int, np.dtype(np.int64): int, np.dtype(np.float32): float,
          np.dtype(np.float64): float}


def _convert(text: str, dtype, col: int, where: str):
    if np.dtype(dtype).kind == "O":
        return np.array(text.encode(), dtype=object)
    name = np.dtype(dtype).name
    try:
        value = _PARSE[np.dtype(dtype)](text)
    except ValueError:
        raise _invalid(f"Field {col} in record is not a valid {name}: {text} ({where})") \
            from None
    if np.dtype(dtype).kind == "i" and not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
        raise _invalid(f"Field {col} in record is not a valid {name}: {text} ({where})")
    return np.array(value, dtype)


def _field(text, default, dtype, na_value: str, col: int, where: str):
    if text == "" or text == na_value:
        if default.size == 0:
            raise _invalid(f"Field {col} is required but missing in record! ({where})")
        return np.array(default.reshape(()), dtype)
    return _convert(text, dtype, col, where)


def _csv_rows(path, options):
    compression, header, delim, quote, na_value, select, defaults, dtypes_ = options
    with _open_binary(path, compression) as f:
        text = io.TextIOWrapper(f, encoding="utf-8", newline="")
        reader = csv.reader(text, delimiter=delim, quotechar='"', doublequote=True,
                            quoting=csv.QUOTE_MINIMAL if quote else csv.QUOTE_NONE)
        for row_index, row in enumerate(reader):
            if header and row_index == 0:
                continue
            yield _record(row, row_index, path, select, defaults, dtypes_, na_value)


def _record(row, index, path, select, defaults, dtypes_, na_value):
    cols = select if select else list(range(len(defaults)))
    where = f"record {index} of {path}"
    if not select and len(row) != len(defaults):
        raise _invalid(f"Expect {len(defaults)} fields but have {len(row)} in record ({where})")
    if select and cols[-1] >= len(row):
        raise _invalid(f"Expect {cols[-1] + 1} fields but have {len(row)} in record ({where})")
    return tuple(_field(row[c], defaults[k], dtypes_[k], na_value, c, where)
                 for k, c in enumerate(cols))


@register_kernel("CSVDataset")
def _csv_dataset(node):
    dtypes_ = [t.np_dtype for t in node.attr("output_types")]

    def run(filenames, compression, buffer_size, header, delim, quote, na_value, select,
            *defaults):
        delim = _str(delim)
        if len(delim) != 1:
            raise _invalid(f"field_delim should be only 1 char, got '{delim}'")
        select = [int(c) for c in np.asarray(select).ravel()]
        if select and (len(select) != len(defaults) or sorted(set(select)) != select):
            raise _invalid("select_cols must be strictly increasing and match the number of "
                           "record_defaults")
        defaults = [np.asarray(d) for d in defaults]
        if any(d.size > 1 for d in defaults):
            raise _invalid("Each record default should have at most one element")
        options = (_str(compression), bool(header), delim, bool(quote), _str(na_value),
                   select, defaults, dtypes_)
        paths = _files(filenames)
        return GenDataset(lambda: (r for p in paths for r in _csv_rows(p, options)))
    return run
