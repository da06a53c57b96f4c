"""Reader op registrations (TF1's `ReaderReadV2` family: names, inputs and attrs as TF).

A reader op outputs a scalar `resource` holding the runtime reader (TF1's LMDBReader, which
has no V2, a `Ref(string)` read by the V1 `ReaderRead` family; `FakeQueue` hands those a
resource queue, as TF does) (see
`runtime/kernels/cpu/readers.py`); `ReaderReadV2` takes it and a queue of file names. All
are stateful. The Python API (`tf.TFRecordReader` ...) is in `data/readers.py`.
"""

from __future__ import annotations

from tensorweave.ops.registry import register_op

OP_TYPES: list[str] = []   # every op type this module registers (for the test harness)

_SHARED = ["container: string = ''", "shared_name: string = ''"]


def _scalar(ctx):
    return [()]


def _scalars(ctx):
    return [(), ()]


def _vectors(ctx):
    return [(None,), (None,)]


def _register(name, **kw):
    OP_TYPES.append(name)
    register_op(name, stateful=True, **kw)


def _reader(name, extra=(), tail=()):
    _register(name, inputs=[], outputs=["reader_handle: resource"],
              attrs=list(extra) + _SHARED + list(tail), shape_fn=_scalar)


_reader("TFRecordReaderV2", tail=["compression_type: string = ''"])
_reader("TextLineReaderV2", ["skip_header_lines: int = 0"])
_reader("WholeFileReaderV2")
_reader("FixedLengthRecordReaderV2", ["header_bytes: int = 0", "record_bytes: int",
                                      "footer_bytes: int = 0", "hop_bytes: int = 0"],
        tail=["encoding: string = ''"])
_register("ReaderReadV2", inputs=["reader_handle: resource", "queue_handle: resource"],
          outputs=["key: string", "value: string"], shape_fn=_scalars)
_register("ReaderReadUpToV2", inputs=["reader_handle: resource", "queue_handle: resource",
                                      "num_records: int64"],
          outputs=["keys: string", "values: string"], shape_fn=_vectors)
_register("ReaderNumRecordsProducedV2", inputs=["reader_handle: resource"],
          outputs=["records_produced: int64"], shape_fn=_scalar)
_register("ReaderNumWorkUnitsCompletedV2", inputs=["reader_handle: resource"],
          outputs=["units_completed: int64"], shape_fn=_scalar)
_register("ReaderResetV2", inputs=["reader_handle: resource"])


# -- TF1's Ref(string)-handle readers (LMDBReader has no V2) and their read ops -----------
_register("LMDBReader", inputs=[], outputs=["reader_handle: Ref(string)"], attrs=_SHARED,
          shape_fn=lambda ctx: [(2,)])
_register("FakeQueue", inputs=["resource: resource"], outputs=["handle: Ref(string)"],
          shape_fn=lambda ctx: [(2,)])
_register("ReaderRead", inputs=["reader_handle: Ref(string)", "queue_handle: Ref(string)"],
          outputs=["key: string", "value: string"], shape_fn=_scalars)
_register("ReaderReadUpTo", inputs=["reader_handle: Ref(string)", "queue_handle: Ref(string)",
                                    "num_records: int64"],
          outputs=["keys: string", "values: string"], shape_fn=_vectors)
_register("ReaderNumRecordsProduced", inputs=["reader_handle: Ref(string)"],
          outputs=["records_produced: int64"], shape_fn=_scalar)
_register("ReaderNumWorkUnitsCompleted", inputs=["reader_handle: Ref(string)"],
          outputs=["units_completed: int64"], shape_fn=_scalar)
_register("ReaderReset", inputs=["reader_handle: Ref(string)"])
