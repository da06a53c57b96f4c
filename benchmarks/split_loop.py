"""Per-iteration cost of a tf.while_loop split over two CPU devices vs the same loop on one.

    python benchmarks/split_loop.py            # tensorweave
    PEER_PYTHON benchmarks/split_loop.py --tf  # TensorFlow 2.21 (tf.compat.v1, v1 loops)

The loop runs N iterations of `x = x * 0.999 + 1.0`; in the split run that body sits on
/cpu:1 while the loop's skeleton (Merge, Switch, LoopCond) stays on /cpu:0, so every iteration
sends the loop variable and the predicate across and the result back. Prints one JSON object:
µs per iteration, best of ROUNDS runs, for both placements.
"""

from __future__ import annotations

import json
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


def _loop(tf, body_device: str):
    g = tf.Graph()
    with g.as_default(), tf.device("/cpu:0"):
        def body(i, x):
            with tf.device(body_device):
                y = x * 0.999 + 1.0
            return i + 1, y
        out = tf.while_loop(lambda i, x: i < N, body, [tf.constant(0), tf.constant(0.0)])[1]
    return g, out


def per_iteration_us(tf, body_device: str) -> float:
    g, out = _loop(tf, body_device)
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 2})) as s:
        s.run(out)   # build, register, warm
        best = float("inf")
        for _ in range(ROUNDS):
            t = time.perf_counter()
            s.run(out)
            best = min(best, time.perf_counter() - t)
    return best / N * 1e6


def main() -> None:
    tf = _tf()
    res = {"one_device_us_per_iter": per_iteration_us(tf, "/cpu:0"),
           "split_us_per_iter": per_iteration_us(tf, "/cpu:1")}
    res["split_over_one"] = res["split_us_per_iter"] / res["one_device_us_per_iter"]
    print(json.dumps({k: round(v, 2) for k, v in res.items()}))


if __name__ == "__main__":
    main()
