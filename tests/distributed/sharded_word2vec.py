"""One worker of the sharded-embedding tests: a word2vec-style model (benchmarks/
sharded_embedding.py) whose tables are split over 2 ps tasks, trained by between-graph
replication (each worker its own client and graph, replica_device_setter over the ps tasks,
MonitoredTrainingSession(is_chief=task == 0)).

    python sharded_word2vec.py --cluster JSON --task I --vocab V --steps N
                               [--compare-vocab V2] [--batch B]

Once its session is ready it prints `ready` and waits for a line on stdin (so the test starts
both workers' training together), trains until the global step reaches N (both workers push
it), then, on the chief, traces
steps (FULL_TRACE) and reads the bytes that crossed the network from their step stats
(tensorweave.monitoring.transfers): at batch B and 2B for the trained model, and at batch B
for a fresh model of vocabulary V2. Prints one JSON line `result {...}`: the mean loss of its
first and last 20 steps, `bytes` {"<vocab>x<batch>": {"src -> dst": bytes}}, the largest single
tensor that crossed, and for each ps partition of a step the op types that ran there.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import tensorweave as tf  # noqa: E402
from benchmarks.sharded_embedding import Word2Vec  # noqa: E402
from tensorweave.monitoring.transfers import network_bytes, network_transfers  # noqa: E402

WAIT_S = 120


def traced(sess, model, batch: int, rng) -> tuple[dict, int, dict]:
    """(bytes per task pair, largest tensor, {ps device: op types}) of one traced step."""
    md = tf.RunMetadata()
    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True,
                         timeout_in_ms=WAIT_S * 1000)
    sess.run(model.train_op, model.feed(batch, rng), options=opts, run_metadata=md)
    pairs = {f"{src} -> {dst}": n for (src, dst), n in network_bytes(md).items()}
    largest = max((t.bytes for t in network_transfers(md)), default=0)
    ops = {}
    for g in md.partition_graphs:
        devices = {n.device for n in g.node}
        if len(devices) == 1 and "/job:ps/" in next(iter(devices)):
            ops[devices.pop()] = sorted({n.op for n in g.node})
    return pairs, largest, ops


def train(args, cluster: dict, rng) -> tuple[list, object]:
    model = Word2Vec(tf, cluster, args.task, args.vocab)
    target = f"grpc://{cluster['worker'][args.task]}"
    hooks = [tf.train.StopAtStepHook(last_step=args.steps)]
    losses = []
    sess = tf.train.MonitoredTrainingSession(master=target, is_chief=args.task == 0,
                                             hooks=hooks, max_wait_secs=WAIT_S,
                                             save_checkpoint_secs=None,
                                             save_summaries_steps=None)
    with sess:
        print("ready", flush=True)
        sys.stdin.readline()
        while not sess.should_stop():
            loss, _ = sess.run([model.loss, model.train_op], model.feed(args.batch, rng))
            losses.append(float(loss))
    return losses, model


def measure(args, cluster: dict, model, rng) -> dict:
    """The chief's traced steps: the trained model at B and 2B, a fresh one of V2 at B."""
    target = f"grpc://{cluster['worker'][args.task]}"
    out: dict = {"bytes": {}, "largest": {}, "ps_ops": {}}

    def record(m, batch, sess):
        sess.run(m.train_op, m.feed(batch, rng))   # the first run registers the step
        key = f"{m.vocab}x{batch}"
        out["bytes"][key], out["largest"][key], out["ps_ops"][key] = traced(sess, m, batch, rng)

    with tf.Session(target) as sess:      # the trained variables live on on the ps tasks
        for batch in (args.batch, 2 * args.batch):
            record(model, batch, sess)
    with tf.Graph().as_default():
        fresh = Word2Vec(tf, cluster, args.task, args.compare_vocab, scope="compare")
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer(),
                     options=tf.RunOptions(timeout_in_ms=WAIT_S * 1000))
            record(fresh, args.batch, sess)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cluster", required=True)
    p.add_argument("--task", type=int, required=True)
    p.add_argument("--vocab", type=int, default=1_000_000)
    p.add_argument("--compare-vocab", type=int, default=100_000)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=128)
    args = p.parse_args(argv)
    cluster = json.loads(args.cluster)
    rng = np.random.RandomState(args.task)
    losses, model = train(args, cluster, rng)
    result: dict = {"steps_run": len(losses), "first_loss": float(np.mean(losses[:20])),
                    "last_loss": float(np.mean(losses[-20:]))}
    if args.task == 0:
        result.update(measure(args, cluster, model, rng))
    print("result " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
