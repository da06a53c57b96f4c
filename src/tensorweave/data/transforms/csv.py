"""`tf.data.experimental.make_csv_dataset`: batches of {column name: values} (and labels)
from CSV files, built from CsvDataset as TF's readers.py builds it.

Column names come from the first file's header when not given; column types, when no
`column_defaults` are given, are inferred from up to `num_rows_for_inference` rows of the
files (int32, int64, float32, float64, string: the first that holds every value), with
defaults 0 / "".
"""

from __future__ import annotations

import collections
import csv
import io

from tensorweave import dtypes
from tensorweave.data import gfile
from tensorweave.data.dataset import Dataset
from tensorweave.data.transforms.experimental import CsvDataset

_ORDER = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64, dtypes.string]


def _rows(filenames, delim, quote, header, compression, limit):
    import gzip
    import zlib

    out = []
    for name in filenames:
        with gfile.GFile(name, "rb") as f:
            data = f.read()
        if compression == "GZIP":
            data = gzip.decompress(data)
        elif compression == "ZLIB":
            data = zlib.decompress(data)
        reader = csv.reader(io.StringIO(data.decode("utf-8")), delimiter=delim,
                            quoting=csv.QUOTE_MINIMAL if quote else csv.QUOTE_NONE)
        rows = list(reader)
        out.extend(rows[1:] if header else rows)
        if len(out) >= limit:
            break
    return out[:limit]


def _fits(text: str, dtype) -> bool:
    try:
        if dtype in (dtypes.int32, dtypes.int64):
            v = int(text)
            return dtype.min <= v <= dtype.max
        if dtype in (dtypes.float32, dtypes.float64):
            float(text)
        return True
    except ValueError:
        return False


def _infer(rows, n_cols, na_value) -> list:
    found = [0] * n_cols
    for row in rows:
        for i, text in enumerate(row[:n_cols]):
            if text in ("", na_value):
                continue
            while not _fits(text, _ORDER[found[i]]):
                found[i] += 1
    return [_ORDER[k] for k in found]


def _header(filenames, delim, quote, compression) -> list:
    first = _rows(filenames[:1], delim, quote, False, compression, 1)
    if not first:
        raise ValueError("Cannot infer column names from an empty file: pass column_names")
    return first[0]


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None,
                     label_name=None, select_columns=None, field_delim=",",
                     use_quote_delim=True, na_value="", header=True, num_epochs=None,
                     shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False,
                     num_rows_for_inference=100, compression_type=None, ignore_errors=False):
    """Batches of (features dict, label) — or features dict without `label_name` — from
    the CSV files matching `file_pattern` (a pattern or a list of them)."""
    patterns = [file_pattern] if isinstance(file_pattern, str) else list(file_pattern)
    filenames = sorted(f for p in patterns for f in gfile.glob(p))
    if not filenames:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    if column_names is None:
        if not header:
            raise ValueError("Cannot infer column names without a header line.")
        column_names = _header(filenames, field_delim, use_quote_delim, compression_type)
    column_names = list(column_names)
    select = _select(select_columns, column_names)
    names = [column_names[i] for i in select] if select else column_names
    if label_name is not None and label_name not in names:
        raise ValueError(f"`label_name` {label_name} is not among the columns {names}.")
    defaults = column_defaults
    if defaults is None:
        rows = _rows(filenames, field_delim, use_quote_delim, header, compression_type,
                     num_rows_for_inference)
        types = _infer(rows, len(column_names), na_value)
        types = [types[i] for i in select] if select else types
        defaults = [[""] if t == dtypes.string else [t.np_dtype.type(0)] for t in types]

    def read(filename):
        return CsvDataset(filename, defaults, compression_type=compression_type,
                          header=header, field_delim=field_delim,
                          use_quote_delim=use_quote_delim, na_value=na_value,
                          select_cols=select or None)

    ds = Dataset.from_tensor_slices(filenames)
    if shuffle:
        ds = ds.shuffle(len(filenames), seed=shuffle_seed)
    ds = ds.interleave(read, cycle_length=num_parallel_reads or 1, block_length=1)
    if ignore_errors:
        from tensorweave.data.transforms.experimental import ignore_errors as _ignore

        ds = ds.apply(_ignore())
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    ds = ds.repeat(num_epochs).batch(batch_size, drop_remainder=num_epochs is None)

    def to_dict(*columns):
        features = collections.OrderedDict(zip(names, columns))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label

    return ds.map(to_dict).prefetch(prefetch_buffer_size or 1)


def _select(select_columns, column_names) -> list:
    if select_columns is None:
        return []
    out = [column_names.index(c) if isinstance(c, str) else int(c) for c in select_columns]
    return sorted(out)
