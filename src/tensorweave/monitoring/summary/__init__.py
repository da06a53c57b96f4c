"""`tf.summary` (TF1): summary ops, `merge`/`merge_all`, `FileWriter` and the event protos.

Importing this package registers the summary ops; their CPU kernels live in
`tensorweave.runtime.kernels.cpu.summary`.
"""

from tensorweave.monitoring.summary.writer import FileWriter, FileWriterCache
from tensorweave.ops.summary_ops import (
    histogram,
    image,
    merge,
    merge_all,
    scalar,
    tensor_summary,
    text,
)
from tensorweave.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata
from tensorweave.proto.summary_pb2 import (
    HistogramProto,
    Summary,
    SummaryDescription,
    SummaryMetadata,
)
from tensorweave.runtime.kernels.cpu import summary as _kernels  # noqa: F401

__all__ = [
    "scalar", "histogram", "image", "text", "tensor_summary", "merge", "merge_all",
    "FileWriter", "FileWriterCache", "Event", "SessionLog", "TaggedRunMetadata", "Summary",
    "SummaryDescription", "SummaryMetadata", "HistogramProto",
]
