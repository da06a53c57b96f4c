"""What every gRPC service here shares: message limits, deadlines, channels, and errors.

An `OpError` raised by a servicer becomes the gRPC status of its code with its message (the
failing node's name and op in trailing metadata); `error_from_rpc` turns that back into the same
`errors.*` class, so a remote error reads exactly like a local one.
"""

from __future__ import annotations

import threading
import time

import grpc

from tensorweave import errors, ir
from tensorweave.runtime.step import Cancellation

# NOTE: gRPC's defaults (4 MB receive, 8 KB of status metadata) are far too small for tensors
# and annotated error messages; every channel and server states its limits explicitly.
MAX_MESSAGE_BYTES = 1 << 30
MAX_METADATA_BYTES = 1 << 20
CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_metadata_size", MAX_METADATA_BYTES),
    # NOTE: gRPC backs off up to 2 min between reconnects; a restarted task must be reachable
    # again within a second, not minutes.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
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
        # NOTE: the node travels in trailing metadata (node_metadata) when it can; the
        # receiver renders the message from the fields again, so it is not named twice.
        text = err.render(with_node=not node_metadata(err))
        return _STATUS_BY_CODE.get(err.error_code, grpc.StatusCode.UNKNOWN), text
    if isinstance(err, (ValueError, TypeError)):
        return grpc.StatusCode.INVALID_ARGUMENT, f"{type(err).__name__}: {err}"
    if isinstance(err, MemoryError):
        return grpc.StatusCode.RESOURCE_EXHAUSTED, f"Out of memory: {err}"
    return grpc.StatusCode.INTERNAL, f"{type(err).__name__}: {err}"


_PLAINTEXT_HINT = (
    "\nHINT: a server that serves TLS closes plaintext connections like this; if it does, "
    "give this client the CA that signed its certificate (TENSORWEAVE_TLS_CA, or "
    "tensorweave.distributed.security.configure(tls_ca=...))")
_CLIENT_CERT_HINT = (
    "\nHINT: a server that requires client certificates closes connections without one like "
    "this; give this client a certificate its CA signed (TENSORWEAVE_TLS_CLIENT_CERT and "
    "TENSORWEAVE_TLS_CLIENT_KEY)")


def _closed_hint() -> str:
    """Why a server may have closed the connection at once, given this process's TLS."""
    from tensorweave.distributed import security

    config = security.current()
    if not config.uses_tls:
        return _PLAINTEXT_HINT
    return "" if config.client_cert or config.tls_cert else _CLIENT_CERT_HINT


def error_from_rpc(e: grpc.RpcError, address: str) -> errors.OpError:
    """The `errors.*` of a failed call: the server's own error, or a transport failure
    (UNAVAILABLE / DEADLINE_EXCEEDED) whose message names `address`."""
    code = e.code() if hasattr(e, "code") else grpc.StatusCode.UNKNOWN
    details = (e.details() if hasattr(e, "details") else None) or str(e)
    value = code.value[0] if code is not None else errors.UNKNOWN
    if value in (errors.UNAVAILABLE, errors.DEADLINE_EXCEEDED) and address not in details:
        details = f"{details} (server at {address})"
    if value == errors.UNAVAILABLE and "Socket closed" in details:
        details += _closed_hint()
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



_channels: dict[tuple, grpc.Channel] = {}
_channels_lock = threading.Lock()


def channel_for(address: str) -> grpc.Channel:
    """One shared channel per `host:port` and security config (channels are thread-safe and
    costly to open): TLS when the process config has it (`security`), and the shared token
    attached to every call when it has one."""
    from tensorweave.distributed import security

    config = security.current()
    key = (address, config)
    with _channels_lock:
        ch = _channels.get(key)
        if ch is None:
            ch = _channels[key] = _open_channel(address, config)
        return ch


def channel_options() -> list:
    """`CHANNEL_OPTIONS` with the keepalive that detects a silent server (keepalive.py)."""
    from tensorweave.distributed import keepalive

    return CHANNEL_OPTIONS + keepalive.channel_options()


def _open_channel(address: str, config) -> grpc.Channel:
    from tensorweave.distributed import security

    creds = security.channel_credentials(config)
    if creds is None:
        ch = grpc.insecure_channel(address, options=channel_options())
    else:
        ch = grpc.secure_channel(address, creds, options=channel_options())
    return security.with_token(ch, config.token)


# -- server side -------------------------------------------------------------------------------
class _Malformed:
    """A request that did not parse, and why."""

    __slots__ = ("why",)

    def __init__(self, why: str):
        self.why = why


