"""Distributed runtime: remote run latency of a trivial graph and ps→worker tensor transfer.

Prints one JSON object. Measures exactly what ../shared/peers/tf_distributed.py measures under
TensorFlow: two servers (ps, worker) of one cluster in this process (loopback TCP all the
same); a float32 variable of 1 MB / 64 MB on the ps reduced by `reduce_sum` on the worker, in a
session on the worker's target, so every step pulls the variable ps→worker (`transfer_*`:
mean step time and the GB/s it implies, reduce included as in TF's figure); and the mean
`sess.run` of `constant + 1` on the worker's own target (`remote_run_latency_us`; `_min_us`
is the fastest run). `pull_*` times `GrpcWorker.recv_tensor` alone (the wire, no step), and
`grpc_noop_floor_us` a no-op unary gRPC call on loopback: gRPC Python's own floor.
"""

from __future__ import annotations

import json
import random
import socket
import sys
import time
from pathlib import Path

import numpy as np

import tensorweave as tf
from tensorweave import dtypes, ir
from tensorweave.distributed.grpc_worker import GrpcWorker
from tensorweave.distributed.server import Server
from tensorweave.runtime.rendezvous import make_key

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.graphs import transfer_ms  # noqa: E402

PEER = "/job:worker/replica:0/task:9/device:CPU:0"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def remote_latency_us(target: str, n: int = 500) -> tuple[float, float]:
    """(mean, min) µs of `sess.run` of a trivial graph on the server at `target`."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:0"):
            a = tf.constant(1.0) + 1.0
        with tf.Session(target) as sess:
            for _ in range(20):
                sess.run(a)
            times = []
            for _ in range(n):
                t = time.perf_counter()
                sess.run(a)
                times.append(time.perf_counter() - t)
    return sum(times) / n * 1e6, min(times) * 1e6


def _filler(edge: str, dev: str, n: int) -> ir.GraphDef:
    """A partition that fills n float32 ones on the server and sends them under `edge`."""
    f32, i32 = dtypes.float32, dtypes.int32
    attrs = {"tensor_name": edge, "send_device": dev, "send_device_incarnation": 1,
             "recv_device": PEER, "client_terminated": False, "T": f32}
    return ir.GraphDef(nodes=[
        ir.NodeDef("dims", "Const", [], dev, {"dtype": i32, "value": np.array([n], np.int32)}),
        ir.NodeDef("one", "Const", [], dev, {"dtype": f32, "value": np.float32(1)}),
        ir.NodeDef("x", "Fill", ["dims", "one"], dev, {"T": f32, "index_type": i32}),
        ir.NodeDef("x/_send", "_Send", ["x"], dev, attrs),
    ])


def pull_ms(target: str, dev: str, mb: int, k: int) -> float:
    """Mean time (ms) of one `recv_tensor` of an `mb` MB float32 tensor made on the server."""
    worker = GrpcWorker(target)
    handle = worker.register_graph(_filler(f"edge_{mb}", dev, mb * 1024 * 1024 // 4), dev)
    key = make_key(dev, 1, PEER, f"edge_{mb}")
    total = 0.0
    for i in range(k + 2):
        step = random.getrandbits(62) + 1  # NOTE: a task remembers cleaned-up step ids
        worker.run_graph(handle, step, [], {})
        t = time.perf_counter()
        value, _ = worker.recv_tensor(step, key, timeout_s=60)
        if i >= 2:
            total += time.perf_counter() - t
        assert value.nbytes == mb * 1024 * 1024
        worker.cleanup_graph(step)
    worker.deregister_graph(handle)
    return total / k * 1e3


def grpc_noop_floor_us(n: int = 500) -> float:
    """Mean µs of a no-op unary call to a gRPC Python server in this process."""
    from concurrent.futures import ThreadPoolExecutor

    import grpc

    handler = grpc.unary_unary_rpc_method_handler(lambda request, context: b"")
    server = grpc.server(ThreadPoolExecutor(4), options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "Floor", {"Noop": handler}),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        call = grpc.insecure_channel(f"127.0.0.1:{port}").unary_unary("/Floor/Noop")
        for _ in range(50):
            call(b"", timeout=10)
        t = time.perf_counter()
        for _ in range(n):
            call(b"", timeout=10)
        return (time.perf_counter() - t) / n * 1e6
    finally:
        server.stop(0)


def main() -> None:
    cluster = {"ps": [f"127.0.0.1:{_port()}"], "worker": [f"127.0.0.1:{_port()}"]}
    ps = Server(cluster, job_name="ps", task_index=0)
    wk = Server(cluster, job_name="worker", task_index=0)
    res: dict[str, float] = {}
    try:
        for mb, k in ((1, 20), (64, 10)):
            ms = transfer_ms(tf, wk.target, mb, k)
            res[f"transfer_{mb}MB_ms"] = ms
            res[f"transfer_{mb}MB_GBps"] = mb / 1024 / (ms / 1e3)
        mean, best = remote_latency_us(wk.target)
        res["remote_run_latency_us"] = mean
        res["remote_run_latency_min_us"] = best
        ps_dev = "/job:ps/replica:0/task:0/device:CPU:0"
        for mb, k in ((1, 20), (64, 10)):
            ms = pull_ms(ps.target, ps_dev, mb, k)
            res[f"pull_{mb}MB_ms"] = ms
            res[f"pull_{mb}MB_GBps"] = mb / 1024 / (ms / 1e3)
        res["grpc_noop_floor_us"] = grpc_noop_floor_us()
    finally:
        wk.stop()
        ps.stop()
    print(json.dumps({k: round(v, 3) for k, v in res.items()}, indent=1))


if __name__ == "__main__":
    main()
