"""How long a silent peer may stay silent: TCP keepalive on the bulk sockets, gRPC keepalive on
the channels and servers, one setting for both.

A peer process that dies closes its connections and every wait on it ends at once. A network
that goes silent (a link taken down, packets dropped, a host that froze) closes nothing: without
keepalive, a receive would wait for its full deadline (a day for a step without a timeout), as
TensorFlow's does. Here every connection probes its peer while it waits:

  bulk sockets (distributed/bulk.py)  SO_KEEPALIVE with TCP_KEEPIDLE/TCP_KEEPINTVL a fraction of
      the timeout, and TCP_USER_TIMEOUT = the timeout: the kernel aborts the connection
      (ETIMEDOUT) when nothing it sent, data or probe, is acknowledged within it.
  gRPC channels (distributed/rpc.py)  grpc.keepalive_time_ms / grpc.keepalive_timeout_ms, pings
      also without calls in flight; a call in progress then ends UNAVAILABLE.
  gRPC servers (distributed/server.py)  accept those pings (otherwise a server answers frequent
      pings with GOAWAY "too_many_pings").

So a silent peer is detected within about `peer_timeout_s()` seconds (default 15; the
environment variable TENSORWEAVE_PEER_TIMEOUT_S, or `configure`, before connections are made),
and the step fails with UnavailableError naming the task it waited on.
"""

from __future__ import annotations

import os
import socket

ENV = "TENSORWEAVE_PEER_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 15.0
MIN_TIMEOUT_S = 1.0
_configured: float | None = None


def configure(timeout_s: float | None) -> None:
    """Sets this process's silent-peer timeout (None: back to the environment's or the
    default). Applies to connections and channels opened afterwards."""
    global _configured
    _configured = None if timeout_s is None else max(MIN_TIMEOUT_S, float(timeout_s))


def peer_timeout_s() -> float:
    """Seconds a connected peer may stay silent before its connection is given up."""
    if _configured is not None:
        return _configured
    raw = os.environ.get(ENV, "").strip()
    if raw:
        try:
            return max(MIN_TIMEOUT_S, float(raw))
        except ValueError:
            pass  # NOTE: a malformed value must not stop a server; the default applies
    return DEFAULT_TIMEOUT_S


def tune_socket(sock: socket.socket, timeout_s: float | None = None) -> None:
    """Turns on TCP keepalive on `sock` so a silent peer aborts it within `timeout_s` (default
    `peer_timeout_s()`); options the platform lacks are skipped."""
    t = peer_timeout_s() if timeout_s is None else max(MIN_TIMEOUT_S, timeout_s)
    probe = max(1, int(t / 4))
    _set(sock, socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    _set(sock, socket.IPPROTO_TCP, getattr(socket, "TCP_KEEPIDLE", None), probe)
    _set(sock, socket.IPPROTO_TCP, getattr(socket, "TCP_KEEPINTVL", None), probe)
    _set(sock, socket.IPPROTO_TCP, getattr(socket, "TCP_KEEPCNT", None), 4)
    _set(sock, socket.IPPROTO_TCP, getattr(socket, "TCP_USER_TIMEOUT", None), int(t * 1000))


def _set(sock: socket.socket, level: int, option: int | None, value: int) -> None:
    if option is None:
        return
    try:
        sock.setsockopt(level, option, value)
    except OSError:
        pass  # NOTE: not every platform/socket family has every option


def channel_options(timeout_s: float | None = None) -> list[tuple[str, int]]:
    """gRPC channel options pinging the server so a silent one ends calls within `timeout_s`."""
    t = peer_timeout_s() if timeout_s is None else max(MIN_TIMEOUT_S, timeout_s)
    ms = int(t * 1000)
    return [
        ("grpc.keepalive_time_ms", max(500, ms // 3)),
        ("grpc.keepalive_timeout_ms", max(500, ms - ms // 3)),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
    ]


def server_options() -> list[tuple[str, int]]:
    """gRPC server options accepting the clients' keepalive pings (and pinging them back)."""
    ms = int(peer_timeout_s() * 1000)
    return [
        ("grpc.keepalive_time_ms", max(500, ms // 3)),
        ("grpc.keepalive_timeout_ms", max(500, ms - ms // 3)),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_recv_ping_interval_without_data_ms", 200),
        ("grpc.http2.min_ping_interval_without_data_ms", 200),
        ("grpc.http2.max_ping_strikes", 0),
        ("grpc.http2.max_pings_without_data", 0),
    ]


def is_silent_peer(err: OSError) -> bool:
    """Whether a socket error is the kernel giving up on a silent peer (not Python's own
    timeout, which has no errno)."""
    import errno

    return getattr(err, "errno", None) in (errno.ETIMEDOUT, errno.EHOSTUNREACH,
                                           errno.ENETUNREACH, errno.ENETDOWN)


__all__ = ["ENV", "DEFAULT_TIMEOUT_S", "channel_options", "configure", "is_silent_peer",
           "peer_timeout_s", "server_options", "tune_socket"]
