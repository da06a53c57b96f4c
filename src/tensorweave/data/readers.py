"""TF1's reader classes: `tf.TFRecordReader`, `tf.TextLineReader`, `tf.WholeFileReader`.

A reader takes file names from a queue (`tf.train.string_input_producer`) and produces
(key, value) string pairs, one record per `read` run. See `runtime/kernels/cpu/readers.py`.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.formats.tfrecord import compression_type_string
from tensorweave.ops import reader_ops  # noqa: F401 - registers the ops
from tensorweave.ops.apply import apply_op

__all__ = ["FixedLengthRecordReader", "LMDBReader", "ReaderBase", "TFRecordReader",
           "TextLineReader", "WholeFileReader"]


def _queue_ref(queue):
    return getattr(queue, "queue_ref", queue)


class ReaderBase:
    """Ops on one reader resource: read, read_up_to, counters and reset."""

    def __init__(self, reader_ref, supports_serialize=False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self):
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        return self._supports_serialize

    def _op(self, v2: str) -> str:
        """The V2 op for resource readers, TF1's V1 op for Ref(string) ones (LMDBReader)."""
        return v2 if self._reader_ref.dtype == dtypes.resource else v2[:-2]

    def _queue(self, queue):
        ref = _queue_ref(queue)
        if self._reader_ref.dtype == dtypes.resource:
            return ref
        return apply_op("FakeQueue", ref)

    def read(self, queue, name=None):
        """(key, value) scalar strings of the next record, taking files from `queue`."""
        op = self._op("ReaderReadV2")
        key, value = apply_op(op, self._reader_ref, self._queue(queue), name=name or op)
        return key, value

    def read_up_to(self, queue, num_records, name=None):
        """(keys, values) vectors of up to `num_records` records."""
        op = self._op("ReaderReadUpToV2")
        keys, values = apply_op(op, self._reader_ref, self._queue(queue), num_records,
                                name=name or op)
        return keys, values

    def num_records_produced(self, name=None):
        op = self._op("ReaderNumRecordsProducedV2")
        return apply_op(op, self._reader_ref, name=name or op)

    def num_work_units_completed(self, name=None):
        op = self._op("ReaderNumWorkUnitsCompletedV2")
        return apply_op(op, self._reader_ref, name=name or op)

    def reset(self, name=None):
        op = self._op("ReaderResetV2")
        return apply_op(op, self._reader_ref, name=name or op)


class TFRecordReader(ReaderBase):
    """Reads the records of TFRecord files (`options`: a TFRecordOptions or None)."""

    def __init__(self, name=None, options=None):
        ref = apply_op("TFRecordReaderV2", compression_type=compression_type_string(options),
                       name=name or "TFRecordReaderV2")
        super().__init__(ref)


class TextLineReader(ReaderBase):
    """Reads the lines of text files (without their newline), skipping header lines."""

    def __init__(self, skip_header_lines=None, name=None):
        ref = apply_op("TextLineReaderV2", skip_header_lines=skip_header_lines or 0,
                       name=name or "TextLineReaderV2")
        super().__init__(ref)


class WholeFileReader(ReaderBase):
    """Reads each file whole: key = file name, value = its contents."""

    def __init__(self, name=None):
        super().__init__(apply_op("WholeFileReaderV2", name=name or "WholeFileReaderV2"))


class FixedLengthRecordReader(ReaderBase):
    """Reads records of `record_bytes` after `header_bytes` and before `footer_bytes`, each
    `hop_bytes` after the previous one (0: back to back); `encoding` "ZLIB" or "GZIP" for
    compressed files. Keys are "file:record_index"."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        ref = apply_op("FixedLengthRecordReaderV2", record_bytes=record_bytes,
                       header_bytes=header_bytes or 0, footer_bytes=footer_bytes or 0,
                       hop_bytes=hop_bytes or 0, encoding=encoding or "",
                       name=name or "FixedLengthRecordReaderV2")
        super().__init__(ref)


class LMDBReader(ReaderBase):
    """Reads the key/value pairs of LMDB database files (each a data file, as TF opens them:
    no subdirectory), in key order: key = the database key, value = its value."""

    def __init__(self, name=None, options=None):
        super().__init__(apply_op("LMDBReader", name=name or "LMDBReader"))
