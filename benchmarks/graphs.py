"""The graphs and the timing several benchmark scripts share, defined once.

Every builder takes the framework's `tf` module (tensorweave, or TensorFlow's tf.compat.v1
under the peer Python: `framework()`), so a script that runs under both builds identical graphs
either way. The builders add ops to the default graph; the caller owns graphs, seeds and
sessions. The MLP and the CNN are ../shared/peers/tf_graph_mode.py's.

- `mlp(tf, batch, hidden)`: 64-hidden-hidden-10 with ReLU on the digits, Adam 1e-3;
- `cnn(tf, batch)`: conv 3x3 32 + max-pool, conv 3x3 64 + max-pool, dense 128, dense 10
  (`cnn_logits`), Adam 1e-3, on random 28x28x1 images;
- `lstm_ptb(tf)`: the PTB-small LSTM language model (2 x 200, 20 steps, batch 20, vocabulary
  10k, full softmax, gradients clipped at 5, SGD 1.0);
- `transfer_ms(tf, target, mb, k)`: the mean step of reduce_sum on worker 0 of an `mb` MB
  float32 variable on ps 0 (every step pulls it across);
- `mean_s(fn, n, warm)`: the mean seconds of `fn()` over `n` calls after `warm` calls;
  `train_step_s(tf, build, steps, warm)` that of the train op of a builder's step.
"""

from __future__ import annotations

import os
import time
from typing import Any, NamedTuple

import numpy as np


def framework(tensorflow: bool) -> Any:
    """TensorFlow's tf.compat.v1 (quiet, graph mode, legacy Keras) or tensorweave."""
    if tensorflow:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        import tensorflow.compat.v1 as tf

        tf.disable_v2_behavior()
        return tf
    import tensorweave

    return tensorweave


class Step(NamedTuple):
    """A training step: its loss, its train op and the feed that drives it."""

    loss: Any
    train: Any
    feed: dict


def mean_s(fn, n: int, warm: int = 20) -> float:
    for _ in range(warm):
        fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def train_step_s(tf, build, steps: int, warm: int, config=None) -> float:
    """The mean seconds of `build(tf)`'s train op in a fresh graph seeded 0, after `warm`."""
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        step = build(tf)
        with tf.Session(config=config) as s:
            s.run(tf.global_variables_initializer())
            return mean_s(lambda: s.run(step.train, step.feed), steps, warm)


def digits(batch: int) -> tuple[np.ndarray, np.ndarray]:
    """`batch` examples of scikit-learn's 8x8 digits (cycled), scaled to [0, 1]."""
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    idx = np.arange(batch) % len(x)
    return (x[idx] / 16.0).astype(np.float32), y[idx].astype(np.int64)


def _adam_step(tf, loss, feed: dict) -> Step:
    return Step(loss, tf.train.AdamOptimizer(1e-3).minimize(loss), feed)


def _xent(tf, labels, logits):
    return tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def mlp(tf, batch: int, hidden: int) -> Step:
    xs, ys = digits(batch)
    x = tf.placeholder(tf.float32, [None, 64])
    y = tf.placeholder(tf.int64, [None])
    h = tf.layers.dense(x, hidden, tf.nn.relu)
    h = tf.layers.dense(h, hidden, tf.nn.relu)
    logits = tf.layers.dense(h, 10)
    return _adam_step(tf, _xent(tf, y, logits), {x: xs, y: ys})


def cnn_logits(tf, x):
    h = tf.layers.conv2d(x, 32, 3, activation=tf.nn.relu, padding="same")
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(h, 64, 3, activation=tf.nn.relu, padding="same")
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.dense(tf.layers.flatten(h), 128, tf.nn.relu)
    return tf.layers.dense(h, 10)


def cnn(tf, batch: int = 64) -> Step:
    x = tf.placeholder(tf.float32, [None, 28, 28, 1])
    y = tf.placeholder(tf.int64, [None])
    rng = np.random.default_rng(0)
    feed = {x: rng.random((batch, 28, 28, 1), dtype=np.float32), y: rng.integers(0, 10, batch)}
    return _adam_step(tf, _xent(tf, y, cnn_logits(tf, x)), feed)


def lstm_ptb(tf) -> Step:
    vocab, hidden, steps, batch = 10000, 200, 20, 20
    inputs = tf.placeholder(tf.int32, [batch, steps])
    targets = tf.placeholder(tf.int32, [batch, steps])
    with tf.variable_scope("model", initializer=tf.random_uniform_initializer(-0.1, 0.1)):
        embedding = tf.get_variable("embedding", [vocab, hidden])
        emb = tf.nn.embedding_lookup(embedding, inputs)
        cell = tf.nn.rnn_cell.MultiRNNCell(
            [tf.nn.rnn_cell.BasicLSTMCell(hidden, forget_bias=0.0) for _ in range(2)])
        state = cell.zero_state(batch, tf.float32)
        outputs, _ = tf.nn.dynamic_rnn(cell, emb, initial_state=state)
        w = tf.get_variable("softmax_w", [hidden, vocab])
        b = tf.get_variable("softmax_b", [vocab])
        logits = tf.matmul(tf.reshape(outputs, [-1, hidden]), w) + b
        loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.reshape(targets, [-1]), logits=logits)) / batch
    params = tf.trainable_variables()
    grads, _ = tf.clip_by_global_norm(tf.gradients(loss, params), 5.0)
    train = tf.train.GradientDescentOptimizer(1.0).apply_gradients(zip(grads, params))
    rng = np.random.default_rng(0)
    return Step(loss, train, {inputs: rng.integers(0, vocab, (batch, steps)),
                              targets: rng.integers(0, vocab, (batch, steps))})


def transfer_ms(tf, target: str, mb: int, k: int) -> float:
    n = mb * 1024 * 1024 // 4
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(tf.ones([n]), name=f"v{mb}")
        with tf.device("/job:worker/task:0"):
            s = tf.reduce_sum(v)
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            return mean_s(lambda: sess.run(s), k, warm=3) * 1e3


__all__ = ["Step", "cnn", "cnn_logits", "digits", "framework", "lstm_ptb", "mean_s", "mlp",
           "train_step_s", "transfer_ms"]
