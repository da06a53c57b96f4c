"""CPU kernels of the file and Python sources and of error skipping: TFRecordDataset,
TextLineDataset, FixedLengthRecordDatasetV2, _PyGeneratorDataset, IgnoreErrorsDataset.

File iterators are objects (not generators) so that an error for one record — a
DataLossError naming file, offset and record index, or NotFoundError for a missing file — is
raised from one `next` call and the following call moves on (to the next record, or the next
file): `IgnoreErrorsDataset` relies on that to always make progress.
"""

from __future__ import annotations

import gzip
import logging
import threading
import zlib

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.cpu.dataset import GenDataset, close_iter
from tensorweave.runtime.kernels.registry import register_kernel

log = logging.getLogger("tensorweave.data")


def _str(v) -> str:
    v = v.item() if isinstance(v, np.ndarray) else v
    return v.decode() if isinstance(v, bytes) else str(v)


def _files(filenames) -> list[str]:
    arr = np.asarray(filenames, dtype=object)
    if arr.ndim > 1:
        raise errors.InvalidArgumentError(None, None, "`filenames` must be a scalar or a vector.")
    return [_str(f) for f in arr.ravel()]


class FileRecordIterator:
    """Records of several files in order; `open_file(path)` gives a per-file iterator of
    bytes. An error is raised once and the next call continues after it."""

    def __init__(self, paths: list[str], open_file):
        self._paths = list(paths)
        self._open = open_file
        self._k = 0
        self._cur = None

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            if self._cur is None:
                if self._k >= len(self._paths):
                    raise StopIteration
                path = self._paths[self._k]
                self._k += 1
                self._cur = self._open(path)   # NotFoundError: the next call tries the next file
            try:
                return (np.array(next(self._cur), dtype=object),)
            except StopIteration:
                close_iter(self._cur)
                self._cur = None

    def close(self) -> None:
        close_iter(self._cur)
        self._cur = None


class _TFRecordFile:
    def __init__(self, path, compression):
        from tensorweave.formats.tfrecord import RecordReader

        self._r = RecordReader(path, compression or None)

    def __iter__(self):
        return self

    def __next__(self):
        rec = self._r.read()
        if rec is None:
            raise StopIteration
        return rec.data

    def close(self):
        self._r.close()


@register_kernel("TFRecordDataset")
def _tfrecord(node):
    def run(filenames, compression_type, buffer_size):
        paths, comp = _files(filenames), _str(compression_type)
        return GenDataset(lambda: FileRecordIterator(paths, lambda p: _TFRecordFile(p, comp)))
    return run


def _open_binary(path: str, compression: str):
    try:
        if compression == "GZIP":
            return gzip.open(path, "rb")
        f = open(path, "rb")  # noqa: SIM115 - closed by the iterator
        if compression == "ZLIB":
            data = zlib.decompress(f.read())
            f.close()
            import io

            return io.BytesIO(data)
        return f
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None


def _lines(path: str, compression: str):
    with _open_binary(path, compression) as f:
        for line in f:
            yield line.rstrip(b"\n").rstrip(b"\r")


@register_kernel("TextLineDataset")
def _text_line(node):
    def run(filenames, compression_type, buffer_size):
        paths, comp = _files(filenames), _str(compression_type)
        return GenDataset(lambda: FileRecordIterator(paths, lambda p: _lines(p, comp)))
    return run


def fixed_length_records(path, header, size, footer, compression, hop=0, strict=False):
    """The records of a fixed-length-record file (decompressed first when `compression` is
    ZLIB or GZIP): after `header` bytes and before the last `footer`, `size` bytes each, the
    next starting `hop` bytes after the previous one (`size` when hop is 0).

    Bytes that make no full record are dropped (TF's reader), or with `strict` (TF's
    FixedLengthRecordDataset) refused: an uncompressed file before any record
    (InvalidArgumentError), a compressed one after its full records (DataLossError)."""
    with _open_binary(path, compression) as f:
        data = f.read()
    end = len(data) - footer
    if strict and not hop and (end - header) % size:
        error = errors.DataLossError if compression else errors.InvalidArgumentError
        failure = error(None, None, f"Excluding the header ({header} bytes) and footer "
                                    f"({footer} bytes), input file \"{path}\" has body length "
                                    f"{end - header} bytes, which is not an exact multiple of "
                                    f"the record length ({size} bytes).")
        if not compression:
            raise failure
    else:
        failure = None
    step = hop or size
    pos = header
    while pos + size <= end:
        yield data[pos:pos + size]
        pos += step
    if failure is not None:
        raise failure


