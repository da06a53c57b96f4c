"""File datasets: `TFRecordDataset`, `TextLineDataset`, `FixedLengthRecordDataset`.

Each reads its files in order, one element (a scalar tf.string) per record or line. A bad
record raises DataLossError naming the file, byte offset and record index; a missing file
NotFoundError. `num_parallel_reads` reads several files at once, interleaved one record from
each in turn (TF's deterministic order).
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.data.dataset import Dataset, _i64
from tensorweave.data.structure import Spec
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.shapes import TensorShape

_RECORD = Spec(dtypes.string, TensorShape([]))


def _filenames(filenames):
    t = convert_to_tensor(filenames, dtype=dtypes.string)
    if t.shape.ndims not in (None, 0, 1):
        raise TypeError("`filenames` must be a `tf.Tensor` of `tf.string` and rank 0 or 1.")
    return t


def _string(value):
    return convert_to_tensor("" if value is None else value, dtype=dtypes.string)


def _attrs() -> dict:
    return {"output_types": [dtypes.string], "output_shapes": [TensorShape([])]}


def _parallel(filenames, num_parallel_reads, make) -> Dataset | None:
    if num_parallel_reads is None or num_parallel_reads == 1:
        return None
    cycle = 2 if num_parallel_reads == -1 else int(num_parallel_reads)
    files = Dataset.from_tensor_slices(_filenames(filenames))
    return files.interleave(make, cycle_length=cycle, block_length=1)


class TFRecordDataset(Dataset):
    """Records of TFRecord files. `compression_type`: "", "ZLIB" or "GZIP"."""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        def one(f):
            return TFRecordDataset(f, compression_type, buffer_size)

        par = _parallel(filenames, num_parallel_reads, one)
        if par is not None:
            super().__init__(par._variant_tensor, par._structure)
            return
        v = apply_op("TFRecordDataset", _filenames(filenames), _string(compression_type),
                     _i64(256 * 1024 if buffer_size is None else buffer_size))
        super().__init__(v, _RECORD)


class TextLineDataset(Dataset):
    """Lines of text files, without their line endings."""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        def one(f):
            return TextLineDataset(f, compression_type, buffer_size)

        par = _parallel(filenames, num_parallel_reads, one)
        if par is not None:
            super().__init__(par._variant_tensor, par._structure)
            return
        v = apply_op("TextLineDataset", _filenames(filenames), _string(compression_type),
                     _i64(256 * 1024 if buffer_size is None else buffer_size))
        super().__init__(v, _RECORD)


class FixedLengthRecordDataset(Dataset):
    """Fixed-size records of files, after `header_bytes` and before `footer_bytes`."""

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None, compression_type=None, num_parallel_reads=None):
        def one(f):
            return FixedLengthRecordDataset(f, record_bytes, header_bytes, footer_bytes,
                                            buffer_size, compression_type)

        par = _parallel(filenames, num_parallel_reads, one)
        if par is not None:
            super().__init__(par._variant_tensor, par._structure)
            return
        v = apply_op("FixedLengthRecordDatasetV2", _filenames(filenames),
                     _i64(header_bytes or 0), _i64(record_bytes), _i64(footer_bytes or 0),
                     _i64(buffer_size or 256 * 1024), _string(compression_type))
        super().__init__(v, _RECORD)


def list_files(file_pattern, shuffle=None, seed=None) -> Dataset:
    """The files matching `file_pattern` (a glob, or a list of globs), sorted; shuffled
    (with `seed`) unless `shuffle=False`.

    NOTE: the pattern is expanded when the dataset is built (no MatchingFiles op yet).
    Raises ValueError when nothing matches (as TF's "No files matched pattern").
    """
    from tensorweave.data import gfile

    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
    names = sorted({f for p in patterns for f in gfile.glob(p if isinstance(p, str)
                                                            else p.decode())})
    if not names:
        raise ValueError(f"No files matched pattern: {', '.join(map(str, patterns))}")
    ds = Dataset.from_tensor_slices(np.array([n.encode() for n in names], dtype=object))
    if shuffle is None or shuffle:
        ds = ds.shuffle(len(names), seed=seed)
    return ds


__all__ = ["TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset", "list_files"]
