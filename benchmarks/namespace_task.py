"""One side of benchmarks/namespace_hosts.py, the same code under tensorweave and under the
TensorFlow peer (`--framework tf` imports tensorflow.compat.v1):

    python namespace_task.py server --framework F --cluster JSON --job J --task I
    python namespace_task.py client --framework F --cluster JSON [--only mlp,sharded]

`server` serves the task, printing `ready`, until killed. `client` (on worker 0's host) prints
one JSON object: `transfer_{1,64}MB_ms` (mean step of reduce_sum on worker 0 of a variable on
the ps: every step pulls it ps -> worker across the hosts' network) and `_GBps`, and
`mlp_ps2w_step_ms`, the mean step of an MLP 64-256-256-10 (batch 128, SGD) whose variables
live on the ps and whose batch is split in two towers, one per worker (in-graph replication),
and `sharded_embedding_step_ms`, one worker's step of the word2vec-style model of
benchmarks/sharded_embedding.py (a 1,000,000 x 64 embedding and NCE tables, each in 2 parts on
the 2 ps tasks; batch 128, 64 sampled classes, sparse SGD applied on the ps), with
`sharded_embedding_bytes_per_step`, what crossed the network in a traced step (RecvTensor
records of its step stats, read by tensorweave/monitoring/transfers.py for both frameworks).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.graphs import framework, transfer_ms  # noqa: E402
from benchmarks.sharded_embedding import Word2Vec  # noqa: E402


def mlp_step_ms(tf, target: str, k: int) -> float:
    rng = np.random.RandomState(0)
    x_np = rng.rand(128, 64).astype(np.float32)
    y_np = rng.randint(0, 10, 128).astype(np.int64)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [128, 64])
        y = tf.placeholder(tf.int64, [128])
        with tf.device("/job:ps/task:0"):
            shapes = [(64, 256), (256,), (256, 256), (256,), (256, 10), (10,)]
            params = [tf.Variable(tf.random_normal(s, stddev=0.05), name=f"p{i}")
                      for i, s in enumerate(shapes)]
        grads = []
        for i, (xs, ys) in enumerate(zip(tf.split(x, 2), tf.split(y, 2))):
            with tf.device(f"/job:worker/task:{i}"):
                h = xs
                for j in range(0, 4, 2):
                    h = tf.nn.relu(tf.matmul(h, params[j]) + params[j + 1])
                logits = tf.matmul(h, params[4]) + params[5]
                loss = tf.reduce_mean(
                    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ys, logits=logits))
                grads.append(tf.gradients(loss, params))
        with tf.device("/job:worker/task:0"):
            averaged = [(g0 + g1) / 2.0 for g0, g1 in zip(*grads)]
        step = tf.train.GradientDescentOptimizer(0.1).apply_gradients(zip(averaged, params))
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            feed = {x: x_np, y: y_np}
            for _ in range(5):
                sess.run(step, feed)
            t = time.perf_counter()
            for _ in range(k):
                sess.run(step, feed)
            return (time.perf_counter() - t) / k * 1e3


def _transfers_module():
    """monitoring/transfers.py loaded alone (it needs only `re`), so the TF peer can use it
    without importing tensorweave."""
    path = ROOT / "src" / "tensorweave" / "monitoring" / "transfers.py"
    spec = importlib.util.spec_from_file_location("tw_transfers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def sharded_embedding(tf, target: str, cluster: dict, k: int) -> tuple[float, int]:
    """(mean step ms, bytes that crossed the network in one traced step)."""
    rng = np.random.RandomState(0)
    g = tf.Graph()
    with g.as_default():
        model = Word2Vec(tf, cluster, 0, 1_000_000)
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(5):
                sess.run(model.train_op, model.feed(128, rng))
            feeds = [model.feed(128, rng) for _ in range(k)]
            t = time.perf_counter()
            for feed in feeds:
                sess.run(model.train_op, feed)
            ms = (time.perf_counter() - t) / k * 1e3
            md = tf.RunMetadata()
            sess.run(model.train_op, model.feed(128, rng), run_metadata=md,
                     options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
    return ms, sum(_transfers_module().network_bytes(md).values())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["server", "client"])
    p.add_argument("--framework", choices=["tensorweave", "tf"], default="tensorweave")
    p.add_argument("--cluster", required=True)
    p.add_argument("--job")
    p.add_argument("--task", type=int, default=0)
    p.add_argument("--only", default="transfer,mlp,sharded",
                   help="the client's figures, comma-separated: transfer, mlp, sharded")
    p.add_argument("--steps", type=int, default=50, help="timed steps of mlp and sharded")
    args = p.parse_args(argv)
    tf = framework(args.framework == "tf")
    spec = json.loads(args.cluster)
    if args.mode == "server":
        server = tf.train.Server(tf.train.ClusterSpec(spec), job_name=args.job,
                                 task_index=args.task)
        print("ready", flush=True)
        server.join()
        return 0
    target = f"grpc://{spec['worker'][0]}"
    res = {}
    only = set(args.only.split(","))
    for mb, k in ((1, 20), (64, 5)) if "transfer" in only else ():
        ms = transfer_ms(tf, target, mb, k)
        res[f"transfer_{mb}MB_ms"] = round(ms, 3)
        res[f"transfer_{mb}MB_GBps"] = round(mb / 1024 / (ms / 1e3), 3)
    if "mlp" in only:
        res["mlp_ps2w_step_ms"] = round(mlp_step_ms(tf, target, args.steps), 3)
    if "sharded" in only and len(spec.get("ps", [])) > 1:
        ms, sent = sharded_embedding(tf, target, spec, args.steps)
        res["sharded_embedding_step_ms"] = round(ms, 3)
        res["sharded_embedding_bytes_per_step"] = sent
    print(json.dumps(res), flush=True)
    sys.stdout.flush()
    os._exit(0)  # NOTE: TF's servers keep threads that never end


if __name__ == "__main__":
    sys.exit(main())
