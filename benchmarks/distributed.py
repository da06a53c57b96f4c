"""Distributed runtime: remote run latency of a trivial graph and tensor transfer over gRPC.

Prints one JSON object. Like ../shared/peers/tf_distributed.py the server runs in this process
(loopback gRPC all the same). Transfer is RecvTensor of a sent tensor (1 MB and 64 MB) pulled
with `GrpcWorker.recv_tensor`, the path a ps→worker transfer takes.
"""

from __future__ import annotations

import json
import time

import numpy as np

import tensorweave as tf
from tensorweave import dtypes, ir
from tensorweave.distributed.grpc_worker import GrpcWorker
from tensorweave.distributed.server import Server
from tensorweave.runtime.rendezvous import make_key

DEV = "/job:localhost/replica:0/task:0/device:CPU:0"
PEER = "/job:worker/replica:0/task:1/device:CPU:0"


def remote_latency_us(target: str, n: int = 500) -> float:
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0) + 1.0
        with tf.Session(target) as sess:
            for _ in range(20):
                sess.run(a)
            t = time.perf_counter()
            for _ in range(n):
                sess.run(a)
            return (time.perf_counter() - t) / n * 1e6


def _sender(edge: str) -> ir.GraphDef:
    attrs = {"tensor_name": edge, "send_device": DEV, "send_device_incarnation": 1,
             "recv_device": PEER, "client_terminated": False, "T": dtypes.float32}
    return ir.GraphDef(nodes=[
        ir.NodeDef("x", "_Arg", [], DEV, {"T": dtypes.float32, "index": 0}),
        ir.NodeDef("x/_send", "_Send", ["x"], DEV, attrs),
    ])


def transfer_ms(server: Server, mb: int, k: int) -> float:
    """Mean time of one RecvTensor of an `mb` MB float32 tensor (the send is local)."""
    worker = GrpcWorker(server.target)
    handle = worker.register_graph(_sender(f"edge_{mb}"), DEV)
    x = np.ones(mb * 1024 * 1024 // 4, np.float32)
    key = make_key(DEV, 1, PEER, f"edge_{mb}")
    total = 0.0
    for step in range(k + 2):
        worker.run_graph(handle, step + 1, [x], {})
        t = time.perf_counter()
        worker.recv_tensor(step + 1, key, timeout_s=60)
        if step >= 2:
            total += time.perf_counter() - t
        worker.cleanup_graph(step + 1)
    return total / k * 1e3


def main() -> None:
    server = Server.create_local_server()
    try:
        res = {"remote_run_latency_us": remote_latency_us(server.target)}
        for mb, k in ((1, 20), (64, 10)):
            ms = transfer_ms(server, mb, k)
            res[f"transfer_{mb}MB_ms"] = ms
            res[f"transfer_{mb}MB_GBps"] = mb / 1024 / (ms / 1e3)
    finally:
        server.stop()
    print(json.dumps({k: round(v, 3) for k, v in res.items()}, indent=1))


if __name__ == "__main__":
    main()
