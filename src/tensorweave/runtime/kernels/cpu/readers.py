"""CPU kernels of TF1's readers (TFRecordReaderV2, TextLineReaderV2, WholeFileReaderV2).

A `ReaderState` lives in the device's resource container (shared by `shared_name`) and flows
as the value of the reader's `resource` handle. `ReaderReadV2` produces one record: when the
reader has no current file it dequeues the next name from the queue (blocking, honouring
the step deadline; a closed, drained queue raises OutOfRangeError as the queue does).
Keys follow TF: "file:byte_offset" (TFRecord), "file:line_number" (text, 1-based), the file
name (whole file). Thread-safety: reads on one reader are serialized by its lock.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.formats.tfrecord import RecordReader
from tensorweave.runtime.kernels.registry import register_kernel

_SLICE_S = 0.05


class ReaderState:
    """A reader: its current work item (file), and the records/files counts."""

    kind = "ReaderBase"

    def __init__(self, name: str):
        self.name = name
        self.lock = threading.Lock()
        self.work: str | None = None
        self.records_produced = 0
        self.units_completed = 0

    # -- per-file hooks (subclasses) --------------------------------------------------------
    def start(self, path: str) -> None:
        """Opens `path` as the current work item."""

    def next_record(self):
        """(key, value) of the next record of the current file, or None at its end."""
        raise NotImplementedError

    def finish(self) -> None:
        """Closes the current file."""

    # -- the read protocol ------------------------------------------------------------------
    def _acquire(self, ctx) -> None:
        while not self.lock.acquire(timeout=_SLICE_S):
            if ctx is not None:
                ctx.check()

    def _next_work(self, ctx, queue) -> None:
        (el,) = queue.dequeue(ctx, 1)
        name = np.asarray(el[0]).item()
        self.work = name.decode() if isinstance(name, bytes) else str(name)
        self.start(self.work)

    def read_one(self, ctx, queue):
        """The next (key, value), moving on to the queue's next file as files end."""
        while True:
            if self.work is None:
                self._next_work(ctx, queue)
            rec = self.next_record()
            if rec is not None:
                self.records_produced += 1
                return rec
            self.finish()
            self.work = None
            self.units_completed += 1

    def read(self, ctx, queue):
        self._acquire(ctx)
        try:
            return self.read_one(ctx, queue)
        finally:
            self.lock.release()

    def read_up_to(self, ctx, queue, n: int):
        """Up to `n` records; fewer when the queue runs out after at least one."""
        self._acquire(ctx)
        try:
            out: list = []
            while len(out) < n:
                try:
                    out.append(self.read_one(ctx, queue))
                except errors.OutOfRangeError:
                    if not out:
                        raise
                    break
            return out
        finally:
            self.lock.release()

    def reset(self) -> None:
        with self.lock:
            if self.work is not None:
                self.finish()
            self.work = None
            self.records_produced = self.units_completed = 0

    def close(self) -> None:
        """Session teardown: closes the open file."""
        if self.work is not None:
            self.finish()
            self.work = None


class TFRecordReaderState(ReaderState):
    kind = "TFRecordReader"

    def __init__(self, name: str, compression_type: str):
        super().__init__(name)
        self.compression_type = compression_type
        self._reader = None

    def start(self, path: str) -> None:
        self._reader = RecordReader(path, self.compression_type)

    def next_record(self):
        offset = self._reader.offset
        rec = self._reader.read()
        return None if rec is None else (f"{self.work}:{offset}", bytes(rec.data))

    def finish(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None


class TextLineReaderState(ReaderState):
    kind = "TextLineReader"

    def __init__(self, name: str, skip_header_lines: int):
        super().__init__(name)
        self.skip_header_lines = skip_header_lines
        self._f = None
        self._line = 0

    def start(self, path: str) -> None:
        try:
            self._f = open(path, "rb")  # noqa: SIM115 - closed in finish()
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, f"{path}; No such file or directory") \
                from None
        self._line = 0
        for _ in range(self.skip_header_lines):
            if not self._f.readline():
                break
            self._line += 1

    def next_record(self):
        line = self._f.readline()
        if not line:
            return None
        self._line += 1
        line = line[:-1] if line.endswith(b"\n") else line
        line = line[:-1] if line.endswith(b"\r") else line
        return f"{self.work}:{self._line}", line

    def finish(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None


class WholeFileReaderState(ReaderState):
    kind = "WholeFileReader"

    def start(self, path: str) -> None:
        self._done = False

    def next_record(self):
        if self._done:
            return None
        self._done = True
        try:
            with open(self.work, "rb") as f:
                return self.work, f.read()
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, f"{self.work}; No such file or directory") \
                from None


