"""`Server` in this process: targets, binding, job/task selection, lifetime; the CLI command."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.distributed.local_cluster import free_ports
from tensorweave.distributed.server import Server


def test_local_server_serves_sessions_and_stops():
    server = Server.create_local_server()
    try:
        assert server.target.startswith("grpc://127.0.0.1:") and server.port > 0
        x = tf.placeholder(tf.float32, [2], name="x")
        with tf.Session(server.target) as sess:
            np.testing.assert_array_equal(sess.run(x * 2.0, {x: [1.0, 2.0]}), [2.0, 4.0])
    finally:
        server.stop()
    server.stop()  # idempotent
    assert not [t for t in threading.enumerate() if t.name.startswith("tw-rpc")]
    server.join()  # returns at once once stopped
    with pytest.raises(errors.FailedPreconditionError):
        server.start()


def test_cluster_task_binds_its_address_and_names_its_devices():
    port = free_ports(1)[0]
    cluster = {"ps": [f"127.0.0.1:{port}"], "worker": ["127.0.0.1:1", "127.0.0.1:2"]}
    with Server(cluster, job_name="ps", task_index=0,
                config={"device_count": {"CPU": 2}}) as server:
        assert server.target == f"grpc://127.0.0.1:{port}"
        with tf.Session(server.target, config=tf.ConfigProto(device_filters=["/job:ps"])) as sess:
            names = [d.name for d in sess.list_devices() if d.device_type == "CPU"]
        assert names == [f"/job:ps/replica:0/task:0/device:CPU:{i}" for i in range(2)]
        with pytest.raises(errors.UnavailableError, match=str(port)):
            Server(cluster, job_name="ps", task_index=0)  # the port is taken


def test_job_and_task_must_name_a_task():
    with pytest.raises(ValueError, match="job_name"):
        Server({"ps": ["127.0.0.1:0"], "worker": ["127.0.0.1:0"]}, start=False)
    with pytest.raises(ValueError, match="task_index"):
        Server({"worker": ["127.0.0.1:0", "127.0.0.1:0"]}, start=False)
    with pytest.raises(ValueError, match="chief"):
        Server({"worker": ["127.0.0.1:0"]}, job_name="chief", start=False)
    with pytest.raises(ValueError, match="protocol"):
        Server({"worker": ["127.0.0.1:0"]}, protocol="grpc+verbs", start=False)


def test_server_cli_command_is_registered():
    from tensorweave.cli import server  # noqa: F401
    from tensorweave.cli.main import COMMANDS

    assert "server" in COMMANDS


def test_malformed_requests_get_errors_and_the_server_keeps_serving():
    import grpc

    from tensorweave.distributed.grpc_master import GrpcMaster
    from tensorweave.distributed.rpc import channel_for

    with Server.create_local_server() as server:
        master = GrpcMaster(server.target)
        with pytest.raises(errors.AbortedError, match="s999"):
            master.make_callable("s999", [], ["x"], [])
        raw = channel_for(server.target[len("grpc://"):]).unary_unary(
            "/tensorweave.MasterService/CreateSession")
        rng = np.random.default_rng(0)
        for _ in range(50):
            with pytest.raises(grpc.RpcError):  # garbage bytes: not a GraphDef
                raw(b"\n\x05" + rng.bytes(int(rng.integers(1, 200))), timeout=5)
        with tf.Session(server.target) as sess:
            assert sess.run(tf.constant(5)) == 5
