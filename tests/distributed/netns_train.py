"""A TF1 training script for the namespace-host tests: an MLP on the digits, checkpointed, with a
retry loop that resumes from the latest checkpoint after a failed step.

    python netns_train.py --logdir DIR [--cluster JSON] [--steps N] [--retries R]

With --cluster (1 ps, 2 workers), the variables live on the ps (replica_device_setter) and each
batch is split in two towers, one per worker, whose gradients are averaged (in-graph
replication): every step moves the variables ps -> worker and the gradients back. The client's
session is on worker 0. Without --cluster it is the same model and the same steps in one process
(the two halves' averaged gradient is the whole batch's), so both reach the same accuracy.

Prints, flushed: `saved step S`, `error <Class> after X s: <message>` for a failed step (then
it opens a new session, restores the latest checkpoint and goes on, up to --retries times),
`resumed from step S`, and at the end `accuracy A steps S`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from sklearn.datasets import load_digits

import tensorweave as tf

BATCH = 64
SAVE_EVERY = 25


def data():
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    return x[:1400], y[:1400], x[1400:], y[1400:]


def tower_loss(x, y):
    w1 = tf.get_variable("w1", [64, 32], initializer=tf.glorot_uniform_initializer(seed=1))
    b1 = tf.get_variable("b1", [32], initializer=tf.zeros_initializer())
    w2 = tf.get_variable("w2", [32, 10], initializer=tf.glorot_uniform_initializer(seed=2))
    b2 = tf.get_variable("b2", [10], initializer=tf.zeros_initializer())
    logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    return loss, logits


def build(cluster: dict | None):
    x = tf.placeholder(tf.float32, [None, 64], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    opt = tf.train.GradientDescentOptimizer(0.5)
    if cluster is None:
        global_step = tf.train.get_or_create_global_step()
        with tf.variable_scope("model"):
            loss, logits = tower_loss(x, y)
        train = opt.minimize(loss, global_step=global_step)
    else:
        with tf.device("/job:ps/task:0"):
            global_step = tf.train.get_or_create_global_step()
        xs, ys = tf.split(x, 2), tf.split(y, 2)
        grads, logits = [], None
        for i in range(2):
            setter = tf.train.replica_device_setter(cluster=cluster,
                                                    worker_device=f"/job:worker/task:{i}")
            with tf.device(setter), tf.variable_scope("model", reuse=tf.AUTO_REUSE):
                loss_i, logits_i = tower_loss(xs[i], ys[i])
                grads.append(opt.compute_gradients(loss_i))
                if i == 0:
                    loss, logits = loss_i, tower_loss(x, y)[1]
        averaged = [(tf.add_n([g[k][0] for g in grads]) / 2.0, grads[0][k][1])
                    for k in range(len(grads[0]))]
        with tf.device("/job:worker/task:0"):
            train = opt.apply_gradients(averaged, global_step=global_step)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    return x, y, global_step, train, accuracy


def run(args) -> float:
    cluster = json.loads(args.cluster) if args.cluster else None
    target = f"grpc://{cluster['worker'][0]}" if cluster else ""
    x_train, y_train, x_test, y_test = data()
    x, y, global_step, train, accuracy = build(cluster)
    saver = tf.train.Saver(max_to_keep=100)
    prefix = os.path.join(args.logdir, "model")
    tries = 0
    while True:
        started = None
        try:
            with tf.Session(target) as sess:
                latest = tf.train.latest_checkpoint(args.logdir)
                if latest:
                    saver.restore(sess, latest)
                    print(f"resumed from step {sess.run(global_step)}", flush=True)
                else:
                    sess.run(tf.global_variables_initializer())
                step = int(sess.run(global_step))
                while step < args.steps:
                    lo = (step * BATCH) % (len(x_train) - BATCH)
                    started = time.monotonic()
                    sess.run(train,
                                       {x: x_train[lo:lo + BATCH], y: y_train[lo:lo + BATCH]})
                    started = None
                    step += 1  # NOTE: one client, synchronous steps: the step it made
                    if step % SAVE_EVERY == 0:
                        saver.save(sess, prefix, global_step=step)
                        print(f"saved step {step}", flush=True)
                    if args.step_pause:
                        time.sleep(args.step_pause)
                acc = float(sess.run(accuracy, {x: x_test, y: y_test}))
                print(f"accuracy {acc:.4f} steps {step}", flush=True)
                return acc
        except (tf.errors.UnavailableError, tf.errors.DeadlineExceededError,
                tf.errors.AbortedError) as e:
            waited = time.monotonic() - started if started is not None else 0.0
            first = str(e.message).splitlines()[0]
            print(f"error {type(e).__name__} after {waited:.1f} s: {first}"
                  f"{' (task ' + e.task + ')' if e.task and e.task not in first else ''}",
                  flush=True)
            tries += 1
            if tries > args.retries:
                raise
            time.sleep(0.5)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--logdir", required=True)
    p.add_argument("--cluster")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--retries", type=int, default=0)
    p.add_argument("--step-pause", type=float, default=0.0)
    args = p.parse_args(argv)
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
