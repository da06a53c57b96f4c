"""Per-iteration cost of a tf.while_loop split over two CPU devices vs the same loop on one.

    python benchmarks/split_loop.py            # tensorweave
    PEER_PYTHON benchmarks/split_loop.py --tf  # TensorFlow 2.21 (tf.compat.v1, v1 loops)

The loop runs N iterations of `x = x * 0.999 + 1.0`; in the split run that body sits on
/cpu:1 while the loop's skeleton (Merge, Switch, LoopCond) stays on /cpu:0, so every iteration
sends the loop variable and the predicate across and the result back. The cluster run puts
the skeleton on a worker task and the body on a ps task of an in-process cluster
(two `tf.train.Server`s in this process: gRPC over loopback). Prints one JSON object: µs per
iteration, best of ROUNDS runs, for each placement.
"""

from __future__ import annotations

import json
import socket
import sys
import time

N, ROUNDS = 1000, 7


def _tf():
    if "--tf" in sys.argv:
        import tensorflow.compat.v1 as tf

        tf.disable_v2_behavior()   # NOTE: v1 control flow (Enter/Merge/...), as ours
        return tf
    import tensorweave as tf

    return tf


def _loop(tf, body_device: str, home: str = "/cpu:0"):
    g = tf.Graph()
    with g.as_default(), tf.device(home):
        def body(i, x):
            with tf.device(body_device):
                y = x * 0.999 + 1.0
            return i + 1, y
        out = tf.while_loop(lambda i, x: i < N, body, [tf.constant(0), tf.constant(0.0)])[1]
    return g, out


def per_iteration_us(tf, body_device: str, target: str = "", home: str = "/cpu:0") -> float:
    g, out = _loop(tf, body_device, home)
    config = None if target else tf.ConfigProto(device_count={"CPU": 2})
    with tf.Session(target, graph=g, config=config) as s:
        s.run(out)   # build, register, warm
        best = float("inf")
        for _ in range(ROUNDS):
            t = time.perf_counter()
            s.run(out)
            best = min(best, time.perf_counter() - t)
    return best / N * 1e6


def _local_cluster(tf) -> str:
    """A worker and a ps server in this process; returns the worker's target."""
    ports = []
    for _ in range(2):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
    spec = tf.train.ClusterSpec({"worker": [f"127.0.0.1:{ports[0]}"],
                                 "ps": [f"127.0.0.1:{ports[1]}"]})
    worker = tf.train.Server(spec, job_name="worker", task_index=0)
    _SERVERS.extend([worker, tf.train.Server(spec, job_name="ps", task_index=0)])
    return worker.target


_SERVERS: list = []   # NOTE: kept alive until the process exits


def main() -> None:
    tf = _tf()
    res = {"one_device_us_per_iter": per_iteration_us(tf, "/cpu:0"),
           "split_us_per_iter": per_iteration_us(tf, "/cpu:1")}
    res["split_over_one"] = res["split_us_per_iter"] / res["one_device_us_per_iter"]
    target = _local_cluster(tf)
    res["tasks_us_per_iter"] = per_iteration_us(tf, "/job:ps/task:0", target,
                                                "/job:worker/task:0")
    print(json.dumps({k: round(v, 2) for k, v in res.items()}))


if __name__ == "__main__":
    main()
