"""What every gRPC service here shares: message limits, deadlines, channels, and errors.

An `OpError` raised by a servicer becomes the gRPC status of its code with its message (the
failing node's name and op in trailing metadata); `error_from_rpc` turns that back into the same
`errors.*` class, so a remote error reads exactly like a local one.
"""

from __future__ import annotations

import threading

import grpc

from tensorweave import errors, ir

# NOTE: gRPC's defaults (4 MB receive, 8 KB of status metadata) are far too small for tensors
# and annotated error messages; every channel and server states its limits explicitly.
MAX_MESSAGE_BYTES = 1 << 30
MAX_METADATA_BYTES = 1 << 20
CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_metadata_size", MAX_METADATA_BYTES),
]
CONTROL_DEADLINE_S = 60.0       # registering, releasing, closing, listing, resetting
CONNECT_DEADLINE_S = 10.0       # reaching a server, unless operation_timeout_in_ms says
RUN_DEADLINE_S = 24 * 3600.0    # a step without a timeout (TF has none); a backstop only
RUN_GRACE_S = 5.0               # on top of a step's own timeout, so the step's error wins

_STATUS_BY_CODE = {sc.value[0]: sc for sc in grpc.StatusCode}
# NOTE: the failing node travels in trailing metadata so the client's session can annotate the
# error with where the user created the op, exactly as a local session does.
NODE_KEY, OP_KEY = "tw-node-name", "tw-node-op"


# -- errors ----------------------------------------------------------------------------------
def status_of(err: BaseException) -> tuple[grpc.StatusCode, str]:
    """The gRPC status code and details that carry `err` across the wire."""
    if isinstance(err, errors.OpError):
        return _STATUS_BY_CODE.get(err.error_code, grpc.StatusCode.UNKNOWN), err.message
    if isinstance(err, (ValueError, TypeError)):
        return grpc.StatusCode.INVALID_ARGUMENT, f"{type(err).__name__}: {err}"
    return grpc.StatusCode.INTERNAL, f"{type(err).__name__}: {err}"


def error_from_rpc(e: grpc.RpcError, address: str) -> errors.OpError:
    """The `errors.*` of a failed call: the server's own error, or a transport failure
    (UNAVAILABLE / DEADLINE_EXCEEDED) whose message names `address`."""
    code = e.code() if hasattr(e, "code") else grpc.StatusCode.UNKNOWN
    details = (e.details() if hasattr(e, "details") else None) or str(e)
    value = code.value[0] if code is not None else errors.UNKNOWN
    if value in (errors.UNAVAILABLE, errors.DEADLINE_EXCEEDED) and address not in details:
        details = f"{details} (server at {address})"
    meta = dict(e.trailing_metadata() or ()) if hasattr(e, "trailing_metadata") else {}
    node = None
    if meta.get(NODE_KEY):
        node = ir.NodeDef(meta[NODE_KEY], meta.get(OP_KEY, ""))
    return errors.make_error(value, details, node)


def node_metadata(err: BaseException) -> tuple:
    """Trailing metadata naming the failing node of `err` (empty when it names none)."""
    node = getattr(err, "node_def", None)
    if node is None or not str(getattr(node, "name", "") or "").isascii() or not node.name:
        return ()
    return ((NODE_KEY, str(node.name)), (OP_KEY, str(getattr(node, "op", "") or "")))



_channels: dict[str, grpc.Channel] = {}
_channels_lock = threading.Lock()


def channel_for(address: str) -> grpc.Channel:
    """One shared channel per `host:port` (channels are thread-safe and costly to open)."""
    with _channels_lock:
        ch = _channels.get(address)
        if ch is None:
            ch = _channels[address] = grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
        return ch


def rpc_method(fn):
    """Runs a servicer method; any error ends the call with its status and message."""

    def wrapped(self, request, context):
        try:
            return fn(self, request)
        except Exception as e:  # noqa: BLE001 -- every failure must reach the client
            code, details = status_of(e)
            context.set_trailing_metadata(node_metadata(e))
            context.abort(code, details)

    wrapped.__name__ = fn.__name__
    wrapped.__doc__ = fn.__doc__
    return wrapped



def run_deadline(step_s: float | None) -> float:
    """The RPC deadline of a step that may run `step_s` seconds (None: no step timeout)."""
    return RUN_DEADLINE_S if step_s is None else step_s + RUN_GRACE_S