def _tolerant(deserialize):
    """`deserialize`, returning a `_Malformed` instead of raising (gRPC would end the call with
    INTERNAL "Exception deserializing request!" and log a traceback)."""
    if deserialize is None:
        return None

    def parse(raw: bytes):
        try:
            return deserialize(raw)
        except Exception as e:  # noqa: BLE001 -- any parse failure is the caller's bad bytes
            return _Malformed(f"{type(e).__name__}: {e}")

    return parse


class CheckedRequests(grpc.ServerInterceptor):
    """Parses every unary request itself and runs `checks[method](request)` before the servicer.

    A request that does not parse ends with INVALID_ARGUMENT naming the method; a check's
    error ends the call with its status (`status_of`). Handlers are wrapped once per method;
    thread-safe.
    """

    def __init__(self, checks: dict | None = None):
        self._checks = dict(checks or {})
        self._handlers: dict[str, grpc.RpcMethodHandler | None] = {}
        self._lock = threading.Lock()

    def intercept_service(self, continuation, handler_call_details):
        method = handler_call_details.method
        handler = self._handlers.get(method)
        if handler is None:
            handler = _checked_handler(continuation(handler_call_details), method,
                                       self._checks.get(method))
            with self._lock:
                self._handlers[method] = handler
        return handler


def _checked_handler(handler, method: str, check):
    if handler is None or handler.request_streaming:
        return handler
    behavior = handler.unary_stream if handler.response_streaming else handler.unary_unary
    make = (grpc.unary_stream_rpc_method_handler if handler.response_streaming
            else grpc.unary_unary_rpc_method_handler)
    run = _checked_stream if handler.response_streaming else _checked_unary
    return make(run(behavior, method, check),
                request_deserializer=_tolerant(handler.request_deserializer),
                response_serializer=handler.response_serializer)


def _precheck(request, context, method: str, check) -> None:
    if isinstance(request, _Malformed):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                      f"Malformed request to {method}: {request.why}")
    if check is not None:
        try:
            check(request)
        except Exception as e:  # noqa: BLE001 -- every failure must reach the client
            code, details = status_of(e)
            context.set_trailing_metadata(node_metadata(e))
            context.abort(code, details)


def _checked_unary(behavior, method, check):
    def run(request, context):
        _precheck(request, context, method, check)
        return behavior(request, context)

    return run


def _checked_stream(behavior, method, check):
    def run(request, context):
        _precheck(request, context, method, check)
        yield from behavior(request, context)

    return run


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



def client_gone() -> errors.CancelledError:
    return errors.CancelledError(None, None, "The client of this step went away (its call was "
                                             "cancelled, timed out, or its connection closed)")


def cancellable_method(fn):
    """Like `rpc_method`, for a method that may block as long as a step:
    `fn(self, request, cancel)`, where `cancel` (a runtime.step.Cancellation) fires when the
    call ends before the method returns (the client cancelled or went away, its deadline
    passed, the server stopped: gRPC runs `add_callback`s then)."""

    def wrapped(self, request, context):
        cancel = Cancellation()
        context.add_callback(lambda: cancel.cancel(client_gone()))
        try:
            return fn(self, request, cancel)
        except Exception as e:  # noqa: BLE001 -- every failure must reach the client
            code, details = status_of(e)
            context.set_trailing_metadata(node_metadata(e))
            context.abort(code, details)

    wrapped.__name__ = fn.__name__
    wrapped.__doc__ = fn.__doc__
    return wrapped


# -- admission: which calls get a thread -------------------------------------------------------
# NOTE: a sync gRPC server gives each call in progress one thread of its pool for as long as
# it runs, and a step may block (a queue, a receive) as long as it likes: step calls get at
# most `max_steps` threads, and the pool holds `CONTROL_THREADS` more, so session creation,
# GetStatus and closing (which frees blocked steps) always find one.
STEP_METHODS = frozenset({
    "/tensorweave.MasterService/RunCallable",
    "/tensorweave.WorkerService/RunGraph", "/tensorweave.WorkerService/RecvTensor",
})
MAX_STEP_CALLS = 256    # step calls in progress on one server; more are RESOURCE_EXHAUSTED
CONTROL_THREADS = 32    # threads beyond those, for everything else


