"""The XLA device against CPU on an MLP training step: first-step time (XLA compiles then)
and steady step time. Run: `.venv/bin/python -m benchmarks.xla_device` (needs jax)."""

from __future__ import annotations

import time

import numpy as np

import tensorweave as tf


def mlp_step_times(device: str, batch: int = 256, width: int = 512, steps: int = 30):
    """(first step s, median steady step s) of a 3-layer MLP's SGD step on `device`."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((batch, 784)).astype(np.float32)
    ys = rng.integers(0, 10, batch).astype(np.int64)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 784])
        y = tf.placeholder(tf.int64, [None])
        shapes = [(784, width), (width, width), (width, 10)]
        ws = [tf.Variable(rng.standard_normal(s).astype(np.float32) * 0.05) for s in shapes]
        bs = [tf.Variable(np.zeros(s[1], np.float32)) for s in shapes]
        with tf.device(device):
            h = x
            for k, (w, b) in enumerate(zip(ws, bs)):
                h = tf.nn.bias_add(tf.matmul(h, w), b)
                h = tf.nn.relu(h) if k < 2 else h
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=y, logits=h))
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            sess.run(tf.global_variables_initializer())
            t0 = time.perf_counter()
            sess.run([loss, train], {x: xs, y: ys})
            first = time.perf_counter() - t0
            times = []
            for _ in range(steps):
                t0 = time.perf_counter()
                sess.run([loss, train], {x: xs, y: ys})
                times.append(time.perf_counter() - t0)
    return first, float(np.median(times))


def main() -> None:
    for device in ("/cpu:0", "/device:XLA_CPU:0"):
        first, steady = mlp_step_times(device)
        print(f"{device:20s} first step {first * 1e3:8.1f} ms   steady step {steady * 1e3:7.2f} ms")


if __name__ == "__main__":
    main()
