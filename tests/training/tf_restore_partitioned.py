"""Restores a checkpoint that tensorweave wrote into TensorFlow's own partitioned variables and
prints their full values as JSON.

    /root/.cache/tensorweave-tf-peer/bin/python tests/training/tf_restore_partitioned.py PREFIX

TF builds `emb` (10x3 float32) with fixed_size_partitioner(NUM_PARTS) — another partitioning
than the saver's, so TF must cut its slices out of ours — and `layer/w` (5x4 float64, 2 parts
along axis 1), restores PREFIX with tf.compat.v1.train.Saver and prints
{"emb": [...], "layer/w": [...], "list_variables": [[name, shape], ...]}. Used by
tests/training/test_partitioned.py (slow; skipped without the TF peer).
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow.compat.v1 as tf  # noqa: E402

NUM_PARTS = 3


def main() -> None:
    tf.disable_v2_behavior()
    prefix = sys.argv[1]
    with tf.Graph().as_default(), tf.Session() as sess:
        emb = tf.get_variable("emb", [10, 3], partitioner=tf.fixed_size_partitioner(NUM_PARTS))
        with tf.variable_scope("layer", partitioner=tf.fixed_size_partitioner(2, axis=1)):
            w = tf.get_variable("w", [5, 4], tf.float64)
        tf.train.Saver().restore(sess, prefix)
        values = sess.run({"emb": emb.as_tensor(), "layer/w": w.as_tensor()})
    out = {k: v.tolist() for k, v in values.items()}
    out["list_variables"] = [[n, s] for n, s in tf.train.list_variables(prefix)]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