class Admission(grpc.ServerInterceptor):
    """Counts the calls in progress (`in_flight`, `wait_idle`) and refuses a step call beyond
    `max_steps` at once with RESOURCE_EXHAUSTED (counted in `refused`). The innermost
    interceptor (it keeps one handler per method). Thread-safe."""

    def __init__(self, max_steps: int = MAX_STEP_CALLS):
        self.max_steps = max_steps
        self.in_flight = 0
        self.steps = 0
        self.refused = 0
        self._cond = threading.Condition()
        self._handlers: dict = {}

    def intercept_service(self, continuation, handler_call_details):
        method = handler_call_details.method
        if method not in self._handlers:
            self._handlers[method] = _admitted(self, continuation(handler_call_details),
                                               method in STEP_METHODS)
        return self._handlers[method]

    def enter(self, step: bool) -> bool:
        with self._cond:
            if step and self.steps >= self.max_steps:
                self.refused += 1
                return False
            self.in_flight += 1
            self.steps += step
            return True

    def leave(self, step: bool) -> None:
        with self._cond:
            self.in_flight -= 1
            self.steps -= step
            self._cond.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Waits up to `timeout` s for no call to be in progress; whether none is."""
        end = time.monotonic() + timeout
        with self._cond:
            while self.in_flight and time.monotonic() < end:
                self._cond.wait(max(0.001, end - time.monotonic()))
            return not self.in_flight


def _admitted(admission: Admission, handler, step: bool):
    if handler is None or handler.request_streaming:
        return handler

    def refuse(context):
        context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                      f"The server is running {admission.max_steps} steps already; try again")

    def unary(request, context):
        if not admission.enter(step):
            refuse(context)
        try:
            return handler.unary_unary(request, context)
        finally:
            admission.leave(step)

    def stream(request, context):
        if not admission.enter(step):
            refuse(context)
        try:
            yield from handler.unary_stream(request, context)
        finally:
            admission.leave(step)

    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(
            stream, handler.request_deserializer, handler.response_serializer)
    return grpc.unary_unary_rpc_method_handler(
        unary, handler.request_deserializer, handler.response_serializer)


# -- servicer methods on the bulk port ---------------------------------------------------------
def bulk_handler(method_fn, method: str, request_cls):
    """A bulk-port call handler (distributed/bulk.py: `handler(body, cancel)`) running the
    servicer method `method_fn(request, context)` with a `BulkContext`."""
    def handle(body, cancel: Cancellation | None = None) -> bytes:
        try:
            request = request_cls.FromString(body)
        except Exception as e:  # noqa: BLE001 -- any parse failure is the caller's bad bytes
            raise errors.InvalidArgumentError(
                None, None, f"Malformed {method} request: {e}") from None
        context = BulkContext(cancel)
        try:
            return method_fn(request, context).SerializeToString()
        finally:
            context.terminate()

    return handle


class BulkContext:
    """The `grpc.ServicerContext` of a call that came over the bulk port, as far as servicer
    methods use it: `abort` raises the errors.* class of its status, naming the node that
    `set_trailing_metadata` named (as the client of a gRPC call would see it); callbacks run
    when the call ends, or at once when `cancel` fires (the client went away)."""

    def __init__(self, cancel: Cancellation | None = None):
        self._trailing: tuple = ()
        self._callbacks: list = []
        self._cancel = cancel
        self._lock = threading.Lock()

    def set_trailing_metadata(self, metadata) -> None:
        self._trailing = tuple(metadata or ())

    def abort(self, code: grpc.StatusCode, details: str):
        meta = dict(self._trailing)
        node = ir.NodeDef(meta[NODE_KEY], meta.get(OP_KEY, "")) if meta.get(NODE_KEY) else None
        raise errors.make_error(code.value[0], details, node)

    def time_remaining(self) -> None:
        return None  # NOTE: the bulk client enforces its own deadline

    def is_active(self) -> bool:
        return self._cancel is None or self._cancel.error is None

    def add_callback(self, callback) -> bool:
        """`callback()` runs once, when the call ends or its client goes away (as gRPC's)."""
        with self._lock:
            self._callbacks.append(callback)
        if self._cancel is not None:
            self._cancel.on_cancel(self.terminate)
        return True

    def terminate(self) -> None:
        with self._lock:
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def invocation_metadata(self) -> tuple:
        return ()

    def peer(self) -> str:
        return "bulk"


def run_deadline(step_s: float | None) -> float:
    """The RPC deadline of a step that may run `step_s` seconds (None: no step timeout)."""
    return RUN_DEADLINE_S if step_s is None else step_s + RUN_GRACE_S
