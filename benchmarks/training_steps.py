"""The main table's three training steps as TF1 code that runs unchanged under tensorweave and,
with `--tensorflow` and the peer Python, under TensorFlow's tf.compat.v1, for the benchmark's
rounds under load (`run.py`: one busy neighbour, a 1-CPU quota), where both columns must come
from identical graphs timed the same way. The graphs and the timing (mean of N steps after
warm-up) are graph_mode.py's. Prints one JSON object of milliseconds:
mlp_b128_h256_step_ms, mlp_b1024_h1024_step_ms, cnn_b64_28x28_step_ms.
"""

import json
import os
import sys
import time

import numpy as np

if "--tensorflow" in sys.argv:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
else:
    import tensorweave as tf


def _mean_ms(fn, steps: int, warm: int) -> float:
    for _ in range(warm):
        fn()
    t = time.perf_counter()
    for _ in range(steps):
        fn()
    return round((time.perf_counter() - t) / steps * 1e3, 3)


def _digits():
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    return (x / 16.0).astype(np.float32), y.astype(np.int64)


def mlp(batch: int, hidden: int, steps: int, warm: int = 20) -> float:
    data, labels = _digits()
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, 64])
        y = tf.placeholder(tf.int64, [None])
        h = tf.layers.dense(x, hidden, tf.nn.relu)
        h = tf.layers.dense(h, hidden, tf.nn.relu)
        logits = tf.layers.dense(h, 10)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = tf.train.AdamOptimizer(1e-3).minimize(loss)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            idx = np.arange(batch) % len(data)
            feed = {x: data[idx], y: labels[idx]}
            return _mean_ms(lambda: s.run(train, feed), steps, warm)


def cnn(steps: int = 20) -> float:
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, 28, 28, 1])
        y = tf.placeholder(tf.int64, [None])
        h = tf.layers.conv2d(x, 32, 3, activation=tf.nn.relu, padding="same")
        h = tf.layers.max_pooling2d(h, 2, 2)
        h = tf.layers.conv2d(h, 64, 3, activation=tf.nn.relu, padding="same")
        h = tf.layers.max_pooling2d(h, 2, 2)
        h = tf.layers.dense(tf.layers.flatten(h), 128, tf.nn.relu)
        logits = tf.layers.dense(h, 10)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = tf.train.AdamOptimizer(1e-3).minimize(loss)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            rng = np.random.default_rng(0)
            feed = {x: rng.random((64, 28, 28, 1), dtype=np.float32),
                    y: rng.integers(0, 10, 64)}
            return _mean_ms(lambda: s.run(train, feed), steps, warm=3)


STEPS = {
    "mlp_b128_h256_step_ms": lambda: mlp(128, 256, 200),
    "mlp_b1024_h1024_step_ms": lambda: mlp(1024, 1024, 20, warm=5),
    "cnn_b64_28x28_step_ms": cnn,
}


def main() -> None:
    print(json.dumps({key: fn() for key, fn in STEPS.items()}))


if __name__ == "__main__":
    main()
