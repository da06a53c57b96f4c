"""Writes tests/data/sum_grad_stitch.pb and .npz with TensorFlow: the gradient of a
reduce_sum over a fed axis of an unknown-shape input, which TF builds with DynamicStitch
(`reduced_shape`), and its value for fixed feeds.

    ~/.cache/tensorweave-tf-peer/bin/python tests/ops/make_stitch_expected.py
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
DATA = Path(__file__).resolve().parents[1] / "data"
X = np.linspace(-2, 3, 24, dtype=np.float32).reshape(2, 3, 4)
AXES = np.array([1, -1], np.int32)


def main() -> None:
    x = tf.placeholder(tf.float32, None, name="x")
    axes = tf.placeholder(tf.int32, None, name="axes")
    y = tf.reduce_mean(tf.reduce_sum(x * x, axis=axes), name="y")
    tf.identity(tf.gradients(y, x)[0], name="g")
    graph = tf.get_default_graph()
    assert "DynamicStitch" in {op.type for op in graph.get_operations()}
    (DATA / "sum_grad_stitch.pb").write_bytes(graph.as_graph_def().SerializeToString())
    with tf.Session() as sess:
        g = sess.run("g:0", {x: X, axes: AXES})
    np.savez_compressed(DATA / "sum_grad_stitch.npz", x=X, axes=AXES, g=g)


if __name__ == "__main__":
    main()
