"""A server process under load (issue 14): 64 clients with blocked and running steps while
another client connects, closes sessions, floods the bulk port to its cap and stops the server,
for at least MIN_LOAD_S and until all of that was seen (at most MAX_LOAD_S). The server stops
within 5 s and every client gets an answer or an error."""

from __future__ import annotations

import random
import socket
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.distributed import bulk_wire as wire
from tensorweave.distributed.grpc_worker import GrpcWorker

from .servers import server_process

CLIENTS = 64
MIN_LOAD_S, FLOOD_AT_S, MAX_LOAD_S = 8.0, 3.0, 60.0
BULK_CAP = 96


def _graph():
    g = tf.Graph()
    with g.as_default():
        q = tf.FIFOQueue(1000, tf.float32, shapes=[[]], shared_name="load_q", name="q")
        deq = q.dequeue(name="deq")
        enq = q.enqueue_many([tf.ones([4])], name="enq")
        x = tf.placeholder(tf.float32, [16, 16], name="x")
        work = tf.reduce_sum(tf.matmul(x, x), name="work")
    g.finalize()
    return g, deq, enq, x, work


class _Client:
    """One client thread: a session, steps in a loop, a fresh session after a cancel."""

    def __init__(self, target, graph, fetch, feeds, stop: threading.Event):
        self.target, self.graph, self.fetch, self.feeds = target, graph, fetch, feeds
        self.stop, self.sess = stop, None
        self.answers, self.errors, self.other = 0, [], []
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.stop.is_set():
            try:
                if self.sess is None or self.sess._closed:
                    self.sess = tf.Session(self.target, graph=self.graph)
                self.sess.run(self.fetch, self.feeds)
                self.answers += 1
            except errors.OpError as e:
                self.errors.append(e)
                if isinstance(e, errors.UnavailableError):
                    time.sleep(0.2)
            except RuntimeError as e:  # a session closed by the other client meanwhile
                if "closed Session" not in str(e):
                    self.other.append(e)
            except BaseException as e:  # noqa: BLE001 -- the test reports it
                self.other.append(e)
                return


def _flood(port: int, cap: int) -> tuple[list, int]:
    """Connections with hellos until the port refuses one; (held, refused)."""
    held, refused = [], 0
    hello = wire.HELLO.pack(wire.MAGIC, 0)
    for _ in range(cap + 16):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(hello)
        s.settimeout(5)
        try:
            head = wire.recv_exact(s, wire.REPLY.size)
        except (OSError, wire.Closed):
            head = b""
        if bytes(head) != wire.HELLO_OK:
            refused += 1
            s.close()
            if refused >= 4:
                break
        else:
            held.append(s)
    return held, refused


def _seen_enough(blocked: list, running: list, report: dict) -> bool:
    """Everything the test asks for has happened: sessions churned and closed, the flood,
    an answer for every running client and a cancelled step for a blocked one."""
    return (report["sessions"] > 10 and report["closed"] > 0 and report["flood"] > 0
            and all(c.answers > 0 for c in running)
            and any(isinstance(e, errors.CancelledError) for c in blocked for e in c.errors))


def _chaos(target: str, graph, deq, enq, x, work, blocked: list, running: list,
           report: dict) -> None:
    """Connects, runs and closes sessions; closes blocked clients' sessions; feeds the queue;
    floods the bulk port once; for MIN_LOAD_S and until `_seen_enough` (MAX_LOAD_S at most)."""
    port = GrpcWorker(target).bulk_client(10.0).port
    begin, flooded = time.monotonic(), False
    while time.monotonic() - begin < MAX_LOAD_S:
        if time.monotonic() - begin > MIN_LOAD_S and _seen_enough(blocked, running, report):
            return
        with tf.Session(target, graph=graph) as sess:
            assert sess.run(work, {x: np.ones((16, 16), np.float32)}) == 16.0 ** 3
            report["sessions"] += 1
            if random.random() < 0.3:
                sess.run(enq)  # four blocked clients get an answer
        victim = random.choice(blocked).sess
        if victim is not None and not victim._closed:
            victim.close()
            report["closed"] += 1
        if not flooded and time.monotonic() - begin > FLOOD_AT_S:
            held, report["refused"] = _flood(port, BULK_CAP)
            report["flood"] = len(held)
            time.sleep(2.0)  # steps keep running meanwhile (over gRPC when refused)
            for s in held:
                s.close()
            flooded = True
        time.sleep(0.3)


@pytest.mark.slow
@pytest.mark.multiprocess
def test_64_clients_churn_flood_and_stop():
    graph, deq, enq, x, work = _graph()
    stop = threading.Event()
    with server_process("--bulk-max-connections", str(BULK_CAP), "--hello-deadline", "3") \
            as (proc, target):
        feeds = {x: np.ones((16, 16), np.float32)}
        blocked = [_Client(target, graph, deq, None, stop) for _ in range(CLIENTS // 2)]
        running = [_Client(target, graph, work, feeds, stop) for _ in range(CLIENTS // 2)]
        for c in blocked + running:
            c.thread.start()
        report = {"sessions": 0, "closed": 0, "refused": 0, "flood": 0}
        _chaos(target, graph, deq, enq, x, work, blocked, running, report)
        begin = time.monotonic()
        proc.terminate()
        proc.wait(5.0)  # raises TimeoutExpired when the server does not stop in time
        stopped_in = time.monotonic() - begin
        stop.set()
        for c in blocked + running:
            c.thread.join(max(1.0, 20.0 - (time.monotonic() - begin)))
    hung = [c for c in blocked + running if c.thread.is_alive()]
    assert not hung, f"{len(hung)} clients still waiting after the server stopped"
    assert proc.returncode == 0 and stopped_in < 5.0
    assert not [e for c in blocked + running for e in c.other]
    assert all(c.answers > 0 for c in running)
    cancelled = sum(isinstance(e, errors.CancelledError) for c in blocked for e in c.errors)
    assert cancelled > 0 and report["closed"] > 0 and report["sessions"] > 10
    assert report["refused"] > 0 and report["flood"] > 0  # the flood reached the cap
    print(f"stop {stopped_in:.2f} s; {report}; answers "
          f"{sum(c.answers for c in running)} running, {sum(c.answers for c in blocked)} "
          f"blocked; cancelled {cancelled}")
