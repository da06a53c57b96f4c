"""Writes tests/data/parse_example_graph.pb: a GraphDef built by real TensorFlow with
`tf.io.parse_example` (ParseExampleV2 with a default, a VarLenFeature) and
`tf.io.parse_single_example`. Run once with the TensorFlow peer Python:
  /root/.cache/tensorweave-tf-peer/bin/python tests/dataio/make_tf_graph.py
Feeds: s:0 (vector of serialized digits Examples), s1:0 (one). Fetches: x:0, y:0, idv:0, x1:0.
"""

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow.compat.v1 as tf  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "data" / "parse_example_graph.pb"


def main() -> None:
    tf.disable_v2_behavior()
    s = tf.placeholder(tf.string, [None], name="s")
    f = tf.io.parse_example(s, {
        "x": tf.io.FixedLenFeature([64], tf.float32),
        "y": tf.io.FixedLenFeature([1], tf.int64, default_value=[3]),
        "id": tf.io.VarLenFeature(tf.string)})
    tf.identity(f["x"], name="x")
    tf.identity(f["y"], name="y")
    tf.identity(f["id"].values, name="idv")
    s1 = tf.placeholder(tf.string, [], name="s1")
    f1 = tf.io.parse_single_example(s1, {"x": tf.io.FixedLenFeature([64], tf.float32)})
    tf.identity(f1["x"], name="x1")
    OUT.write_bytes(tf.get_default_graph().as_graph_def().SerializeToString())


if __name__ == "__main__":
    main()
