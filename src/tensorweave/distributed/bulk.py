"""The bulk transport: tensors (and the hot master call) between processes over plain TCP.

gRPC Python streams at ~0.4 GB/s and spends ~250 µs on a unary call here; this transport
writes a tensor's memory with one `sendall` and reads it with `recv_into` straight into a
fresh numpy array (no copy but the kernel's), and answers a call on the thread that read it.
Each `Server` runs one `BulkServer` on its task's host (a free port), advertised in GetStatus
(`bulk_port`): `GrpcWorker.recv_tensor` pulls tensors through it and `GrpcMaster.run_callable`
runs steps through it when the server has one, and both use gRPC otherwise. The wire format
is in bulk_wire.py.

Every socket operation has a deadline; a peer that vanishes gives UnavailableError naming
its address, and a broken connection leaves the pool.

Security: a server with a token (`security.rpc_token`) compares the hello's token with
`hmac.compare_digest`, answers a mismatch with UNAUTHENTICATED and closes. The hello is
checked before anything else (its magic before its token is even read), and the hello and the
first request together must arrive within `hello_deadline_s` (HELLO_DEADLINE_S): a stranger
trickling bytes holds a connection that long at most. The server acknowledges a hello before
the client sends its request, so a request that was refused (the connection cap, a backlog
never accepted) never reached the server: the client raises `Refused`, and callers take gRPC.

Limits: at most `max_connections` (MAX_CONNECTIONS) connections, each with its thread; one
beyond is answered UNAVAILABLE and closed (`metrics()["refused"]`). An accept that fails (the
process is out of descriptors) is retried after a backoff (`metrics()["accept_errors"]`), never
the end of the port. A call in progress is cancelled when its client goes away (its socket
closes) or the server stops: its handler gets a runtime.step.Cancellation that fires then.
NOTE: with TLS configured the bulk path is off (a server advertises no port, a client uses
none): tensors and calls take gRPC, which TLS protects; a plain socket must never carry what
the operator asked to encrypt.
"""

from __future__ import annotations

import hmac
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable

from tensorweave import errors
from tensorweave.distributed import address as hostport
from tensorweave.distributed import bulk_wire as wire
from tensorweave.distributed import keepalive
from tensorweave.runtime.rendezvous import parse_key
from tensorweave.runtime.step import Cancellation

CONNECT_TIMEOUT_S = 10.0    # reaching a bulk port
GRACE_S = 2.0               # past a request's deadline, for the server's own error to arrive
STALL_TIMEOUT_S = 60.0      # one socket read or write of a message in progress
SERVER_IDLE_S = 600.0       # a connection without requests is closed by the server
CLIENT_IDLE_S = 300.0       # ... and not reused by the client after this (under SERVER_IDLE_S)
WAIT_SLICE_S = 0.5          # the server rechecks stop and a vanished client this often
BACKSTOP_S = 24 * 3600.0    # the wait of a request without a deadline
MAX_IDLE_CONNECTIONS = 8    # pooled per address
HELLO_DEADLINE_S = 10.0     # a new connection's hello and first request, all bytes together
MAX_CONNECTIONS = 256       # connections (and threads) a server serves; more are refused
ACCEPT_BACKOFF_S = (0.01, 1.0)  # after a failed accept: the first and the longest pause

# A call handler: the serialized request and the call's Cancellation (fires when the client
# goes away or the server stops) in, the serialized response out (or an exception).
CallHandler = Callable[[bytearray, Cancellation], bytes]


class Refused(errors.UnavailableError):
    """The bulk port did not take the request: it never reached the server (no connection,
    no acknowledged hello, the connection cap), so it may go again another way (gRPC)."""


# -- security (distributed/security.py, when present) ---------------------------------------
def _security():
    try:
        from tensorweave.distributed import security
    except ImportError:
        return None
    return security


def client_token() -> bytes | None:
    """The token this process presents (`security.rpc_token()`), or None."""
    sec = _security()
    token = sec.rpc_token() if sec is not None and hasattr(sec, "rpc_token") else None
    return token if isinstance(token, bytes) and token else None


def client_enabled() -> bool:
    """Whether this process may use bulk ports (not with TLS configured)."""
    sec = _security()
    return not (sec is not None and hasattr(sec, "tls_enabled") and sec.tls_enabled())


