"""distributed/keepalive.py: the silent-peer timeout, and the options it puts on bulk sockets,
gRPC channels and servers. (That a silent peer then ends a step within it is shown on real
separate hosts: test_namespace_hosts.py.)"""

import errno
import socket

import pytest

from tensorweave.distributed import bulk, keepalive, rpc


@pytest.fixture(autouse=True)
def _reset():
    keepalive.configure(None)
    yield
    keepalive.configure(None)


def test_timeout_from_the_environment_configure_and_default(monkeypatch):
    monkeypatch.delenv(keepalive.ENV, raising=False)
    assert keepalive.peer_timeout_s() == keepalive.DEFAULT_TIMEOUT_S
    monkeypatch.setenv(keepalive.ENV, "4.5")
    assert keepalive.peer_timeout_s() == 4.5
    monkeypatch.setenv(keepalive.ENV, "0.01")
    assert keepalive.peer_timeout_s() == keepalive.MIN_TIMEOUT_S
    monkeypatch.setenv(keepalive.ENV, "soon")
    assert keepalive.peer_timeout_s() == keepalive.DEFAULT_TIMEOUT_S
    keepalive.configure(7)
    assert keepalive.peer_timeout_s() == 7.0


@pytest.mark.skipif(not hasattr(socket, "TCP_USER_TIMEOUT"), reason="Linux socket options")
def test_bulk_sockets_probe_their_peer(monkeypatch):
    monkeypatch.setenv(keepalive.ENV, "8")

    class Steps:
        def find(self, step_id):
            raise AssertionError("no step is asked for")

    server = bulk.BulkServer(Steps())
    server.start()
    try:
        client = bulk.BulkClient("127.0.0.1", server.port)
        sock = client._connect(10**9)
        try:
            assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 8000
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 2
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL) == 2
        finally:
            sock.close()
    finally:
        server.stop()


def test_channels_and_servers_ping(monkeypatch):
    monkeypatch.setenv(keepalive.ENV, "9")
    channel = dict(rpc.channel_options())
    assert channel["grpc.keepalive_time_ms"] == 3000
    assert channel["grpc.keepalive_timeout_ms"] == 6000
    assert channel["grpc.keepalive_permit_without_calls"] == 1
    server = dict(keepalive.server_options())
    # a server must accept pings at least as often as clients send them
    assert server["grpc.http2.min_recv_ping_interval_without_data_ms"] < 3000
    assert server["grpc.http2.max_ping_strikes"] == 0


def test_a_silent_peer_is_unavailable_not_a_deadline():
    client = bulk.BulkClient("198.18.0.9", 1)
    err = client._silent()
    assert "stayed silent" in err.message and keepalive.ENV in err.message
    assert keepalive.is_silent_peer(TimeoutError(errno.ETIMEDOUT, "Connection timed out"))
    assert not keepalive.is_silent_peer(TimeoutError("timed out"))   # Python's own timeout
