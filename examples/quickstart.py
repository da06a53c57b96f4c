"""Quickstart: build a small model graph TF1-style, run it, and see what pruning kept.

Run with `make demo` (or .venv/bin/python examples/quickstart.py).
"""

import numpy as np

import tensorweave as tf
from tensorweave.master.explain import explain


def build():
    """A two-layer classifier plus a side branch (a summary statistic) the fetch doesn't need."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.variable_scope("hidden"):
        w1 = tf.get_variable("w", [4, 8], initializer=tf.random_normal_initializer(seed=1))
        b1 = tf.get_variable("b", [8], initializer=tf.zeros_initializer())
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
    with tf.variable_scope("logits"):
        w2 = tf.get_variable("w", [8, 3], initializer=tf.random_normal_initializer(seed=2))
        logits = tf.matmul(h, w2)
    probs = tf.nn.softmax(logits, name="probs")
    pred = tf.argmax(probs, axis=1, name="pred")
    weight_norm = tf.reduce_sum(tf.square(w1)) + tf.reduce_sum(tf.square(w2))  # not fetched
    return x, probs, pred, weight_norm


def main():
    x, probs, pred, _ = build()
    batch = np.array([[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 0.0, 2.0]], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        p, c = sess.run([probs, pred], {x: batch})
    print("probabilities:\n", np.round(p, 3))
    print("predicted classes:", c)

    # What the master did for this fetch, stage by stage (also: `tensorweave explain`).
    stages = explain([probs, pred], {x: batch})
    print("\nnodes per stage:")
    for name, count in stages.counts().items():
        print(f"   {name:28s} {count:4d}")
    full = {n.name: n.op for n in stages.stages[0].graphs[""].nodes}
    kept = {n.name for n in stages.stages[2].graphs[""].nodes}
    print("pruned away (not needed for the fetches):")
    for name, op in full.items():
        if name not in kept:
            print(f"    {name} ({op}){'  — fed' if name == x.op.name else ''}")


if __name__ == "__main__":
    main()