class FixedLengthRecordReaderState(ReaderState):
    """Records of `record_bytes` between a header and a footer, `hop_bytes` apart (0: back to
    back); `encoding` ZLIB or GZIP decompresses the file first. Keys are "file:index"."""

    kind = "FixedLengthRecordReader"

    def __init__(self, name: str, header: int, record: int, footer: int, hop: int,
                 encoding: str):
        super().__init__(name)
        if record <= 0 or header < 0 or footer < 0 or hop < 0:
            raise errors.InvalidArgumentError(
                None, None, f"FixedLengthRecordReader: record_bytes must be > 0 and "
                            f"header_bytes, footer_bytes, hop_bytes >= 0, got {record}, "
                            f"{header}, {footer}, {hop}")
        if encoding not in ("", "ZLIB", "GZIP"):
            raise errors.InvalidArgumentError(None, None, f"FixedLengthRecordReader: unknown "
                                                          f"encoding '{encoding}'")
        self.layout = (header, record, footer, encoding, hop)
        self._records = None
        self._index = 0

    def start(self, path: str) -> None:
        from tensorweave.runtime.kernels.cpu.dataset_readers import fixed_length_records

        header, record, footer, encoding, hop = self.layout
        self._records = fixed_length_records(path, header, record, footer, encoding, hop)
        self._index = 0

    def next_record(self):
        rec = next(self._records, None)
        if rec is None:
            return None
        self._index += 1
        return f"{self.work}:{self._index - 1}", rec

    def finish(self) -> None:
        self._records = None


class LMDBReaderState(ReaderState):
    """The records of LMDB data files (opened read-only, without lock file or subdirectory,
    as TF's LMDBReader does) in key order: (key, value)."""

    kind = "LMDBReader"

    def __init__(self, name: str):
        super().__init__(name)
        self._env: Any = None
        self._txn: Any = None
        self._cursor: Any = None
        self._more = False

    def start(self, path: str) -> None:
        import lmdb

        try:
            self._env = lmdb.open(path, subdir=False, readonly=True, lock=False, max_dbs=0)
        except lmdb.Error as e:
            raise errors.InvalidArgumentError(None, None, f"LMDBReader: cannot open {path}: "
                                                          f"{e}") from None
        self._txn = self._env.begin(buffers=False)
        self._cursor = self._txn.cursor()
        self._more = self._cursor.first()

    def next_record(self):
        if not self._more:
            return None
        key, value = self._cursor.key(), self._cursor.value()
        self._more = self._cursor.next()
        return key, value

    def finish(self) -> None:
        if self._env is not None:
            self._cursor.close()
            self._txn.abort()
            self._env.close()
        self._env = self._txn = self._cursor = None


# -- kernels ---------------------------------------------------------------------------------


def _reader_factory(make):
    def factory(node):
        key = node.attr("shared_name") or f"_reader/{node.name}"

        def create():
            return make(node, node.attr("shared_name") or node.name)
        if node.resources is None:
            r = create()
        else:
            r = node.resources.lookup_or_create(node.attr("container") or "", key, create)
        if not isinstance(r, ReaderState):
            raise errors.InvalidArgumentError(None, None, f"Resource '{key}' is not a reader")
        return lambda: r
    return factory


register_kernel("TFRecordReaderV2")(_reader_factory(
    lambda node, name: TFRecordReaderState(name, node.attr("compression_type") or "")))
register_kernel("TextLineReaderV2")(_reader_factory(
    lambda node, name: TextLineReaderState(name, node.attr("skip_header_lines") or 0)))
register_kernel("WholeFileReaderV2")(_reader_factory(
    lambda node, name: WholeFileReaderState(name)))
register_kernel("LMDBReader")(_reader_factory(lambda node, name: LMDBReaderState(name)))
register_kernel("FixedLengthRecordReaderV2")(_reader_factory(
    lambda node, name: FixedLengthRecordReaderState(
        name, int(node.attr("header_bytes")), int(node.attr("record_bytes")),
        int(node.attr("footer_bytes")), int(node.attr("hop_bytes")),
        node.attr("encoding") or "")))


def _bytes(x) -> np.ndarray:
    return np.array(x.encode() if isinstance(x, str) else x, dtype=object)


@register_kernel("FakeQueue")
def _fake_queue(node):
    return lambda queue: queue


@register_kernel("ReaderRead", context=True)
@register_kernel("ReaderReadV2", context=True)
def _read(node):
    def run(ctx, reader, queue):
        key, value = reader.read(ctx, queue)
        return _bytes(key), _bytes(value)
    return run


@register_kernel("ReaderReadUpTo", context=True)
@register_kernel("ReaderReadUpToV2", context=True)
def _read_up_to(node):
    def run(ctx, reader, queue, n):
        n = int(n)
        if n <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"num_records must be > 0, got {n}")
        recs = reader.read_up_to(ctx, queue, n)
        keys = np.empty(len(recs), dtype=object)
        values = np.empty(len(recs), dtype=object)
        for i, (k, v) in enumerate(recs):
            keys[i], values[i] = _bytes(k), v
        return keys, values
    return run


@register_kernel("ReaderNumRecordsProduced")
@register_kernel("ReaderNumRecordsProducedV2")
def _num_records(node):
    return lambda reader: np.int64(reader.records_produced)


@register_kernel("ReaderNumWorkUnitsCompleted")
@register_kernel("ReaderNumWorkUnitsCompletedV2")
def _num_units(node):
    return lambda reader: np.int64(reader.units_completed)


@register_kernel("ReaderReset")
@register_kernel("ReaderResetV2")
def _reset(node):
    def run(reader):
        reader.reset()
    return run
