"""tensorweave on the graphs of ../shared/peers/tf_graph_mode.py (same graphs, same timing).

Prints one JSON object with the same keys as the TensorFlow peer. A section whose API is not
available yet is left out (and shows as "—" in BENCHMARKS.md).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

import tensorweave as tf
from benchmarks import graphs

timeit = graphs.mean_s


def run_latency(res):
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [])
        b = a + 1.0
        s = tf.Session()
        res["run_latency_add_us"] = timeit(lambda: s.run(b, {a: 1.0}), 2000) * 1e6
        one = np.float32(1.0)
        res["run_latency_add_npfeed_us"] = timeit(lambda: s.run(b, {a: one}), 2000) * 1e6
        c = tf.constant(1.0) + 1.0
        res["run_latency_const_us"] = timeit(lambda: s.run(c), 2000) * 1e6


def chains(res):
    for n in (100, 1000):
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [])
            y = x
            for _ in range(n):
                y = tf.sin(y)
            s = tf.Session()
            t = timeit(lambda s=s, y=y, x=x: s.run(y, {x: 1.0}), 200)
            res[f"chain{n}_run_us"] = t * 1e6
            res[f"chain{n}_per_op_us"] = t * 1e6 / n


def mlp_step(batch, hidden, config=None):
    return graphs.train_step_s(tf, lambda tf: graphs.mlp(tf, batch, hidden), 200, 20,
                               config)


NO_FUSION = {"disabled_passes": ["remapper"]}


def mlps(res):
    res["mlp_b128_h256_step_ms"] = mlp_step(128, 256) * 1e3
    res["mlp_b128_h256_step_nofusion_ms"] = mlp_step(128, 256, NO_FUSION) * 1e3
    res["mlp_b1024_h1024_step_ms"] = mlp_step(1024, 1024) * 1e3


def cnn(res):
    res["cnn_b64_28x28_step_ms"] = cnn_step() * 1e3
    res["cnn_b64_28x28_step_nofusion_ms"] = cnn_step(NO_FUSION) * 1e3


def wide_matmuls(res):
    """16 independent 128×128 matmul+tanh branches: inter-op threads 1 vs 2."""
    for threads, key in ((1, "wide_matmul_1thread_ms"), (2, "wide_matmul_ms")):
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [128, 128])
            rng = np.random.default_rng(0)
            ws = [tf.constant(rng.random((128, 128), dtype=np.float32)) for _ in range(16)]
            out = tf.add_n([tf.tanh(tf.matmul(x, w)) for w in ws])
            s = tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=threads))
            fd = {x: rng.random((128, 128), dtype=np.float32)}
            res[key] = timeit(lambda s=s, out=out, fd=fd: s.run(out, fd), 200, warm=10) * 1e3


def cnn_step(config=None):
    return graphs.train_step_s(tf, graphs.cnn, 20, 3, config)


PASSES = ["constant_folding", "arithmetic", "cse", "dependency", "remapper"]


def _big_graph():
    x = tf.placeholder(tf.float32, [8])
    ys = [x]
    for i in range(10000):
        a = ys[-1]
        b = ys[-2] if len(ys) > 1 else x
        ys.append(tf.sin(a) * 0.5 + tf.cos(b) if i % 3 == 0 else tf.tanh(a + b))
    return x, ys[-1]


def big_graph(res):
    g = tf.Graph()
    with g.as_default():
        x, y = _big_graph()
        t = time.perf_counter()
        s = tf.Session()
        s.run(y, {x: np.ones(8, np.float32)})
        res["big_graph_30k_first_run_s"] = time.perf_counter() - t
        res["big_graph_30k_steady_run_ms"] = timeit(
            lambda: s.run(y, {x: np.ones(8, np.float32)}), 10, warm=2) * 1e3


def big_graph_per_pass(res):
    """The 30k-node graph's steady run with no passes, and with each pass switched off."""
    g = tf.Graph()
    with g.as_default():
        x, y = _big_graph()
        fd = {x: np.ones(8, np.float32)}
        for off, key in [(PASSES, "big_graph_30k_steady_nopasses_ms")] + \
                [([p], f"big_graph_30k_steady_no_{p}_ms") for p in PASSES]:
            s = tf.Session(config={"disabled_passes": off})
            s.run(y, fd)
            res[key] = timeit(lambda s=s: s.run(y, fd), 10, warm=2) * 1e3
            s.close()


SECTIONS = [run_latency, chains, mlps, cnn, wide_matmuls, big_graph, big_graph_per_pass]


def main() -> None:
    res: dict = {}
    skipped = {}
    for section in SECTIONS:
        try:
            section(res)
        except (AttributeError, ImportError, NotImplementedError) as e:
            skipped[section.__name__] = f"{type(e).__name__}: {e}"
    out = {k: round(v, 3) for k, v in res.items()}
    if skipped:
        out["_skipped"] = skipped
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    sys.exit(main())
