"""The bulk transport's wire format (distributed/bulk.py): frames, tensor encoding, socket reads.

Little-endian throughout. One connection carries one request at a time:
  hello    once per connection, client to server: b"TWB1", u16 token length, the token;
           the server answers `HELLO_OK` (an OK reply without payload) before any request, or
           an error reply (a wrong token, the connection cap) and closes
  request  `REQUEST`: u8 kind, i64 id, f64 seconds the client waits, u32 body bytes; the body
           kind 1 (RECV): id = step id, body = the rendezvous key (UTF-8)
           kind 2 (CALL): id = method id, body = the serialized request message
           kind 3 (RECV_MANY): id = step id, body = rendezvous keys (UTF-8) joined by NUL;
           answered by one `FRAME` (u32 the key's position) + reply per key, in the order
           the tensors arrive; an error reply ends the answer early
  reply    `REPLY`: i32 code (0: OK, else the errors.* code), u8 is_dead, u8 encoding, u8 rank,
           i32 dtype enum, u64 payload bytes, u32 text bytes; then rank i64 dims; the text;
           the payload. Encodings: 0 the tensor's raw element bytes, 1 a serialized
           TensorProto (strings and other non-numeric tensors), 2 a call's serialized response.
An error reply has no payload; its text is "message\\0node\\0op" (node and op may be empty).
Nothing is pickled.
"""

from __future__ import annotations

import select
import socket
import struct
import time

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.runtime.step import DEAD

MAGIC = b"TWB1"
KIND_RECV, KIND_CALL, KIND_RECV_MANY = 1, 2, 3
RAW, PROTO, RESPONSE = 0, 1, 2
HELLO = struct.Struct("<4sH")
REQUEST = struct.Struct("<BqdI")
REPLY = struct.Struct("<iBBBiQI")
FRAME = struct.Struct("<I")
MAX_KEY_BYTES = 1 << 16     # a longer rendezvous key is a protocol error
MAX_KEYS_BYTES = 1 << 22    # ... and longer keys of one RECV_MANY
MAX_BODY_BYTES = 1 << 30    # a call's request or response (gRPC's limit here too)
_INLINE_BYTES = 1 << 16     # payloads up to this go out in the header's own send
_GROW_BYTES = 1 << 20       # an announced body is read (and allocated) this much at a time
_RAW_KINDS = frozenset("biufc")
HELLO_OK = REPLY.pack(0, 0, 2, 0, 0, 0, 0)  # the hello's acknowledgement
_KERNEL_LIMITS = hasattr(socket, "SO_RCVTIMEO") and hasattr(socket, "MSG_WAITALL")


class Closed(Exception):
    """The peer closed the connection after `got` bytes of what was being read."""

    def __init__(self, got: int):
        super().__init__(got)
        self.got = got


# -- tensors --------------------------------------------------------------------------------
_ENUMS: dict[np.dtype, int | None] = {}
_NP_DTYPES: dict[int, np.dtype] = {}


def raw_enum(npd: np.dtype) -> int | None:
    """The DataType enum of numeric numpy dtype `npd`; None when it has no raw encoding."""
    if npd not in _ENUMS:
        enum = None
        if npd.kind in _RAW_KINDS:
            try:
                enum = dtypes.as_dtype(npd.newbyteorder("=")).as_datatype_enum
            except (TypeError, ValueError, KeyError):
                enum = None
        _ENUMS[npd] = enum
    return _ENUMS[npd]


def wire_dtype(enum: int) -> np.dtype:
    """The little-endian numpy dtype of a raw DataType enum."""
    npd = _NP_DTYPES.get(enum)
    if npd is None:
        npd = _NP_DTYPES[enum] = np.dtype(dtypes.as_dtype(enum).np_dtype).newbyteorder("<")
    return npd


def encode_value(value, is_dead: bool) -> list:
    """The buffers of an OK reply carrying `value` (numpy array or scalar, or DEAD); the
    element bytes of a large numeric tensor are a memoryview of its own memory."""
    if is_dead or value is DEAD:
        return [REPLY.pack(0, 1, RAW, 0, 0, 0, 0)]
    arr = np.asarray(value)
    enum = raw_enum(arr.dtype)
    if enum is None:
        from tensorweave.proto import convert

        return encode_response(convert.tensor_to_proto(arr).SerializeToString(), PROTO)
    wire = arr.dtype.newbyteorder("<")
    if arr.dtype != wire or not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr, dtype=wire)
    head = (REPLY.pack(0, 0, RAW, arr.ndim, enum, arr.nbytes, 0)
            + struct.pack(f"<{arr.ndim}q", *arr.shape))
    if arr.nbytes <= _INLINE_BYTES:
        return [head + arr.tobytes()]
    return [head, memoryview(arr.reshape(-1).view(np.uint8))]