def _server_settings(config) -> tuple[bytes | None, bool]:
    """(token required, whether TLS is served) of a server's security `config` (None: the
    process's)."""
    sec = _security()
    if sec is None:
        return None, False
    config = config if config is not None else sec.current()
    token = getattr(config, "token", None)
    return (token if isinstance(token, bytes) and token else None,
            bool(getattr(config, "serves_tls", False)))


# -- server ---------------------------------------------------------------------------------
class BulkServer:
    """Serves `steps` (a task's step table: `find(step_id).recv(key, deadline)`) and `calls`
    ({method id: CallHandler}) on a TCP port of `host`.

    Binds a free port at construction (`port`; 0 when the transport is off because the
    security `config` serves TLS); `start` accepts connections on a daemon thread, each served
    by its own daemon thread; `stop` closes the port and every connection. A tensor request
    waits for its tensor until its deadline: the reply is then DeadlineExceeded, or the step's
    abort error. `token` (default: the config's) overrides the token required;
    `max_connections` (MAX_CONNECTIONS) and `hello_deadline_s` (HELLO_DEADLINE_S) are the
    limits in the module docstring. Thread-safe.
    """

    def __init__(self, steps, host: str = "127.0.0.1", config=None,
                 calls: dict[int, CallHandler] | None = None, token: bytes | None = None,
                 max_connections: int | None = None, hello_deadline_s: float | None = None):
        self._steps = steps
        self._calls = dict(calls or {})
        required, tls = _server_settings(config)
        self._token = token if token is not None else required
        self.max_connections = int(max_connections or MAX_CONNECTIONS)
        self.hello_deadline_s = float(hello_deadline_s or HELLO_DEADLINE_S)
        self._stopping = threading.Event()
        self._stop_calls = Cancellation()  # every call in progress, when the server stops
        self._conns: dict[socket.socket, threading.Thread] = {}
        self._counts = {"refused": 0, "accept_errors": 0, "hello_failures": 0,
                        "calls_cancelled": 0}
        self._watch = _Watch()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._listener = None if tls else _listen(host)
        self.port = 0 if self._listener is None else self._listener.getsockname()[1]

    def start(self) -> None:
        """Starts accepting (idempotent; a no-op when the transport is off or stopped)."""
        if self._listener is None or self._thread is not None or self._stopping.is_set():
            return
        self._thread = threading.Thread(target=self._accept_loop, name="tw-bulk-accept",
                                        daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Cancels every call in progress (UnavailableError "The server is stopping"), closes
        the port and every connection, then waits up to `timeout` s in all for the threads:
        receivers end within `WAIT_SLICE_S`, cancelled steps within their kernels' wait
        slice."""
        self._stopping.set()
        self._stop_calls.cancel(errors.UnavailableError(None, None, "The server is stopping"))
        self._watch.stop()
        if self._listener is not None:
            wire.shutdown(self._listener)
            if self._thread is None:
                self._listener.close()
        with self._lock:
            conns = dict(self._conns)
        for conn in conns:
            wire.shutdown(conn)
        end = time.monotonic() + timeout
        for thread in [self._thread, *conns.values()]:
            if thread is not None:
                thread.join(max(0.0, end - time.monotonic()))

    def metrics(self) -> dict[str, int]:
        """Counters: `connections` served now; `refused` (beyond the cap), `accept_errors`,
        `hello_failures` (no valid hello and first request in time) and `calls_cancelled`
        (their client went away) since the start."""
        with self._lock:
            return {"connections": len(self._conns), **self._counts}

    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    def _accept_loop(self) -> None:
        listener, pause = self._listener, 0.0
        while not self._stopping.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stopping.is_set():
                    break
                # NOTE: out of descriptors (EMFILE) or a connection reset in the backlog: the
                # port stays; pending connections wait in the backlog meanwhile
                self._count("accept_errors")
                pause = min(ACCEPT_BACKOFF_S[1], max(ACCEPT_BACKOFF_S[0], 2 * pause))
                self._stopping.wait(pause)
                continue
            pause = 0.0
            if self._stopping.is_set():
                conn.close()
                break
            self._admit(conn)
        listener.close()

    def _admit(self, conn: socket.socket) -> None:
        """Serves `conn` on its own thread, or refuses it when at the cap."""
        thread = threading.Thread(target=self._serve, args=(conn,), name="tw-bulk-conn",
                                  daemon=True)
        with self._lock:
            full = len(self._conns) >= self.max_connections
            if full:
                self._counts["refused"] += 1
            else:
                self._conns[conn] = thread
        if full:
            _refuse_now(conn, self.max_connections)
            return
        try:
            thread.start()
        except RuntimeError:  # NOTE: no thread to be had: as full
            with self._lock:
                self._conns.pop(conn, None)
                self._counts["refused"] += 1
            _refuse_now(conn, self.max_connections)

    def _serve(self, conn: socket.socket) -> None:
        try:
            wire.tune(conn, STALL_TIMEOUT_S)
            keepalive.tune_socket(conn)
            deadline = time.monotonic() + self.hello_deadline_s
            if self._greet(conn, deadline):
                first: float | None = deadline
                while not self._stopping.is_set() and self._answer(conn, first):
                    first = None
            elif not self._stopping.is_set():
                self._count("hello_failures")
        except (OSError, wire.Closed, UnicodeDecodeError, ValueError):
            pass  # NOTE: the client went away or spoke garbage: only this connection ends
        finally:
            with self._lock:
                self._conns.pop(conn, None)
            conn.close()

    def _greet(self, conn: socket.socket, deadline: float) -> bool:
        """Reads the hello by `deadline`: True (acknowledged) to go on serving. The magic is
        checked before the token is read; a wrong token is answered UNAUTHENTICATED."""
        try:
            magic, n = wire.HELLO.unpack(wire.recv_by(conn, wire.HELLO.size, deadline))
            if magic != wire.MAGIC:
                return False
            token = bytes(wire.recv_by(conn, n, deadline))
        except TimeoutError:
            return False
        if self._token is not None and not hmac.compare_digest(token, self._token):
            _refuse(conn, errors.UnauthenticatedError(
                None, None, "Bulk transport: missing or wrong token"))
            return False
        wire.stall_mode(conn, STALL_TIMEOUT_S)
        conn.sendall(wire.HELLO_OK)
        return True

    def _answer(self, conn: socket.socket, first: float | None = None) -> bool:
        """Serves one request; False when the client closed or stayed idle too long (the
        first request must begin to arrive by `first`, the hello's deadline)."""
        conn.settimeout(SERVER_IDLE_S)
        try:
            kind, ident, wait_s, body = wire.read_request(conn, STALL_TIMEOUT_S, BACKSTOP_S,
                                                          first)
        except (TimeoutError, wire.Closed):
            if first is not None and not self._stopping.is_set():
                self._count("hello_failures")
            return False
        if kind == wire.KIND_RECV_MANY:
            return self._stream(conn, ident, body, wait_s)
        try:
            if kind == wire.KIND_RECV:
                parts = wire.encode_value(*self._wait(conn, ident, body.decode(), wait_s))
            else:
                parts = wire.encode_response(self._call(conn, ident, body))
        except wire.Closed:
            return False
        except Exception as e:  # noqa: BLE001 -- every failure must reach the client
            parts = [wire.encode_error(e)]
        wire.stall_mode(conn, STALL_TIMEOUT_S)
        for part in parts:
            conn.sendall(part)
        return True

    def _stream(self, conn, step_id: int, body: bytearray, wait_s: float) -> bool:
        """Answers a RECV_MANY: each tensor as it arrives, framed with its key's position;
        the first failure (as `_wait`'s) ends the answer with an error frame. False when
        the client went away."""
        pending = []
        try:
            keys = body.decode().split("\0")
            for key in keys:
                parse_key(key)
            pending = list(range(len(keys)))
            deadline = time.monotonic() + wait_s
            while pending:
                k = self._wait_any(conn, step_id, [keys[i] for i in pending], deadline)
                index = pending.pop(k)
                parts = wire.encode_value(*self._steps.find(step_id).recv(keys[index], 0.0))
                self._send_frame(conn, index, parts)
        except wire.Closed:
            return False
        except Exception as e:  # noqa: BLE001 -- every failure must reach the client
            self._send_frame(conn, pending[0] if pending else 0, [wire.encode_error(e)])
        return True

    @staticmethod
    def _send_frame(conn, index: int, parts: list) -> None:
        wire.stall_mode(conn, STALL_TIMEOUT_S)
        conn.sendall(wire.FRAME.pack(index) + parts[0])
        for part in parts[1:]:
            conn.sendall(part)

    def _call(self, conn, method: int, body: bytearray) -> bytes:
        """Runs the handler of `method`; its Cancellation fires when `conn`'s client goes
        away (watched by `_Watch`) or the server stops."""
        handler = self._calls.get(method)
        if handler is None:
            raise errors.UnimplementedError(None, None, f"Bulk transport: no method {method}")
        cancel = Cancellation(self._stop_calls)

        def gone() -> None:
            self._count("calls_cancelled")
            cancel.cancel(_client_gone())

        self._watch.add(conn, gone)
        try:
            return handler(body, cancel)
        finally:
            self._watch.discard(conn)

    def _wait(self, conn, step_id: int, key: str, wait_s: float):
        """The step's tensor `key`, waiting in slices so a stop or a vanished client ends it.

        Raises: the step's abort error, DeadlineExceededError, InvalidArgumentError (a key
        that is not a rendezvous key), UnavailableError (stopping), Closed (the client left).
        """
        parse_key(key)  # a malformed key is InvalidArgument, not a wait for nothing
        rdv = self._steps.find(step_id)
        self._wait_any(conn, step_id, [key], time.monotonic() + wait_s)
        return rdv.recv(key, 0.0)

    def _wait_any(self, conn, step_id: int, keys: list[str], deadline: float) -> int:
        """The position in `keys` of one that has arrived in the step, waiting in slices as
        `_wait` (which says what it raises)."""
        rdv = self._steps.find(step_id)
        while True:
            until = min(deadline, time.monotonic() + WAIT_SLICE_S)
            try:
                return rdv.wait_any(keys, until)
            except errors.DeadlineExceededError:
                if until >= deadline or rdv.error is not None:
                    raise
            if self._stopping.is_set():
                raise errors.UnavailableError(None, None, "The server is stopping")
            if wire.peer_gone(conn):
                raise wire.Closed(0)


def _listen(host: str) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.bind((host, 0))
        sock.listen(64)
    except OSError as e:
        sock.close()
        raise errors.UnavailableError(None, None, f"Cannot bind a bulk transport port on "
                                                  f"{host}: {e}") from None
    sock.settimeout(WAIT_SLICE_S)
    return sock


def _client_gone() -> errors.CancelledError:
    return errors.CancelledError(None, None, "The client of this step went away (its bulk "
                                             "connection closed)")


def _refuse_now(conn: socket.socket, cap: int) -> None:
    """Answers UNAVAILABLE in place of the hello's acknowledgement and closes, never
    blocking (the accept thread calls it)."""
    try:
        conn.setblocking(False)
        conn.send(wire.encode_error(errors.UnavailableError(
            None, None, f"Bulk transport at its cap of {cap} connections")))
        conn.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    conn.close()


class _Watch:
    """One thread that watches the connections of calls in progress and runs a connection's
    callback once when its peer closes it (a client waiting for a reply sends nothing)."""

    def __init__(self):
        self._socks: dict[socket.socket, Callable[[], None]] = {}
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def add(self, sock: socket.socket, callback: Callable[[], None]) -> None:
        with self._cond:
            if self._stopped:
                return
            self._socks[sock] = callback
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="tw-bulk-watch",
                                                daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def discard(self, sock: socket.socket) -> None:
        with self._cond:
            self._socks.pop(sock, None)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._socks.clear()
            self._cond.notify_all()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._socks and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                socks = list(self._socks)
            talking: list = []
            gone = wire.closed_peers(socks, WAIT_SLICE_S, talking)
            with self._cond:
                for sock in talking:  # NOTE: not our client's way (it waits): stop watching
                    self._socks.pop(sock, None)
                callbacks = [self._socks.pop(sock, None) for sock in gone]
            for callback in callbacks:
                if callback is not None:
                    callback()


def _refuse(conn: socket.socket, err: errors.OpError) -> None:
    """Answers `err` to the request on its way, then closes our side; reads (and drops) up
    to 1 MB of it first so the client sees the reply rather than a reset."""
    conn.sendall(wire.encode_error(err))
    conn.shutdown(socket.SHUT_WR)
    conn.settimeout(1.0)
    left = 1 << 20
    while left > 0 and (chunk := conn.recv(min(left, 65536))):
        left -= len(chunk)


# -- client ---------------------------------------------------------------------------------
class BulkClient:
    """Talks to the `BulkServer` at `host:port` over a pool of persistent connections.

    Thread-safe: concurrent requests each take their own connection. `token` (default: the
    process's, read at each new connection) is presented on every new connection.
    """

    def __init__(self, host: str, port: int, token: bytes | None = None):
        self.host, self.port = host, int(port)
        self.address = hostport.join(host, port)
        self._token = token
        self._idle: list[tuple[socket.socket, float]] = []
        self._lock = threading.Lock()
        self.connections_opened = 0
        _all_clients.add(self)

    def recv_tensor(self, step_id: int, key: str,
                    timeout_s: float | None = None) -> tuple[object, bool]:
        """(value, is_dead) of `key` in step `step_id` on the server, waiting for its sender up
        to `timeout_s` (None: a day).

        Raises: the server's errors.* class (the step's abort error, DeadlineExceededError at
        the deadline, UnauthenticatedError for a wrong token); UnavailableError naming the
        address when the server cannot be reached or the connection breaks.
        """
        wait_s = _wait_s(timeout_s)
        raw_key = key.encode("utf-8")
        request = [wire.REQUEST.pack(wire.KIND_RECV, step_id, wait_s, len(raw_key)) + raw_key]
        # NOTE: a receive may go again on a fresh connection when a pooled one turns out
        # closed before any reply byte: the server never read it, so nothing was taken.
        return self._request(request, wait_s, f"tensor {_name(key)}", retry=True)

    def recv_many(self, step_id: int, keys: list[str], deliver,
                  timeout_s: float | None = None) -> None:
        """Pulls `keys` of step `step_id` on one connection: `deliver(position, value,
        is_dead)` runs (on this thread) for each as it arrives, in the order the server's
        step gets them. Waits for the senders up to `timeout_s` (None: a day) in all.

        Raises as `recv_tensor` (the tensors delivered before a failure stay delivered).
        """
        wait_s = _wait_s(timeout_s)
        body = "\0".join(keys).encode("utf-8")
        request = [wire.REQUEST.pack(wire.KIND_RECV_MANY, step_id, wait_s, len(body)) + body]

        def read(sock, deadline):
            for n in range(len(keys)):
                sock.settimeout(max(0.001, deadline - time.monotonic()))
                try:
                    index, = wire.FRAME.unpack(wire.recv_exact(sock, wire.FRAME.size))
                    value, dead, err = wire.read_reply(sock, STALL_TIMEOUT_S)
                except wire.Closed as e:
                    raise wire.Closed(e.got + n) from None  # NOTE: got 0: nothing taken
                if err is not None:
                    return None, False, err
                if index >= len(keys):
                    raise errors.DataLossError(None, None, f"Bulk reply names tensor {index} "
                                                           f"of {len(keys)}")
                deliver(index, value, dead)
            return None, False, None

        self._request(request, wait_s, f"tensors {', '.join(_name(k) for k in keys)}",
                      retry=True, read=read)

    def call(self, method: int, body: bytes, timeout_s: float | None = None) -> bytearray:
        """The serialized response of `method` to serialized request `body`.

        Never retried (a call may have effects). Raises as `recv_tensor`; DeadlineExceeded
        when no reply came within `timeout_s` (None: a day).
        """
        wait_s = _wait_s(timeout_s)
        head = wire.REQUEST.pack(wire.KIND_CALL, method, wait_s, len(body))
        request = [head + body] if len(body) <= 1 << 16 else [head, body]  # NOTE: no big copy
        return self._request(request, wait_s, f"the reply to call {method}", retry=False)[0]

    def _request(self, request: list, wait_s: float, what: str, retry: bool, read=None):
        deadline = time.monotonic() + wait_s + GRACE_S
        for _ in range(2):
            sock, reused = self._acquire(deadline)
            try:
                value, dead, err = self._exchange(sock, request, deadline, what, read)
            except wire.Closed as e:
                sock.close()
                if retry and reused and e.got == 0:
                    continue
                raise self._unavailable("the connection closed before the reply") from None
            except BaseException:
                sock.close()  # NOTE: mid-message: what is left on the wire is unknown
                raise
            if isinstance(err, errors.UnauthenticatedError):
                sock.close()  # the server closes it too
            else:
                self._release(sock)
            if err is not None:
                raise err
            return value, dead
        raise self._unavailable("the connection closed before the reply")

    def _exchange(self, sock, request: list, deadline: float, what: str, read=None):
        """Sends `request` (its buffers), reads its reply with `read(sock)` (default: one
        reply): (value, is_dead, the server's error or None)."""
        try:
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            for part in request:
                sock.sendall(part)
            if read is not None:
                return read(sock, deadline)
            return wire.read_reply(sock, STALL_TIMEOUT_S)
        except TimeoutError as e:
            if keepalive.is_silent_peer(e):
                raise self._silent() from None
            raise errors.DeadlineExceededError(
                None, None, f"Timed out waiting for {what} from the bulk transport at "
                            f"{self.address}") from None
        except BrokenPipeError:
            raise wire.Closed(0) from None
        except OSError as e:
            if keepalive.is_silent_peer(e):
                raise self._silent() from None
            raise self._unavailable(str(e)) from None

    def _silent(self) -> errors.UnavailableError:
        return self._unavailable(
            f"the peer stayed silent for over {keepalive.peer_timeout_s():g} s (TCP keepalive; "
            f"{keepalive.ENV} sets it): its host or network is down")

    def _unavailable(self, why: str) -> errors.UnavailableError:
        return errors.UnavailableError(
            None, None, f"Bulk transport at {self.address} unavailable: {why}")

    def _acquire(self, deadline: float) -> tuple[socket.socket, bool]:
        now = time.monotonic()
        with self._lock:
            while self._idle:
                sock, since = self._idle.pop()
                if now - since < CLIENT_IDLE_S and not wire.peer_gone(sock):
                    return sock, True
                sock.close()
        return self._connect(deadline), False

    def _connect(self, deadline: float) -> socket.socket:
        """A new connection whose hello the server acknowledged. Raises Refused (nothing was
        sent but the hello), UnauthenticatedError (a wrong token)."""
        timeout = max(0.001, min(CONNECT_TIMEOUT_S, deadline - time.monotonic()))
        try:
            sock = socket.create_connection((self.host, self.port), timeout=timeout)
        except OSError as e:
            raise self._refused(f"cannot connect: {e}") from None
        token = (self._token if self._token is not None else client_token()) or b""
        if len(token) > 0xFFFF:
            sock.close()
            raise errors.InvalidArgumentError(None, None, "The RPC token is over 64 KB")
        try:
            wire.tune(sock, STALL_TIMEOUT_S)
            keepalive.tune_socket(sock)
            sock.sendall(wire.HELLO.pack(wire.MAGIC, len(token)) + token)
            sock.settimeout(max(0.001, min(CONNECT_TIMEOUT_S, deadline - time.monotonic())))
            _, _, err = wire.read_reply(sock, STALL_TIMEOUT_S)
        except (OSError, wire.Closed, errors.OpError) as e:
            sock.close()
            raise self._refused(f"no answer to the hello: {e or type(e).__name__}") from None
        if err is not None:
            sock.close()
            if isinstance(err, errors.UnauthenticatedError):
                raise err
            raise self._refused(err.message)
        with self._lock:
            self.connections_opened += 1
        return sock

    def _refused(self, why: str) -> Refused:
        return Refused(None, None, f"Bulk transport at {self.address} unavailable: {why}")

    def _release(self, sock: socket.socket) -> None:
        with self._lock:
            if len(self._idle) < MAX_IDLE_CONNECTIONS:
                self._idle.append((sock, time.monotonic()))
                return
        sock.close()

    def close(self) -> None:
        """Closes the pooled connections (requests in progress keep theirs)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for sock, _ in idle:
            sock.close()

    def _after_fork(self) -> None:
        """In a forked child: the pooled connections are the parent's; never share them."""
        self._lock = threading.Lock()
        idle, self._idle = self._idle, []
        for sock, _ in idle:
            sock.close()  # NOTE: the child's copy of the descriptor; the parent's stays open


def _wait_s(timeout_s: float | None) -> float:
    return BACKSTOP_S if timeout_s is None else min(BACKSTOP_S, max(0.0, float(timeout_s)))


def _name(key: str) -> str:
    parts = key.split(";")
    return parts[3] if len(parts) > 3 else key


_clients: dict[tuple[str, int], BulkClient] = {}
_clients_lock = threading.Lock()
_all_clients: weakref.WeakSet[BulkClient] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    global _clients_lock
    _clients_lock = threading.Lock()
    for client in list(_all_clients):
        client._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def client_for(host: str, port: int) -> BulkClient:
    """The process's shared client (and connection pool) for the bulk port `host:port`."""
    with _clients_lock:
        client = _clients.get((host, port))
        if client is None:
            client = _clients[(host, port)] = BulkClient(host, port)
        return client


__all__ = ["BulkServer", "BulkClient", "CallHandler", "Refused", "client_for", "client_enabled",
           "client_token"]
