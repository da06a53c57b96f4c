"""Peak memory (max RSS, MB) of a process that trains the CNN of ../shared/peers/tf_graph_mode.py
for 20 steps. The same file runs under tensorweave and, with `--tensorflow` and the peer Python,
under TensorFlow's tf.compat.v1, so both numbers come from identical code. Prints JSON."""

import json
import os
import resource
import sys

import numpy as np

if "--tensorflow" in sys.argv:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
else:
    import tensorweave as tf


def main() -> None:
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 28, 28, 1])
    y = tf.placeholder(tf.int64, [None])
    h = tf.layers.conv2d(x, 32, 3, activation=tf.nn.relu, padding="same")
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(h, 64, 3, activation=tf.nn.relu, padding="same")
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.flatten(h)
    h = tf.layers.dense(h, 128, tf.nn.relu)
    logits = tf.layers.dense(h, 10)
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        rng = np.random.default_rng(0)
        fd = {x: rng.random((64, 28, 28, 1), dtype=np.float32), y: rng.integers(0, 10, 64)}
        for _ in range(20):
            s.run(train, fd)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"cnn_train_peak_rss_MB": round(peak, 1),
                      "after_imports_rss_MB": round(base, 1)}))


if __name__ == "__main__":
    main()
