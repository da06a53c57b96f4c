"""Writes tests/training/fixtures/partitioned/: a TF1 checkpoint of partitioned variables.

    /root/.cache/tensorweave-tf-peer/bin/python tests/training/make_partitioned_ckpt.py

`emb` (10x3 float32, fixed_size_partitioner(4) → parts of 3,3,2,2 rows), `w` (5x4 float64,
fixed_size_partitioner(2) along axis 1 → 5x2, 5x2) and a plain `b` (3,), saved by
tf.compat.v1.train.Saver; their values go to values.npz (full tensors) so the test checks
what we read. Used by tests/training/test_partitioned.py.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "partitioned")


def main() -> None:
    tf.disable_v2_behavior()
    os.makedirs(OUT, exist_ok=True)
    emb_value = np.arange(30, dtype=np.float32).reshape(10, 3) / 10
    w_value = np.arange(20, dtype=np.float64).reshape(5, 4) - 7
    with tf.Graph().as_default(), tf.Session() as sess:
        emb = tf.get_variable("emb", initializer=tf.constant(emb_value),
                              partitioner=tf.fixed_size_partitioner(4))
        with tf.variable_scope("layer", partitioner=tf.fixed_size_partitioner(2, axis=1)):
            w = tf.get_variable("w", initializer=tf.constant(w_value))
        b = tf.get_variable("b", initializer=tf.constant([1.5, -2.0, 3.0]))
        sess.run(tf.global_variables_initializer())
        tf.train.Saver().save(sess, os.path.join(OUT, "model.ckpt"), write_meta_graph=False,
                              write_state=False)
        full = sess.run({"emb": emb.as_tensor(), "layer/w": w.as_tensor(), "b": b})
    np.savez(os.path.join(OUT, "values.npz"), **{k.replace("/", "__"): v
                                                 for k, v in full.items()})
    print(sorted(tf.train.list_variables(os.path.join(OUT, "model.ckpt"))))


if __name__ == "__main__":
    main()