@register_kernel("FixedLengthRecordDatasetV2")
def _fixed_length(node):
    def run(filenames, header_bytes, record_bytes, footer_bytes, buffer_size,
            compression_type):
        paths, comp = _files(filenames), _str(compression_type)
        h, r, f = int(header_bytes), int(record_bytes), int(footer_bytes)
        if r <= 0 or h < 0 or f < 0:
            raise errors.InvalidArgumentError(None, None, "record_bytes must be > 0 and "
                                                          "header/footer bytes >= 0")
        return GenDataset(lambda: FileRecordIterator(
            paths, lambda p: fixed_length_records(p, h, r, f, comp, strict=True)))
    return run


# -- Python generators -------------------------------------------------------------------------
def _gen_elements(token, node):
    from tensorweave.ops.dataset_ops import lookup_generator

    make = lookup_generator(token)
    if make is None:
        raise errors.NotFoundError(None, None, f"Generator {token} is not registered in this "
                                               "process (from_generator runs only locally)")
    types = [t.np_dtype for t in node.attr("output_types")]
    shapes = list(node.attr("output_shapes"))
    for el in make():
        parts = el if isinstance(el, tuple) else (el,)
        if len(parts) != len(types):
            raise errors.InvalidArgumentError(
                None, None, f"`generator` yielded an element with {len(parts)} components "
                            f"where {len(types)} were expected")
        out = tuple(np.asarray(p, dtype=t) for p, t in zip(parts, types))
        for k, (a, shape) in enumerate(zip(out, shapes)):
            if not shape.is_compatible_with(a.shape):
                raise errors.InvalidArgumentError(
                    None, None, f"`generator` yielded an element of shape {list(a.shape)} "
                                f"where an element of shape {shape} was expected "
                                f"(component {k}).")
        yield out


@register_kernel("_PyGeneratorDataset")
def _py_generator(node):
    token = node.attr("token")
    return lambda: GenDataset(lambda: _gen_elements(token, node))


# -- ignore_errors -----------------------------------------------------------------------------
class SkipCounter:
    """How many elements an IgnoreErrorsDataset skipped (process-wide, by node name)."""

    def __init__(self):
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, name: str) -> int:
        with self._lock:
            self._counts[name] = self._counts.get(name, 0) + 1
            return self._counts[name]

    def get(self, name: str) -> int:
        with self._lock:
            return self._counts.get(name, 0)


SKIPPED = SkipCounter()


class IgnoreErrorsIterator:
    """Skips elements whose computation raised an OpError, always moving on: the input is
    asked for its next element after each error (inputs never repeat a failed element), and
    every skip is counted and logged."""

    def __init__(self, ds, node: str, name: str, log_each: bool):
        self._it = ds.iterate()
        self._node, self._name = node, name
        self._log = log_each

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            try:
                return next(self._it)
            except errors.OpError as e:
                n = SKIPPED.add(self._name)
                (log.warning if self._log else log.info)(
                    "%s (%s): skipped an element after %s (%d skipped so far): %s",
                    self._node, self._name,
                    type(e).__name__, n, e.message)

    def close(self) -> None:
        close_iter(self._it)


@register_kernel("IgnoreErrorsDataset")
def _ignore_errors(node):
    name = node.attr("_skip_counter") or node.name
    log_each = bool(node.attr("log_warning", True))
    return lambda ds: GenDataset(lambda: IgnoreErrorsIterator(ds, node.name, name,
                                                                 log_each))
