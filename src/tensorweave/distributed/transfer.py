"""Tensors as a stream of RecvTensorResponse messages: raw bytes in chunks, never elements.

A numeric tensor travels as a header (dtype and shape) followed by its little-endian element
bytes cut into `CHUNK_BYTES` pieces, so no gRPC message limit (4 MB default, 2 GB hard) bounds
a tensor's size; other tensors (strings, scalars, empty) travel whole in the header.
This is the fallback: a task with a bulk port (distributed/bulk.py, ~3x faster) serves pulls
there, and with TLS configured everything takes this path.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.proto import convert
from tensorweave.proto import worker_service_pb2 as pb
from tensorweave.runtime.step import DEAD

CHUNK_BYTES = 1 << 20  # measured best of 256K..16M here (grpc python ~0.4 GB/s streaming)
_RAW_KINDS = frozenset("biufc")


def to_chunks(value, is_dead: bool = False,
              chunk_bytes: int = CHUNK_BYTES) -> Iterator[pb.RecvTensorResponse]:
    """The messages carrying `value` (a numpy array or scalar, or DEAD)."""
    if is_dead or value is DEAD:
        yield pb.RecvTensorResponse(is_dead=True)
        return
    arr = np.asarray(value)
    if arr.dtype.kind not in _RAW_KINDS or arr.size <= 1:
        yield pb.RecvTensorResponse(tensor=convert.tensor_to_proto(arr))
        return
    arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
    header = convert.tensor_to_proto(np.empty(0, arr.dtype))
    header.tensor_shape.CopyFrom(convert.shape_to_proto(arr.shape))
    data = memoryview(arr.reshape(-1)).cast("B")
    yield pb.RecvTensorResponse(tensor=header, raw=True, total_bytes=data.nbytes)
    for start in range(0, data.nbytes, chunk_bytes):
        yield pb.RecvTensorResponse(chunk=data[start:start + chunk_bytes].tobytes())


def from_chunks(messages: Iterable[pb.RecvTensorResponse]) -> tuple[object, bool]:
    """(value, is_dead) from a stream `to_chunks` wrote (DEAD for a dead tensor).

    Raises: DataLossError when the stream ends early or carries more bytes than announced.
    """
    it = iter(messages)
    head = next(it, None)
    if head is None:
        raise errors.DataLossError(None, None, "RecvTensor stream ended before its header")
    if head.is_dead:
        return DEAD, True
    if not head.raw:
        return convert.tensor_from_proto(head.tensor), False
    buf = bytearray(head.total_bytes)
    at = 0
    for msg in it:
        n = len(msg.chunk)
        if at + n > len(buf):
            raise errors.DataLossError(None, None, f"RecvTensor stream carries more than the "
                                                   f"{len(buf)} bytes it announced")
        buf[at:at + n] = msg.chunk
        at += n
    if at != len(buf):
        raise errors.DataLossError(None, None, f"RecvTensor stream ended after {at} of "
                                               f"{len(buf)} bytes")
    dtype = dtypes.as_dtype(head.tensor.dtype).np_dtype
    shape = convert.shape_from_proto(head.tensor.tensor_shape).as_tuple()
    arr = np.frombuffer(buf, dtype=dtype.newbyteorder("<")).reshape(shape)
    return (arr if arr.dtype == dtype else arr.astype(dtype)), False


__all__ = ["CHUNK_BYTES", "to_chunks", "from_chunks"]
