"""A server under abuse and churn (issue 14): connection bursts on the bulk port, clients that
close sessions or vanish with steps in flight, more blocked steps than RPC threads, and
connections that stall before authenticating. Each test fails on the code before its fix."""

from __future__ import annotations

import contextlib
import resource
import socket
import threading
import time

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.distributed import bulk
from tensorweave.distributed import bulk_wire as wire
from tensorweave.distributed.grpc_worker import GrpcWorker
from tensorweave.distributed.remote import StepTable
from tensorweave.distributed.server import Server
from tensorweave.proto import master_service_pb2 as mpb
from tensorweave.proto import master_service_pb2_grpc as mpb_grpc
from tensorweave.proto import worker_service_pb2 as wpb
from tensorweave.proto import worker_service_pb2_grpc as wpb_grpc
from tensorweave.runtime.rendezvous import make_key

from .servers import server_process

KEY = make_key("/job:a/replica:0/task:0/device:CPU:0", 1,
               "/job:b/replica:0/task:0/device:CPU:0", "t")


def _hello(token: bytes = b"") -> bytes:
    return wire.HELLO.pack(wire.MAGIC, len(token)) + token


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes `sock` within `seconds` (reading and dropping any reply)."""
    sock.settimeout(seconds)
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            if not sock.recv(4096):
                return True
    except TimeoutError:
        return False
    except OSError:
        return True
    return False


def _queue_graph():
    """(graph, shared queue, dequeue, enqueue of 1.0, size) — the queue outlives sessions."""
    g = tf.Graph()
    with g.as_default():
        q = tf.FIFOQueue(10, tf.float32, shapes=[[]], shared_name="shared_q", name="q")
        deq = q.dequeue(name="deq")
        enq = q.enqueue(tf.constant(1.0), name="enq")
        size = q.size(name="size")
    return g, deq, enq, size


def _blocked_run(target: str, outcome: list, started: threading.Event | None = None):
    """A thread running a dequeue on an empty queue in its own session; `outcome` gets the
    session, then the error (or value) the run ends with."""
    def run():
        g, deq, _, _ = _queue_graph()
        sess = tf.Session(target, graph=g)
        outcome.append(sess)
        if started is not None:
            started.set()
        try:
            outcome.append(sess.run(deq))
        except BaseException as e:  # noqa: BLE001 -- the test inspects it
            outcome.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


@pytest.fixture()
def server():
    with Server.create_local_server() as s:
        yield s


@pytest.fixture(params=["bulk", "grpc"])
def transport(request, monkeypatch):
    """Steps over the bulk port, or over gRPC only (as with TLS on)."""
    if request.param == "grpc":
        monkeypatch.setattr(bulk, "client_enabled", lambda: False)
    return request.param


# -- 1: connection bursts on the bulk port -----------------------------------------------------
def _low_fd_limit():
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


@pytest.mark.slow
@pytest.mark.multiprocess
def test_a_connection_burst_at_the_fd_limit_leaves_the_bulk_port_serving():
    with server_process(preexec_fn=_low_fd_limit) as (proc, target):
        port = GrpcWorker(target).bulk_client(10.0).port
        held = []
        try:
            for _ in range(400):  # past the server's 256 descriptors
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=2)
                    s.sendall(_hello())
                except OSError:
                    break
                held.append(s)
            time.sleep(1.0)  # the server is out of descriptors now
        finally:
            for s in held:
                s.close()
        time.sleep(1.5)
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [2])
            with tf.Session(target) as sess:
                np.testing.assert_array_equal(sess.run(x * 2.0, {x: [1.0, 2.0]}), [2.0, 4.0])
                assert sess._master._fast is not None and sess._master._fast.port == port
        assert proc.poll() is None


def test_connections_beyond_the_cap_are_refused_and_counted(monkeypatch):
    monkeypatch.setattr(bulk, "MAX_CONNECTIONS", 3, raising=False)
    steps = StepTable()
    server = bulk.BulkServer(steps)
    server.start()
    held = []
    try:
        for _ in range(3):
            held.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
            held[-1].sendall(_hello())
        time.sleep(0.3)
        extra = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        extra.sendall(_hello())
        assert _closed_within(extra, 5.0)
        extra.close()
        assert server.metrics()["refused"] == 1
        assert server.metrics()["connections"] == 3
        held.pop().close()
        time.sleep(0.3)
        steps.find(1).send(KEY, np.int8(5))
        assert bulk.BulkClient("127.0.0.1", server.port).recv_tensor(1, KEY, 5)[0] == 5
    finally:
        for s in held:
            s.close()
        server.stop()


def test_accept_errors_back_off_and_keep_listening(monkeypatch):
    server = bulk.BulkServer(StepTable())
    real, failures = server._listener, [0]

    class Flaky:
        def __getattr__(self, name):
            return getattr(real, name)

        def accept(self):
            if failures[0] < 3:
                failures[0] += 1
                raise OSError(24, "Too many open files")
            return real.accept()

    server._listener = Flaky()
    server.start()
    try:
        server._steps.find(2).send(KEY, np.int8(9))
        assert bulk.BulkClient("127.0.0.1", server.port).recv_tensor(2, KEY, 10)[0] == 9
        assert server.metrics()["accept_errors"] == 3
    finally:
        server.stop()


def test_a_client_whose_bulk_port_fails_runs_its_step_over_grpc(server):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2])
        y = x * 2.0
        with tf.Session(server.target) as sess:
            np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [2.0, 4.0])
            assert sess._master._fast is not None
            server._bulk.stop()  # the port is gone: connections are refused
            sess._master._fast.close()
            np.testing.assert_array_equal(sess.run(y, {x: [3.0, 4.0]}), [6.0, 8.0])


# -- 2: closing a session, or vanishing, with steps in flight ----------------------------------
def test_closing_a_remote_session_cancels_its_blocked_step(server, transport):
    outcome: list = []
    started = threading.Event()
    t = _blocked_run(server.target, outcome, started)
    assert started.wait(10)
    time.sleep(1.0)  # the run is blocked in the dequeue on the server
    begin = time.monotonic()
    outcome[0].close()
    t.join(10)
    assert not t.is_alive(), "the blocked step was not cancelled by Session.close()"
    assert isinstance(outcome[1], errors.CancelledError), outcome[1]
    assert time.monotonic() - begin < 5.0


def _element_left_after(server, drop_client) -> float:
    """Starts a dequeue that `drop_client` abandons, then enqueues one element: the size the
    queue has 1.5 s later (1.0 when the abandoned step was cancelled, 0.0 when it was still
    waiting and took the element)."""
    g, deq, enq, size = _queue_graph()
    with tf.Session(server.target, graph=g) as sess:
        drop_client(sess, deq)
        time.sleep(1.0)
        sess.run(enq)
        time.sleep(1.5)
        left = sess.run(size)
        if left == 1:
            sess.run(deq)
        return left


def test_a_vanished_bulk_client_has_its_step_cancelled(server):
    def drop(sess, deq):
        cid, _ = sess._master.make_callable(sess._handle, [], [deq.name], [])
        req = mpb.RunCallableRequest(session_handle=sess._handle, handle=cid)
        body = req.SerializeToString()
        s = socket.create_connection(("127.0.0.1", server._bulk.port), timeout=5)
        s.sendall(_hello() + wire.REQUEST.pack(wire.KIND_CALL, 1, 3600.0, len(body)) + body)
        time.sleep(0.5)
        s.close()

    assert _element_left_after(server, drop) == 1


def test_a_grpc_client_past_its_deadline_has_its_step_cancelled(server):
    def drop(sess, deq):
        cid, _ = sess._master.make_callable(sess._handle, [], [deq.name], [])
        stub = mpb_grpc.MasterServiceStub(grpc.insecure_channel(server.target[7:]))
        with pytest.raises(grpc.RpcError):
            stub.RunCallable(mpb.RunCallableRequest(session_handle=sess._handle, handle=cid),
                             timeout=0.5)

    assert _element_left_after(server, drop) == 1


# -- 3: more blocked steps than RPC threads; stopping ------------------------------------------
@pytest.mark.slow
def test_blocked_steps_do_not_starve_the_server_and_stop_cancels_them(monkeypatch):
    monkeypatch.setattr(bulk, "client_enabled", lambda: False)  # every call on gRPC, as TLS
    server = Server.create_local_server()
    runs = [[] for _ in range(24)]
    threads = []
    try:
        for outcome in runs:
            started = threading.Event()
            threads.append(_blocked_run(server.target, outcome, started))
            assert started.wait(20)
        time.sleep(1.0)
        stub = wpb_grpc.WorkerServiceStub(grpc.insecure_channel(server.target[7:]))
        assert stub.GetStatus(wpb.GetStatusRequest(), timeout=10).device_attributes
        g = tf.Graph()
        with g.as_default(), tf.Session(server.target) as sess:
            assert sess.run(tf.constant(3.0) * 2.0) == 6.0
    finally:
        begin = time.monotonic()
        server.stop()
        stopped_in = time.monotonic() - begin
    for t in threads:
        t.join(10)
    assert stopped_in < 5.0
    assert not any(t.is_alive() for t in threads)
    assert all(isinstance(r[1], errors.OpError) for r in runs)


# -- 5: before authentication --------------------------------------------------------------------
@contextlib.contextmanager
def _bulk_server(monkeypatch, token=None, deadline=1.0):
    monkeypatch.setattr(bulk, "HELLO_DEADLINE_S", deadline, raising=False)
    server = bulk.BulkServer(StepTable(), token=token)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_a_hello_trickled_byte_by_byte_is_cut_at_the_hello_deadline(monkeypatch):
    with _bulk_server(monkeypatch, token=b"secret-token") as server:
        s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        begin = time.monotonic()
        hello = _hello(b"secret-token")
        closed = False
        for i in range(len(hello)):
            try:
                s.sendall(hello[i:i + 1])
            except OSError:
                closed = True
                break
            if _closed_within(s, 0.4):
                closed = True
                break
        assert closed and time.monotonic() - begin < 4.0
        s.close()


def test_a_connection_idle_after_its_hello_is_cut_at_the_hello_deadline(monkeypatch):
    with _bulk_server(monkeypatch) as server:
        s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        s.sendall(_hello())
        assert _closed_within(s, 4.0)
        s.close()
        # a real client's first request follows its hello at once, and later idling is fine
        server._steps.find(4).send(KEY, np.int8(1))
        client = bulk.BulkClient("127.0.0.1", server.port)
        assert client.recv_tensor(4, KEY, 5)[0] == 1
        time.sleep(1.5)
        server._steps.find(5).send(KEY, np.int8(2))
        assert client.recv_tensor(5, KEY, 5)[0] == 2
        assert client.connections_opened == 1


def test_a_bad_magic_is_dropped_before_the_token_is_read(monkeypatch):
    with _bulk_server(monkeypatch, token=b"t", deadline=30.0) as server:
        s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        s.sendall(b"XXXX\xff\xff")  # announces a 64 KB token it never sends
        assert _closed_within(s, 3.0)
        s.close()


def test_step_calls_beyond_the_cap_are_refused_at_once(monkeypatch):
    monkeypatch.setattr(bulk, "client_enabled", lambda: False)
    server = Server.create_local_server()
    server._admission.max_steps = 2
    runs = [[] for _ in range(2)]
    try:
        threads = []
        for outcome in runs:
            started = threading.Event()
            threads.append(_blocked_run(server.target, outcome, started))
            assert started.wait(20)
        time.sleep(1.0)
        g, deq, _, _ = _queue_graph()
        with tf.Session(server.target, graph=g) as sess:  # control calls still served
            with pytest.raises(errors.ResourceExhaustedError, match="running 2 steps"):
                sess.run(deq)
        assert server.metrics()["rpc_steps_refused"] == 1
        assert server.metrics()["rpc_steps_in_flight"] == 2
    finally:
        server.stop()
    for t in threads:
        t.join(10)
    assert all(isinstance(r[1], errors.UnavailableError) for r in runs)


def test_a_cancelled_grpc_receive_gives_its_thread_back(server):
    stub = wpb_grpc.WorkerServiceStub(grpc.insecure_channel(server.target[7:]))
    key = make_key("/job:localhost/replica:0/task:0/device:CPU:0", 1,
                   "/job:b/replica:0/task:0/device:CPU:0", "t")
    call = stub.RecvTensor(wpb.RecvTensorRequest(step_id=77, rendezvous_key=key))  # no deadline
    time.sleep(1.0)
    assert server.metrics()["rpc_steps_in_flight"] == 1
    call.cancel()
    end = time.monotonic() + 5.0
    while server.metrics()["rpc_steps_in_flight"] and time.monotonic() < end:
        time.sleep(0.1)
    assert server.metrics()["rpc_steps_in_flight"] == 0
