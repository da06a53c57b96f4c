"""The bulk tensor transport (distributed/bulk.py): tensors pulled from a real server process
over its raw TCP port, errors and deadlines crossing it, the token, the connection pool."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time

import grpc
import numpy as np
import pytest

from tensorweave import dtypes, errors, ir
from tensorweave.distributed import bulk
from tensorweave.distributed.grpc_worker import GrpcWorker, worker_calls
from tensorweave.distributed.remote import StepTable
from tensorweave.proto import worker_service_pb2 as wpb
from tensorweave.runtime.rendezvous import make_key
from tensorweave.runtime.step import DEAD

from .servers import server_process

DEV = "/job:localhost/replica:0/task:0/device:CPU:0"
PEER = "/job:worker/replica:0/task:1/device:CPU:0"
MB = 1 << 20
KEY = make_key(DEV, 1, PEER, "t")


def _key(edge: str) -> str:
    return make_key(DEV, 1, PEER, edge)


def _senders(values: dict[str, np.ndarray]) -> ir.GraphDef:
    """A partition sending each `_Arg` i (the i-th of `values`) under its edge name."""
    nodes = []
    for i, (edge, v) in enumerate(values.items()):
        t = dtypes.as_dtype(np.asarray(v).dtype)
        nodes.append(ir.NodeDef(f"x{i}", "_Arg", [], DEV, {"T": t, "index": i}))
        nodes.append(ir.NodeDef(f"x{i}/_send", "_Send", [f"x{i}"], DEV, {
            "tensor_name": edge, "send_device": DEV, "send_device_incarnation": 1,
            "recv_device": PEER, "client_terminated": False, "T": t}))
    return ir.GraphDef(nodes=nodes)


def _range_sender(edge: str, n: int) -> ir.GraphDef:
    """Sends float32 0, 1, ..., n-1, made on the server (so only the receive moves it)."""
    f32 = dtypes.float32
    consts = [ir.NodeDef(name, "Const", [], DEV, {"dtype": f32, "value": np.float32(v)})
              for name, v in (("start", 0), ("limit", n), ("delta", 1))]
    return ir.GraphDef(nodes=consts + [
        ir.NodeDef("r", "Range", ["start", "limit", "delta"], DEV, {"Tidx": f32}),
        ir.NodeDef("r/_send", "_Send", ["r"], DEV, {
            "tensor_name": edge, "send_device": DEV, "send_device_incarnation": 1,
            "recv_device": PEER, "client_terminated": False, "T": f32}),
    ])


def _dead_sender(edge: str) -> ir.GraphDef:
    """Sends the untaken (dead) output of a Switch under `edge`."""
    f32 = dtypes.float32
    return ir.GraphDef(nodes=[
        ir.NodeDef("x", "Const", [], DEV, {"dtype": f32, "value": np.float32(1)}),
        ir.NodeDef("p", "Const", [], DEV, {"dtype": dtypes.bool_, "value": np.bool_(False)}),
        ir.NodeDef("sw", "Switch", ["x", "p"], DEV, {"T": f32}),
        ir.NodeDef("sw/_send", "_Send", ["sw:1"], DEV, {
            "tensor_name": edge, "send_device": DEV, "send_device_incarnation": 1,
            "recv_device": PEER, "client_terminated": False, "T": f32}),
    ])


@pytest.fixture(scope="module")
def remote():
    with server_process() as (proc, target):
        worker = GrpcWorker(target)
        worker.get_status()
        assert worker._bulk is not None, "the server advertises no bulk port"
        yield proc, worker


# -- a real server process ---------------------------------------------------------------------
@pytest.mark.multiprocess
def test_tensors_of_every_kind_travel_intact(remote):
    _, worker = remote
    rng = np.random.default_rng(0)
    values = {
        "one_mb": rng.standard_normal(MB // 4).astype(np.float32).reshape(512, 512),
        "i64": rng.integers(-2**62, 2**62, (3, 5), dtype=np.int64),
        "flags": np.array([[True, False, True]]),
        "words": np.array([b"alpha", b"", "\u00e9t\u00e9".encode()], dtype=object),
        "scalar": np.float64(2.5),
        "empty": np.zeros((0, 4), np.float32),
    }
    handle = worker.register_graph(_senders(values), DEV)
    worker.run_graph(handle, 11, list(values.values()), {})
    for edge, want in values.items():
        got, dead = worker.recv_tensor(11, _key(edge), timeout_s=30)
        assert not dead and got.dtype == np.asarray(want).dtype, edge
        assert got.shape == np.shape(want), edge
        np.testing.assert_array_equal(got, want, err_msg=edge)
    worker.cleanup_graph(11)


@pytest.mark.multiprocess
def test_a_64mb_tensor_travels_intact(remote):
    _, worker = remote
    handle = worker.register_graph(_range_sender("big", 16 * MB), DEV)
    worker.run_graph(handle, 12, [], {})
    got, dead = worker.recv_tensor(12, _key("big"), timeout_s=30)
    assert not dead and got.dtype == np.float32 and got.shape == (16 * MB,)
    np.testing.assert_array_equal(got, np.arange(16 * MB, dtype=np.float32))
    worker.cleanup_graph(12)


@pytest.mark.multiprocess
def test_a_dead_tensor_arrives_dead(remote):
    _, worker = remote
    handle = worker.register_graph(_dead_sender("dead_edge"), DEV, {"dataflow": True})
    worker.run_graph(handle, 21, [], {})
    value, dead = worker.recv_tensor(21, _key("dead_edge"), timeout_s=5)
    assert dead and value is DEAD
    worker.cleanup_graph(21)


@pytest.mark.multiprocess
def test_a_tensor_never_sent_fails_at_its_deadline(remote):
    _, worker = remote
    start = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError, match="never_sent"):
        worker.recv_tensor(31, _key("never_sent"), timeout_s=0.5)
    assert 0.45 < time.monotonic() - start < 2.0
    worker.cleanup_graph(31)


@pytest.mark.multiprocess
def test_an_aborted_step_reaches_the_receiver_as_its_error_class(remote):
    _, worker = remote
    g = _senders({"bad_edge": np.ones((2, 3), np.float32)})
    g.nodes.insert(1, ir.NodeDef("y", "MatMul", ["x0", "x0"], DEV, {
        "T": dtypes.float32, "transpose_a": False, "transpose_b": False}))
    g.nodes[2].inputs = ["y"]
    handle = worker.register_graph(g, DEV)
    with pytest.raises(errors.InvalidArgumentError):
        worker.run_graph(handle, 41, [np.ones((2, 3), np.float32)], {})
    with pytest.raises(errors.InvalidArgumentError) as info:
        worker.recv_tensor(41, _key("bad_edge"), timeout_s=5)
    assert info.value.node_def is not None and info.value.node_def.name == "y"
    worker.cleanup_graph(41)
    with pytest.raises(errors.AbortedError, match="cleaned up"):
        worker.recv_tensor(41, _key("bad_edge"), timeout_s=5)


@pytest.mark.multiprocess
def test_the_pool_reuses_connections_and_serves_threads_at_once(remote):
    _, worker = remote
    client = worker._bulk
    values = {f"c{i}": np.full((64, 64), i, np.int32) for i in range(6)}
    handle = worker.register_graph(_senders(values), DEV)
    worker.run_graph(handle, 51, list(values.values()), {})
    before = client.connections_opened
    for edge in list(values)[:3]:
        np.testing.assert_array_equal(worker.recv_tensor(51, _key(edge), 5)[0], values[edge])
    assert client.connections_opened - before <= 1
    results: dict[str, np.ndarray] = {}

    def receive(edge):
        results[edge] = worker.recv_tensor(52, _key(edge), 10)[0]

    threads = [threading.Thread(target=receive, args=(e,)) for e in values]
    for t in threads:  # every receiver waits on the server before anything is sent
        t.start()
    time.sleep(0.2)
    worker.run_graph(handle, 52, list(values.values()), {})
    for t in threads:
        t.join(15)
    assert sorted(results) == sorted(values)
    for edge, want in values.items():
        np.testing.assert_array_equal(results[edge], want)
    assert client.connections_opened - before <= len(values)
    worker.cleanup_graph(51)
    worker.cleanup_graph(52)


@pytest.mark.multiprocess
def test_a_killed_server_is_unavailable_at_once():
    with server_process() as (proc, target):
        worker = GrpcWorker(target)
        handle = worker.register_graph(_senders({"k": np.ones(4, np.float32)}), DEV)
        worker.run_graph(handle, 61, [np.ones(4, np.float32)], {})
        worker.recv_tensor(61, _key("k"), 5)  # a pooled connection now exists
        address = worker._bulk.address
        waiting: list[BaseException] = []

        def receive():
            try:
                worker.recv_tensor(62, _key("k"), timeout_s=30)
            except errors.OpError as e:
                waiting.append(e)

        t = threading.Thread(target=receive)
        t.start()
        time.sleep(0.3)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(5)
        start = time.monotonic()
        t.join(5)
        assert not t.is_alive() and isinstance(waiting[0], errors.UnavailableError)
        with pytest.raises(errors.UnavailableError, match=address):
            worker._bulk.recv_tensor(63, _key("k"), timeout_s=30)
        assert time.monotonic() - start < 3.0


# -- in this process ---------------------------------------------------------------------------
@pytest.fixture()
def local():
    steps = StepTable()
    server = bulk.BulkServer(steps)
    server.start()
    try:
        yield steps, server, bulk.BulkClient("127.0.0.1", server.port)
    finally:
        server.stop()


def test_byte_order_and_layout_are_normalised(local):
    steps, _, client = local
    big_endian = np.arange(12, dtype=">i4").reshape(3, 4)
    strided = np.arange(40, dtype=np.float64).reshape(5, 8)[:, ::3]
    for i, v in enumerate([big_endian, strided, np.complex64(1 + 2j), np.float16([1, 2])]):
        steps.find(7).send(f"a;1;b;e{i};0:0", v)
        got, _ = client.recv_tensor(7, f"a;1;b;e{i};0:0", 5)
        assert got.dtype.isnative and got.shape == np.shape(v)
        np.testing.assert_array_equal(got, v)


def test_several_tensors_come_on_one_connection_in_the_order_they_are_sent(local):
    steps, _, client = local
    keys = [f"a;1;b;m{i};0:0" for i in range(3)]
    got: list = []

    def send_backwards():
        time.sleep(0.05)  # NOTE: the request waits on the server before anything is sent
        for i in (2, 0, 1):
            steps.find(8).send(keys[i], np.full(4, i, np.int32))
            time.sleep(0.02)

    sender = threading.Thread(target=send_backwards)
    sender.start()
    before = client.connections_opened
    client.recv_many(8, keys, lambda k, v, dead: got.append((k, v.tolist(), dead)), 5)
    sender.join(5)
    assert got == [(2, [2] * 4, False), (0, [0] * 4, False), (1, [1] * 4, False)]
    assert client.connections_opened - before <= 1


def test_a_step_aborted_midway_fails_the_rest_of_a_many_tensor_pull(local):
    steps, _, client = local
    keys = ["a;1;b;first;0:0", "a;1;b;never;0:0"]
    steps.find(9).send(keys[0], np.float32(1))
    threading.Timer(0.1, steps.find(9).abort,
                    [errors.AbortedError(None, None, "step 9 went away")]).start()
    got: list = []
    with pytest.raises(errors.AbortedError, match="step 9 went away"):
        client.recv_many(9, keys, lambda k, v, dead: got.append(k), 5)
    assert got == [0]
    with pytest.raises(errors.DeadlineExceededError, match="late"):
        client.recv_many(10, ["a;1;b;late;0:0", "a;1;b;later;0:0"], lambda *a: None, 0.2)
    steps.find(11).send("a;1;b;ok;0:0", np.float32(3))  # the connection still serves
    assert float(client.recv_tensor(11, "a;1;b;ok;0:0", 5)[0]) == 3.0


def test_a_wrong_token_is_refused(local):
    steps = StepTable()
    server = bulk.BulkServer(steps, token=b"right-token")
    server.start()
    try:
        steps.find(1).send(KEY, np.ones(3))
        with pytest.raises(errors.UnauthenticatedError):
            bulk.BulkClient("127.0.0.1", server.port, token=b"wrong-token").recv_tensor(
                1, KEY, 5)
        with pytest.raises(errors.UnauthenticatedError):
            bulk.BulkClient("127.0.0.1", server.port, token=b"").recv_tensor(
                1, KEY, 5)
        got, _ = bulk.BulkClient("127.0.0.1", server.port, token=b"right-token").recv_tensor(
            1, KEY, 5)  # the refused requests took nothing
        np.testing.assert_array_equal(got, np.ones(3))
    finally:
        server.stop()


def test_a_server_token_from_its_security_config_is_enforced():
    security = pytest.importorskip("tensorweave.distributed.security")
    from tensorweave.distributed.server import Server

    try:
        server = Server.create_local_server(start=False)
        server.stop()
        server = Server({"localhost": ["127.0.0.1:0"]}, "localhost", 0, token="s3cret-token")
    except TypeError:
        pytest.skip("Server takes no token yet")
    assert security.rpc_token(server.security) == b"s3cret-token"
    try:
        port = server._bulk.port
        with pytest.raises(errors.UnauthenticatedError):
            bulk.BulkClient("127.0.0.1", port, token=b"guess").recv_tensor(1, KEY, 5)
        with pytest.raises(errors.DeadlineExceededError):  # accepted; nothing was sent
            bulk.BulkClient("127.0.0.1", port, token=b"s3cret-token").recv_tensor(
                1, KEY, 0.2)
    finally:
        server.stop()


def test_garbage_and_bad_keys_leave_the_server_serving(local):
    steps, server, client = local
    for junk in (b"GET / HTTP/1.1\r\n\r\n", b"TWB1\x00\x00\x07" + b"\xff" * 40, b""):
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
            with contextlib.suppress(OSError):  # the server may drop us, unread bytes and all
                s.sendall(junk)
                s.shutdown(socket.SHUT_WR)
                while s.recv(4096):
                    pass
    with pytest.raises(errors.InvalidArgumentError, match="rendezvous key"):
        client.recv_tensor(3, "no-such-key", 5)
    steps.find(3).send("a;1;b;ok;0:0", np.arange(3))
    np.testing.assert_array_equal(client.recv_tensor(3, "a;1;b;ok;0:0", 5)[0], np.arange(3))


def test_stopping_the_server_frees_a_waiting_receiver(local):
    _, server, client = local
    failures: list[BaseException] = []

    def receive():
        try:
            client.recv_tensor(9, "a;1;b;late;0:0", timeout_s=30)
        except errors.OpError as e:
            failures.append(e)

    t = threading.Thread(target=receive)
    t.start()
    time.sleep(0.2)
    start = time.monotonic()
    server.stop()
    t.join(5)
    assert not t.is_alive() and isinstance(failures[0], errors.UnavailableError)
    assert time.monotonic() - start < 3.0
    assert not [t for t in threading.enumerate() if t.name == "tw-bulk-accept"]


# -- switches and fallbacks --------------------------------------------------------------------
@pytest.fixture()
def in_process_server():
    from tensorweave.distributed.server import Server

    with Server.create_local_server() as server:
        yield server


def test_without_the_bulk_path_everything_takes_grpc(in_process_server, monkeypatch):
    import tensorweave as tf

    monkeypatch.setattr(bulk, "client_enabled", lambda: False)
    worker = GrpcWorker(in_process_server.target)
    assert worker.bulk_client() is None
    values = {"f": np.arange(12, dtype=np.float32).reshape(3, 4),
              "s": np.array([b"x", b"yz"], dtype=object)}
    handle = worker.register_graph(_senders(values), DEV)
    worker.run_graph(handle, 71, list(values.values()), {})
    for edge, want in values.items():  # streamed over gRPC (transfer.py)
        got, _ = worker.recv_tensor(71, _key(edge), 5)
        assert got.shape == want.shape and list(got.ravel()) == list(want.ravel())
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        with tf.Session(in_process_server.target) as sess:
            np.testing.assert_array_equal(sess.run(x * 3.0, {x: [1.0, 2.0]}), [3.0, 6.0])
            assert sess._master._fast is None
            with pytest.raises(errors.InvalidArgumentError, match="x"):
                sess.run(x * 3.0)


def test_remote_sessions_run_steps_over_the_bulk_port(in_process_server):
    import tensorweave as tf

    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        y = tf.reduce_sum(x * 2.0, name="y")
        with tf.Session(in_process_server.target) as sess:
            assert sess.run(y, {x: np.arange(4, dtype=np.float32)}) == 12.0
            fast = sess._master._fast
            assert fast is not None and fast.port == in_process_server._bulk.port
            opened = fast.connections_opened
            for i in range(20):
                assert sess.run(y, {x: np.full(3, i, np.float32)}) == 6.0 * i
            assert fast.connections_opened == opened  # one pooled connection, reused
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(y)  # unfed placeholder: the server's error, node and all
            assert info.value.node_def is not None and "x" in info.value.message


def test_tls_switches_the_bulk_path_off(monkeypatch, tmp_path):
    security = pytest.importorskip("tensorweave.distributed.security")
    config = security.SecurityConfig(tls_cert=str(tmp_path / "c.pem"),
                                     tls_key=str(tmp_path / "k.pem"))
    server = bulk.BulkServer(StepTable(), config=config)
    server.start()  # a no-op: there is no port
    assert server.port == 0
    server.stop()
    monkeypatch.setenv(security.ENV_TLS_CA, str(tmp_path / "ca.pem"))
    assert not bulk.client_enabled()
    monkeypatch.delenv(security.ENV_TLS_CA)
    assert bulk.client_enabled()


def test_the_process_token_is_presented_on_new_connections(monkeypatch):
    security = pytest.importorskip("tensorweave.distributed.security")
    monkeypatch.setenv(security.ENV_TOKEN, "process-token")
    assert bulk.client_token() == b"process-token"
    steps = StepTable()
    server = bulk.BulkServer(steps, token=b"process-token")
    server.start()
    try:
        steps.find(1).send(KEY, np.int8(7))
        assert bulk.BulkClient("127.0.0.1", server.port).recv_tensor(1, KEY, 5)[0] == 7
    finally:
        server.stop()


class _FakeWorkerServicer:
    """RunGraph/CleanupGraph as servicer methods: step 2 aborts naming a node."""

    def __init__(self):
        self.ended: list[int] = []

    def RunGraph(self, request, context):
        context.add_callback(lambda: self.ended.append(request.step_id))
        if request.step_id == 2:
            context.set_trailing_metadata((("tw-node-name", "bad"), ("tw-node-op", "Op")))
            context.abort(grpc.StatusCode.OUT_OF_RANGE, "no more")
        return wpb.RunGraphResponse(has_step_stats=True)

    CleanupGraph = RunGraph


def test_calls_run_their_handler_and_carry_its_error():
    servicer = _FakeWorkerServicer()
    server = bulk.BulkServer(StepTable(), calls=worker_calls(servicer))
    server.start()
    try:
        client = bulk.BulkClient("127.0.0.1", server.port)
        raw = client.call(2, wpb.RunGraphRequest(step_id=1).SerializeToString(), 5)
        assert wpb.RunGraphResponse.FromString(raw).has_step_stats
        with pytest.raises(errors.OutOfRangeError, match="no more") as info:
            client.call(2, wpb.RunGraphRequest(step_id=2).SerializeToString(), 5)
        assert info.value.node_def.name == "bad"
        assert servicer.ended == [1, 2]  # callbacks run when the call ends, as gRPC's do
        with pytest.raises(errors.InvalidArgumentError, match="Malformed RunGraph"):
            client.call(2, b"\xff\xff\xff", 5)
        with pytest.raises(errors.UnimplementedError):
            client.call(99, b"", 5)
        assert client.connections_opened == 1  # errors leave the connection usable
    finally:
        server.stop()


def _child_receives(port: int, step: int) -> None:
    client = bulk.client_for("127.0.0.1", port)
    before = client.connections_opened
    got, _ = client.recv_tensor(step, KEY, 5)
    ok = got.tolist() == [1, 2, 3] and client.connections_opened == before + 1
    os._exit(0 if ok else 3)


@pytest.mark.multiprocess
def test_a_forked_child_never_shares_the_parents_connections(local):
    import multiprocessing

    steps, server, _ = local
    client = bulk.client_for("127.0.0.1", server.port)
    steps.find(1).send(KEY, np.arange(3))
    client.recv_tensor(1, KEY, 5)  # the parent now has a pooled connection
    steps.find(2).send(KEY, np.array([1, 2, 3]))
    child = multiprocessing.get_context("fork").Process(target=_child_receives,
                                                         args=(server.port, 2))
    child.start()
    child.join(10)
    assert child.exitcode == 0
    steps.find(3).send(KEY, np.array([4.5]))
    opened = client.connections_opened
    assert client.recv_tensor(3, KEY, 5)[0].tolist() == [4.5]
    assert client.connections_opened == opened  # still the parent's own pooled connection
