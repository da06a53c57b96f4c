"""`GrpcWorker` against a server's worker service: register, run, pull tensors, clean up."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tensorweave import dtypes, errors, ir
from tensorweave.distributed.grpc_worker import GrpcWorker
from tensorweave.distributed.local_cluster import free_ports
from tensorweave.distributed.server import Server
from tensorweave.runtime.rendezvous import make_key

DEV = "/job:localhost/replica:0/task:0/device:CPU:0"
PEER = "/job:worker/replica:0/task:1/device:CPU:0"
F32 = dtypes.float32


@pytest.fixture(scope="module")
def worker():
    server = Server.create_local_server()
    try:
        yield GrpcWorker(server.target)
    finally:
        server.stop()


def _partition(edge: str) -> ir.GraphDef:
    """y = x * 3 returned as retval 0 and sent to PEER under `edge`."""
    send_attrs = {"tensor_name": edge, "send_device": DEV, "send_device_incarnation": 1,
                  "recv_device": PEER, "client_terminated": False, "T": F32}
    return ir.GraphDef(nodes=[
        ir.NodeDef("x", "_Arg", [], DEV, {"T": F32, "index": 0}),
        ir.NodeDef("three", "Const", [], DEV, {"dtype": F32, "value": np.float32(3)}),
        ir.NodeDef("y", "Mul", ["x", "three"], DEV, {"T": F32}),
        ir.NodeDef("y/_send", "_Send", ["y"], DEV, send_attrs),
        ir.NodeDef("y/_retval", "_Retval", ["y"], DEV, {"T": F32, "index": 0}),
    ])


def test_get_status_names_the_task_devices(worker):
    # NOTE: CPU devices only; XLA_CPU:0 is there too where jax is installed
    assert [d["name"] for d in worker.get_status() if d["device_type"] == "CPU"] == [DEV]


def test_register_run_and_recv_a_partition(worker):
    handle = worker.register_graph(_partition("edge_1_y"), DEV)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out, stats = worker.run_graph(handle, 101, [x], {"trace": True})
    np.testing.assert_array_equal(out[0], x * 3)
    assert "y" in {n["node_name"] for n in stats["node_stats"]}
    value, dead = worker.recv_tensor(101, make_key(DEV, 1, PEER, "edge_1_y"), timeout_s=5)
    assert not dead and value.dtype == np.float32
    np.testing.assert_array_equal(value, x * 3)
    worker.cleanup_graph(101)
    worker.deregister_graph(handle)
    with pytest.raises(errors.AbortedError, match=handle):
        worker.run_graph(handle, 102, [x], {})


def test_recv_streams_64mb_in_chunks(worker):
    handle = worker.register_graph(_partition("edge_2_y"), DEV)
    x = np.ones(16 * 1024 * 1024, np.float32)  # 64 MB: several chunks, far over 4 MB
    worker.run_graph(handle, 201, [x], {})
    value, _ = worker.recv_tensor(201, make_key(DEV, 1, PEER, "edge_2_y"), timeout_s=30)
    assert value.shape == x.shape and value[0] == 3.0 and value[-1] == 3.0
    worker.cleanup_graph(201)


def test_recv_of_a_never_sent_tensor_times_out(worker):
    start = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError):
        worker.recv_tensor(301, make_key(DEV, 1, PEER, "edge_9_nothing"), timeout_s=0.5)
    assert time.monotonic() - start < 3.0
    worker.cleanup_graph(301)


def test_failed_step_raises_naming_the_node_and_fails_receivers(worker):
    g = _partition("edge_3_y")
    g.nodes[2] = ir.NodeDef("y", "MatMul", ["x", "x"], DEV,
                            {"T": F32, "transpose_a": False, "transpose_b": False})
    handle = worker.register_graph(g, DEV)
    with pytest.raises(errors.InvalidArgumentError) as info:
        worker.run_graph(handle, 401, [np.ones((2, 3), np.float32)], {})
    assert "y" in info.value.message and info.value.node_def.name == "y"
    with pytest.raises(errors.InvalidArgumentError):  # the step's own error, not a hang
        worker.recv_tensor(401, make_key(DEV, 1, PEER, "edge_3_y"), timeout_s=5)
    worker.cleanup_graph(401)


def test_unknown_op_is_a_clear_error_and_the_server_keeps_serving(worker):
    g = ir.GraphDef(nodes=[ir.NodeDef("bad", "NoSuchOp", [], DEV, {})])
    with pytest.raises(errors.OpError, match="NoSuchOp"):
        worker.register_graph(g, DEV)
    assert worker.get_status()


def test_unreachable_worker_is_unavailable_naming_the_address():

    port = free_ports(1)[0]
    with pytest.raises(errors.UnavailableError, match=f"127.0.0.1:{port}"):
        GrpcWorker(f"127.0.0.1:{port}").get_status()
