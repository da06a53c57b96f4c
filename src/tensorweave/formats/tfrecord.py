"""TFRecord files: TensorFlow's framing, written and read one record at a time.

Each record is `u64 length | u32 masked_crc32c(length bytes) | data | u32 masked_crc32c(data)`,
little-endian, with CRC-32C (Castagnoli) masked as `rotr(crc, 15) + 0xa282ead8`. With ZLIB or
GZIP compression the whole framed stream is compressed (no per-record flag, no magic number),
so a reader must be told the compression type. An empty file holds zero records.

Reading streams the file in chunks and never holds more than one chunk plus the current
record in memory:
  * `RecordReader(path, compression_type)`: `read()` -> `Record(data, offset, index)` or None
    at the end; iteration yields Records; `read_many(n)` -> up to n records' bytes, the fast
    bulk path (for batching readers).
  * `iter_records(path, compression_type)`: a generator of Records that closes the file.
  * `tf_record_iterator(path, options)`: TF1's generator of record bytes.

Error contract of the readers:
  * `errors.NotFoundError`: the file does not exist (raised when the reader opens).
  * `errors.DataLossError`: a bad length CRC, a bad data CRC, a record cut short by the end
    of the file, or a truncated/corrupt ZLIB or GZIP stream. The message starts with TF's words
    ("corrupted record at <offset>", "truncated record at <offset>", with TF's offset: that of
    the part that failed, the header or the data 12 bytes later, in the uncompressed stream) and
    names the file, the record's index (0-based position in the file) and the offset of the
    record's header. The error carries them as attributes: `filename`, `offset` (the header's,
    as `Record.offset`), `record_index`, and `recoverable`.
  * After a DataLossError with `recoverable=True` (only a bad data CRC: the length was intact,
    so the next record's position is known) the next `read()` returns the record after the bad
    one. After any other DataLossError the reader is exhausted: `read()` returns None. So a
    caller that skips errors always makes progress and never loops on the same bad record.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterator
from typing import NamedTuple

import google_crc32c

from tensorweave import errors

__all__ = [
    "TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator",
    "RecordReader", "Record", "iter_records", "masked_crc32c", "compression_type_string",
]

_MASK_DELTA = 0xA282EAD8
_HEADER = struct.Struct("<QI")
_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_CHUNK = 1 << 20
_MAX_RECORD = 1 << 40
_crc = google_crc32c.value


def masked_crc32c(data) -> int:
    """TF's masked CRC-32C of `data` (bytes-like)."""
    crc = _crc(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


# -- options ---------------------------------------------------------------------------------
class TFRecordCompressionType:
    """The compression of a TFRecord stream (TF1's enum)."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_TYPE_NAMES = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
               TFRecordCompressionType.GZIP: "GZIP"}
_WBITS = {"ZLIB": zlib.MAX_WBITS, "GZIP": zlib.MAX_WBITS + 16}


class TFRecordOptions:
    """Options for writing (and reading) TFRecord files: TF1's `tf.io.TFRecordOptions`.

    `compression_type` is None, "", "ZLIB", "GZIP" or a `TFRecordCompressionType`. The zlib
    knobs are passed to zlib as given (`window_bits` as zlib takes it: add 16 for GZIP, as TF).
    `flush_mode`, `input_buffer_size` and `output_buffer_size` are accepted for compatibility.
    """

    compression_type_map = dict(_TYPE_NAMES)

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy
        compression_type_string(self)  # validates

    @classmethod
    def get_compression_type_string(cls, options) -> str:
        """"", "ZLIB" or "GZIP" for `options` (TFRecordOptions, a type, a string or None)."""
        return compression_type_string(options)

    def _compressor(self, kind: str):
        level = -1 if self.compression_level is None else int(self.compression_level)
        wbits = _WBITS[kind] if self.window_bits is None else int(self.window_bits)
        mem = 8 if self.mem_level is None else int(self.mem_level)
        strategy = 0 if self.compression_strategy is None else int(self.compression_strategy)
        return zlib.compressobj(level, zlib.DEFLATED, wbits, mem, strategy)


def compression_type_string(options) -> str:
    """Normalizes a compression spec to "", "ZLIB" or "GZIP".

    Raises:
      ValueError: an unknown compression type.
    """
    if options is None:
        return ""
    if isinstance(options, TFRecordOptions):
        options = options.compression_type
        if options is None:
            return ""
    if isinstance(options, int) and options in _TYPE_NAMES:
        return _TYPE_NAMES[options]
    if isinstance(options, bytes):
        options = options.decode()
    if isinstance(options, str) and options.upper() in ("", "ZLIB", "GZIP"):
        return options.upper()
    raise ValueError(f'Unsupported compression type {options!r}: use "", "ZLIB" or "GZIP"')


def _as_options(options) -> TFRecordOptions:
    if isinstance(options, TFRecordOptions):
        return options
    return TFRecordOptions(compression_type_string(options))


# -- writing ---------------------------------------------------------------------------------
class TFRecordWriter:
    """Writes records to a TFRecord file (TF1's `tf.io.TFRecordWriter`).

    Usable as a context manager; `close()` flushes, syncs the file to disk and closes it, so
    a file written inside `with` is complete when the block ends. Not thread-safe.

    Example:
      with TFRecordWriter("/tmp/a.tfrecord", "GZIP") as w:
          w.write(example.SerializeToString())

    Raises:
      errors.NotFoundError / PermissionDeniedError: the file cannot be created.
      errors.FailedPreconditionError: `write` or `flush` after `close`.
    """

    def __init__(self, path, options=None):
        self._path = os.fspath(path)
        opts = _as_options(options)
        kind = compression_type_string(opts)
        self._z = opts._compressor(kind) if kind else None
        self._f = _open(self._path, "wb", _CHUNK)
        self._closed = False

    def write(self, record) -> None:
        """Appends one record (bytes; str is UTF-8 encoded)."""
        if self._closed:
            raise errors.FailedPreconditionError(None, None, "Writer is closed.")
        if isinstance(record, str):
            record = record.encode()
        n = len(record)
        header = _HEADER.pack(n, masked_crc32c(_U64.pack(n)))
        footer = _U32.pack(masked_crc32c(record))
        if self._z is not None:
            self._f.write(self._z.compress(b"".join((header, record, footer))))
        else:  # three buffered writes: no copy of the record into a framed string
            self._f.write(header)
            self._f.write(record)
            self._f.write(footer)

    def flush(self) -> None:
        """Pushes everything written so far to the file (a sync flush when compressing)."""
        if self._closed:
            raise errors.FailedPreconditionError(None, None, "Writer is closed.")
        if self._z is not None:
            self._f.write(self._z.flush(zlib.Z_SYNC_FLUSH))
        self._f.flush()

    def close(self) -> None:
        """Finishes the compressed stream, flushes, fsyncs and closes. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._z is not None:
                self._f.write(self._z.flush(zlib.Z_FINISH))
            self._f.flush()
            os.fsync(self._f.fileno())
        finally:
            self._f.close()

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        f = getattr(self, "_f", None)
        if f is not None and not getattr(self, "_closed", True):
            self.close()


def _open(path: str, mode: str, buffering: int = -1):
    try:
        return open(path, mode, buffering)  # noqa: SIM115 - owned by the reader/writer
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(None, None, f"{path}; Is a directory") from None
    except PermissionError:
        raise errors.PermissionDeniedError(None, None, f"{path}; Permission denied") from None


# -- reading ---------------------------------------------------------------------------------
class Record(NamedTuple):
    """One record: its bytes, the byte offset of its header in the (uncompressed) stream and
    its 0-based index in the file."""

    data: bytes
    offset: int
    index: int


class _StreamError(Exception):
    """The compressed stream ended early or is not valid ZLIB/GZIP data."""


class _Chunks:
    """Yields the (decompressed) stream in chunks of at most `_CHUNK` bytes; b"" at the end."""

    def __init__(self, f, kind: str):
        self._f = f
        self._kind = kind
        self._wbits = _WBITS.get(kind, 0)
        self._d = zlib.decompressobj(self._wbits) if kind else None
        self._started = False

    def next(self) -> bytes:
        if self._d is None:
            return self._f.read(_CHUNK)
        while True:
            out = self._inflate_step()
            if out is None or out:
                return out or b""

    def _inflate_step(self) -> bytes | None:
        """Decompressed bytes (maybe empty: call again), or None at a clean end."""
        d = self._d
        if d.unconsumed_tail:
            data = d.unconsumed_tail
        elif d.eof:
            data = d.unused_data or self._f.read(_CHUNK)
            if not data:
                return None
            d = self._d = zlib.decompressobj(self._wbits)  # a further member follows
        else:
            data = self._f.read(_CHUNK)
            if not data:
                if not self._started:
                    return None  # an empty file holds no records
                raise _StreamError(f"truncated {self._kind} stream: the data ends before the "
                                   "end-of-stream marker")
        self._started = True
        try:
            return d.decompress(data, _CHUNK)
        except zlib.error as e:
            raise _StreamError(f"corrupt {self._kind} stream ({e})") from None


class RecordReader:
    """Reads one TFRecord file record by record (see the module docstring for errors).

    Args:
      path: the file.
      compression_type: None, "", "ZLIB", "GZIP", a `TFRecordCompressionType` or a
        `TFRecordOptions`.

    `read()` returns the next `Record` or None at the end; iterating yields `Record`s.
    `offset` and `index` are those of the next record. Not thread-safe: one reader per thread.

    Raises:
      errors.NotFoundError: the file does not exist (at construction).
      errors.DataLossError: from `read()` for a bad record or stream.
    """

    def __init__(self, path, compression_type=None):
        self.path = os.fspath(path)
        self.compression_type = compression_type_string(compression_type)
        self._f = _open(self.path, "rb")
        self._chunks = _Chunks(self._f, self.compression_type)
        self._buf = b""
        self._pos = 0
        self._base = 0          # stream offset of _buf[0]
        self.index = 0
        self.exhausted = False
        self._pending: errors.DataLossError | None = None

    @property
    def offset(self) -> int:
        """The stream offset of the next record's header."""
        return self._base + self._pos

    def read(self) -> Record | None:
        """The next record, or None when the file is exhausted (see module docstring)."""
        if self._pending is not None:
            err, self._pending = self._pending, None
            raise err
        if self.exhausted:
            return None
        buf, pos = self._buf, self._pos
        if len(buf) - pos < 12 and not self._fill(12):
            return self._end_of_data()
        buf, pos = self._buf, self._pos
        length, len_crc = _HEADER.unpack_from(buf, pos)
        if masked_crc32c(buf[pos:pos + 8]) != len_crc:
            raise self._error("corrupted", "length CRC mismatch", recoverable=False)
        if length > _MAX_RECORD:
            raise self._error("corrupted", f"record length {length} is too large", False)
        need = 16 + length
        if len(buf) - pos < need:
            if not self._fill(need):
                raise self._error("truncated", f"the file ends inside the record (needs "
                                  f"{need} bytes, {len(self._buf) - self._pos} left)", False,
                                  part=12)
            buf, pos = self._buf, self._pos
        data = buf[pos + 12:pos + 12 + length]
        (data_crc,) = _U32.unpack_from(buf, pos + 12 + length)
        record = Record(data, self._base + pos, self.index)
        self._pos = pos + need
        self.index += 1
        if masked_crc32c(data) != data_crc:
            # NOTE: the reader has already stepped past the bad record, so reading on works.
            raise self._error("corrupted", "data CRC mismatch", True, record.offset,
                              record.index, part=12)
        return record

    def read_many(self, n: int) -> list[bytes]:
        """Up to `n` records' bytes (fewer only at the end of the file; [] when exhausted).

        The fast way to read in bulk: records already in the buffer are sliced out in one
        loop. Errors follow the module contract; when an error comes after some records of
        this call, those records are returned and the error is raised by the next call (so
        nothing read is lost). `index`/`offset` then name the record after the last returned.
        """
        if self._pending is not None:
            err, self._pending = self._pending, None
            raise err
        out: list[bytes] = []
        while len(out) < n and not self.exhausted:
            self._slice_buffered(out, n)
            if len(out) >= n:
                break
            try:
                rec = self.read()  # refills the buffer, or ends, or raises
            except errors.DataLossError as e:
                if not out:
                    raise
                self._pending = e
                break
            if rec is None:
                break
            out.append(rec.data)
        return out

    def _slice_buffered(self, out: list, n: int) -> None:
        """Appends the complete, valid records already in the buffer (until `out` has `n`);
        stops before anything else, which `read()` then handles."""
        buf, pos = self._buf, self._pos
        end = len(buf)
        unpack, crc, u32 = _HEADER.unpack_from, _crc, _U32.unpack_from
        first = len(out)
        while len(out) < n and end - pos >= 12:
            length, len_crc = unpack(buf, pos)
            c = crc(buf[pos:pos + 8])
            if (((c >> 15) | (c << 17)) + _MASK_DELTA) & 0xFFFFFFFF != len_crc:
                break
            stop = pos + 16 + length
            if stop > end:
                break
            data = buf[pos + 12:stop - 4]
            c = crc(data)
            if (((c >> 15) | (c << 17)) + _MASK_DELTA) & 0xFFFFFFFF != u32(buf, stop - 4)[0]:
                break
            out.append(data)
            pos = stop
        self.index += len(out) - first
        self._pos = pos

    def _fill(self, need: int) -> bool:
        """Makes `need` bytes available at `_pos`; False when the stream ends first."""
        parts = [self._buf[self._pos:]]
        have = len(parts[0])
        self._base += self._pos
        while have < need:
            try:
                chunk = self._chunks.next()
            except _StreamError as e:
                self._buf, self._pos = b"".join(parts), 0
                raise self._error("truncated", str(e), False) from None
            if not chunk:
                break
            parts.append(chunk)
            have += len(chunk)
        self._buf, self._pos = (parts[0] if len(parts) == 1 else b"".join(parts)), 0
        return have >= need

    def _end_of_data(self) -> None:
        if len(self._buf) - self._pos:
            raise self._error("truncated", f"the file ends inside the record header "
                              f"({len(self._buf) - self._pos} of 12 bytes)", False)
        self.close()
        return None

    def _error(self, kind: str, detail: str, recoverable: bool, offset: int | None = None,
               index: int | None = None, part: int = 0) -> errors.DataLossError:
        """The DataLossError for the record at `offset`; `part` is 12 when its data failed."""
        offset = self.offset if offset is None else offset
        index = self.index if index is None else index
        msg = (f"{kind} record at {offset + part} in file '{self.path}' (record index {index}, "
               f"header at byte {offset}): {detail}")
        err = errors.DataLossError(None, None, msg)
        err.filename, err.offset, err.record_index = self.path, offset, index
        err.recoverable = recoverable
        if not recoverable:
            self.close()
        return err

    def close(self) -> None:
        """Releases the file; later `read()` calls return None."""
        self.exhausted = True
        self._buf = b""
        self._f.close()

    def __iter__(self) -> Iterator[Record]:
        while True:
            rec = self.read()
            if rec is None:
                return
            yield rec

    def __enter__(self) -> RecordReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def iter_records(path, compression_type=None) -> Iterator[Record]:
    """Yields `Record(data, offset, index)` for each record of `path`; the file is closed when
    the iterator ends, fails or is closed. Errors as `RecordReader`; the first DataLossError
    ends the iteration."""
    with RecordReader(path, compression_type) as reader:
        yield from reader


def tf_record_iterator(path, options=None) -> Iterator[bytes]:
    """TF1's `tf.io.tf_record_iterator`: yields each record's bytes.

    Raises (while iterating):
      errors.NotFoundError: `path` does not exist.
      errors.DataLossError: a corrupt or truncated record or stream (names file, offset, index).
    """
    with RecordReader(path, options) as reader:
        read = reader.read
        while True:
            rec = read()
            if rec is None:
                return
            yield rec.data
