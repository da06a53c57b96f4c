"""Writes tests/training/fixtures/partitioned/: a TF1 checkpoint of partitioned variables.

    /root/.cache/tensorweave-tf-peer/bin/python tests/training/make_partitioned_ckpt.py

`emb` (10x3 float32, fixed_size_partitioner(4) → parts of 3,3,2,2 rows), `w` (5x4 float64,
fixed_size_partitioner(2) along axis 1 → 5x2, 5x2) and a plain `b` (3,), saved by
tf.compat.v1.train.Saver with its meta graph; their values go to values.npz (full tensors)
so the test checks what we read. partitions.json: what TF's three partitioners return for
PARTITIONER_CASES (and the part shapes get_variable makes). Used by test_partitioned.py.
"""

import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "partitioned")


# (partitioner, kwargs, shape, dtype)
PARTITIONER_CASES = [
    ("fixed_size_partitioner", {"num_shards": 4}, [10, 3], "float32"),
    ("fixed_size_partitioner", {"num_shards": 8}, [5, 2], "float32"),
    ("fixed_size_partitioner", {"num_shards": 3, "axis": 1}, [4, 7], "float64"),
    ("variable_axis_size_partitioner", {"max_shard_bytes": 100}, [30, 4], "float32"),
    ("variable_axis_size_partitioner", {"max_shard_bytes": 1}, [9, 2], "float32"),
    ("variable_axis_size_partitioner", {"max_shard_bytes": 64, "max_shards": 3}, [40, 2],
     "float64"),
    ("variable_axis_size_partitioner", {"max_shard_bytes": 50, "axis": 1}, [3, 20], "string"),
    ("min_max_variable_partitioner", {"max_partitions": 4, "min_slice_size": 64}, [20, 3],
     "float32"),
    ("min_max_variable_partitioner", {"max_partitions": 100, "min_slice_size": 16}, [6, 5],
     "float32"),
    ("min_max_variable_partitioner", {"max_partitions": 3}, [1000, 100], "float32"),
    ("min_max_variable_partitioner", {"max_partitions": 2, "axis": 1, "min_slice_size": 8},
     [2, 9], "int32"),
]


def partition_expectations() -> list[dict]:
    out = []
    for fn, kwargs, shape, dtype in PARTITIONER_CASES:
        partitions = getattr(tf, fn)(**kwargs)(shape=tf.TensorShape(shape),
                                              dtype=tf.as_dtype(dtype))
        with tf.Graph().as_default():
            v = tf.get_variable("v", shape, tf.as_dtype(dtype),
                                partitioner=getattr(tf, fn)(**kwargs))
            parts = [p.shape.as_list() for p in v]  # a PartitionedVariable's parts
        out.append({"fn": fn, "kwargs": kwargs, "shape": shape, "dtype": dtype,
                    "partitions": [int(p) for p in partitions], "parts": parts})
    return out


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
        tf.train.Saver().save(sess, os.path.join(OUT, "model.ckpt"), write_state=False)
        full = sess.run({"emb": emb.as_tensor(), "layer/w": w.as_tensor(), "b": b})
    np.savez(os.path.join(OUT, "values.npz"), **{k.replace("/", "__"): v
                                                 for k, v in full.items()})
    with open(os.path.join(OUT, "partitions.json"), "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(c) for c in partition_expectations()) + "\n]\n")
    print(sorted(tf.train.list_variables(os.path.join(OUT, "model.ckpt"))))


if __name__ == "__main__":
    main()