def encode_response(data: bytes, encoding: int = RESPONSE) -> list:
    """The buffers of an OK reply carrying serialized bytes `data`."""
    head = REPLY.pack(0, 0, encoding, 0, 0, len(data), 0)
    return [head + data] if len(data) <= _INLINE_BYTES else [head, data]


def encode_error(err: BaseException) -> bytes:
    """An error reply: the errors.* code and message (and failing node) of `err`; other
    exceptions get the codes gRPC servicers here give them (rpc.status_of)."""
    if isinstance(err, errors.OpError):
        code, message = err.error_code, err.render(with_node=False)
    elif isinstance(err, (ValueError, TypeError)):
        code, message = errors.INVALID_ARGUMENT, f"{type(err).__name__}: {err}"
    elif isinstance(err, MemoryError):
        code, message = errors.RESOURCE_EXHAUSTED, f"Out of memory: {err}"
    else:
        code, message = errors.INTERNAL, f"{type(err).__name__}: {err}"
    node = getattr(err, "node_def", None)
    parts = [message, str(getattr(node, "name", "") or ""), str(getattr(node, "op", "") or "")]
    text = "\0".join(parts).encode("utf-8", "replace")
    return REPLY.pack(code or errors.UNKNOWN, 0, RAW, 0, 0, 0, len(text)) + text


def _decode_error(code: int, text: bytes) -> errors.OpError:
    from tensorweave import ir

    message, _, rest = text.decode("utf-8", "replace").partition("\0")
    name, _, op = rest.partition("\0")
    return errors.make_error(code, message, ir.NodeDef(name, op) if name else None)


# -- reading --------------------------------------------------------------------------------
def recv_into(sock: socket.socket, view: memoryview) -> None:
    """Fills `view` from `sock`. Raises Closed (a reset counts as a close), TimeoutError,
    socket errors."""
    got, n = 0, view.nbytes
    flags = socket.MSG_WAITALL if sock.gettimeout() is None else 0
    while got < n:
        try:
            k = sock.recv_into(view[got:], 0, flags)
        except ConnectionResetError:
            k = 0
        except BlockingIOError:  # the kernel's stall limit (stall_mode) passed
            raise TimeoutError("the peer stalled") from None
        if not k:
            raise Closed(got)
        got += k


