"""`host:port` joining and splitting (distributed/address.py), and servers on IPv6 loopback."""

import socket

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed import address
from tensorweave.distributed.server import Server
from tests.distributed.servers import server_process


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


needs_ipv6 = pytest.mark.skipif(not _has_ipv6_loopback(),
                                reason="this machine has no IPv6 loopback (cannot bind ::1)")


@pytest.mark.parametrize("host, port, want", [
    ("127.0.0.1", 80, "127.0.0.1:80"), ("::1", 0, "[::1]:0"), ("[::1]", 5, "[::1]:5"),
    ("fe80::1%eth0", 9, "[fe80::1%eth0]:9"), ("w0.example", 2222, "w0.example:2222"),
])
def test_join_brackets_ipv6_hosts_once(host, port, want):
    assert address.join(host, port) == want
    assert address.split(want) == (address.bare_host(host), port)


def test_split_takes_grpc_targets_and_rejects_ambiguous_or_bad_addresses():
    assert address.split("grpc://[::1]:2222") == ("::1", 2222)
    assert address.split("localhost:0") == ("localhost", 0)
    with pytest.raises(ValueError, match=r"IPv6 host takes brackets, as in '\[::1\]:80'"):
        address.split("::1:80")
    for bad in ("nohost", "[::1]80", "h:port", "h:70000", "[::1]:"):
        with pytest.raises(ValueError, match="Bad"):
            address.split(bad)


def _add_on(target: str) -> float:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        with tf.Session(target) as sess:
            return sess.run(tf.reduce_sum(x + 1.0), {x: np.float32([1, 2])})


@needs_ipv6
def test_server_binds_bracketed_ipv6_and_its_target_is_usable():
    server = Server({"w": ["[::1]:0"]})
    try:
        assert server.target == f"grpc://[::1]:{server.port}" and server.port > 0
        assert _add_on(server.target) == 5.0
    finally:
        server.stop()


@needs_ipv6
@pytest.mark.multiprocess
@pytest.mark.parametrize("host", ["::1", "[::1]"])
def test_server_process_on_ipv6_prints_a_target_clients_can_use(host):
    with server_process("--host", host) as (proc, target):
        assert target.startswith("grpc://[::1]:"), target
        assert _add_on(target) == 5.0