def recv_exact(sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    recv_into(sock, memoryview(buf))
    return buf


def recv_by(sock: socket.socket, n: int, deadline: float) -> bytearray:
    """`n` bytes from `sock`, all of them by `deadline` (time.monotonic()), however they
    trickle in. Raises TimeoutError, Closed, socket errors."""
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the peer did not send in time")
        sock.settimeout(left)
        try:
            k = sock.recv_into(view[got:])
        except ConnectionResetError:
            k = 0
        if not k:
            raise Closed(got)
        got += k
    return buf


def recv_body(sock: socket.socket, n: int) -> bytearray:
    """`n` bytes announced by the peer, allocated as they arrive (a stranger's claim of a
    gigabyte costs nothing until the bytes come)."""
    if n <= _GROW_BYTES:
        return recv_exact(sock, n)
    buf = bytearray()
    while len(buf) < n:
        buf += recv_exact(sock, min(_GROW_BYTES, n - len(buf)))
    return buf


def read_reply(sock: socket.socket, stall_s: float) -> tuple[object, bool, errors.OpError | None]:
    """Reads one reply: (value, is_dead, None), or (None, False, the server's error); a call's
    response is its serialized bytes. Once the header is in, the rest may stall `stall_s`.

    Raises: Closed (`got` counts the bytes read before), socket errors, DataLossError.
    """
    head = recv_exact(sock, REPLY.size)
    stall_mode(sock, stall_s)
    try:
        return _read_body(sock, *REPLY.unpack(head))
    except Closed:
        raise Closed(REPLY.size) from None


def _read_body(sock, code, dead, encoding, rank, enum, nbytes, ntext):
    dims = struct.unpack(f"<{rank}q", recv_exact(sock, 8 * rank)) if rank else ()
    text = bytes(recv_exact(sock, ntext)) if ntext else b""
    if code:
        return None, False, _decode_error(code, text)
    if dead:
        return DEAD, True, None
    if encoding != RAW:
        data = recv_body(sock, nbytes)
        if encoding == RESPONSE:
            return data, False, None
        from tensorweave.proto import convert, tensor_pb2

        return convert.tensor_from_proto(tensor_pb2.TensorProto.FromString(data)), False, None
    npd = wire_dtype(enum)
    arr = np.empty(dims, npd)
    if arr.nbytes != nbytes:
        raise errors.DataLossError(None, None, f"Bulk reply announces {nbytes} bytes for a "
                                               f"{npd} tensor of shape {dims}")
    if nbytes:
        recv_into(sock, memoryview(arr.reshape(-1).view(np.uint8)))
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr, False, None


def read_request(conn: socket.socket, stall_s: float, backstop_s: float,
                 head_by: float | None = None) -> tuple[int, int, float, bytearray]:
    """(kind, id, seconds to wait, body) of one request; its header must be in by `head_by`
    (a deadline, when given), its body may stall `stall_s`.

    Raises: Closed for a request that is not ours (never allocating what it announces).
    """
    head = (recv_exact(conn, REQUEST.size) if head_by is None
            else recv_by(conn, REQUEST.size, head_by))
    kind, ident, wait_s, n = REQUEST.unpack(head)
    limit = {KIND_RECV: MAX_KEY_BYTES, KIND_CALL: MAX_BODY_BYTES,
             KIND_RECV_MANY: MAX_KEYS_BYTES}.get(kind, -1)
    if n > limit or not 0.0 <= wait_s <= backstop_s:
        raise Closed(0)
    stall_mode(conn, stall_s)
    return kind, ident, wait_s, recv_body(conn, n)


# -- sockets --------------------------------------------------------------------------------
def tune(sock: socket.socket, stall_s: float) -> None:
    """No Nagle delay; the kernel's own send/receive limit `stall_s` (for `stall_mode`)."""
    global _KERNEL_LIMITS
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if _KERNEL_LIMITS:
        limit = struct.pack("ll", int(stall_s), int(stall_s % 1 * 1e6))
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, limit)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, limit)
        except (OSError, AttributeError):
            _KERNEL_LIMITS = False


def stall_mode(sock: socket.socket, stall_s: float) -> None:
    """Bulk data mode: each read or write may stall `stall_s` (the `tune` limit).

    NOTE: a blocking socket with the kernel's limits moves a whole tensor in one system call
    (MSG_WAITALL / sendall) without taking the GIL back in between, which other Python threads
    of the process (executors, gRPC) would otherwise hold for up to the switch interval each
    time: ~1.6x the throughput under load. Without kernel limits, Python's timeout.
    """
    sock.settimeout(None if _KERNEL_LIMITS else stall_s)


def peer_gone(sock: socket.socket) -> bool:
    """Whether the other end closed `sock` (a peer that awaits a reply sends nothing)."""
    return bool(closed_peers([sock], 0.0))


def closed_peers(socks: list, wait_s: float, talking: list | None = None) -> list:
    """Those of `socks` whose peer closed them (or that broke), waiting up to `wait_s` for
    any to become readable; `talking` gets those with bytes waiting instead. (poll, not
    select: descriptors past 1024 are fine.)"""
    poller, by_fd = select.poll(), {}
    for s in socks:
        try:
            fd = s.fileno()
        except (OSError, ValueError):
            fd = -1
        if fd < 0:
            continue
        by_fd[fd] = s
        poller.register(fd, select.POLLIN | select.POLLPRI)
    gone = [s for s in socks if s not in by_fd.values()]
    for fd, events in poller.poll(int(wait_s * 1000)):
        s = by_fd[fd]
        if events & (select.POLLERR | select.POLLNVAL):
            gone.append(s)
            continue
        try:
            if s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
                gone.append(s)
            elif talking is not None:
                talking.append(s)
        except BlockingIOError:
            pass
        except OSError:
            gone.append(s)
    return gone


def shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
