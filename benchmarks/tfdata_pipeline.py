"""The TF peer's input pipeline (../shared/peers/tf_input_pipeline.py), line for line with
tensorweave: write N Examples of 784 floats + a label, then TFRecordDataset → map(parse,
num_parallel_calls) → batch(128) → prefetch(2) through a one-shot iterator. Records/s as JSON.
Also: RSS growth over 5 epochs of a shuffled pass (the shuffle buffer must stay bounded)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

import numpy as np
import psutil

import tensorweave as tf


def write(path: str, n: int) -> float:
    rng = np.random.default_rng(0)
    X = rng.random((n, 784), dtype=np.float32)
    Y = rng.integers(0, 10, n)
    t = time.perf_counter()
    with tf.io.TFRecordWriter(path) as w:
        for i in range(n):
            ex = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=X[i])),
                "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[Y[i]]))}))
            w.write(ex.SerializeToString())
    return n / (time.perf_counter() - t)


def parse(s):
    f = tf.io.parse_single_example(s, {"x": tf.io.FixedLenFeature([784], tf.float32),
                                       "y": tf.io.FixedLenFeature([], tf.int64)})
    return f["x"], f["y"]


def read(path: str, par: int) -> float:
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.TFRecordDataset(path).map(parse, num_parallel_calls=par).batch(128) \
            .prefetch(2)
        nxt = tf.data.make_one_shot_iterator(ds).get_next()
        with tf.Session() as s:
            t = time.perf_counter()
            n = 0
            try:
                while True:
                    n += len(s.run(nxt)[1])
            except tf.errors.OutOfRangeError:
                pass
            return n / (time.perf_counter() - t)


def shuffle_rss(path: str, epochs: int = 5) -> float:
    """MB the process grew between the end of epoch 1 and the end of the last epoch."""
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.TFRecordDataset(path).map(parse).shuffle(1000, seed=0).batch(128)
        it = tf.data.make_initializable_iterator(ds)
        nxt = it.get_next()
        proc = psutil.Process()
        rss = []
        with tf.Session() as s:
            for _ in range(epochs):
                s.run(it.initializer)
                try:
                    while True:
                        s.run(nxt)
                except tf.errors.OutOfRangeError:
                    rss.append(proc.memory_info().rss)
        return (rss[-1] - rss[0]) / 2**20


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50000
    d = tempfile.mkdtemp()
    path = os.path.join(d, "train.tfrecord")
    res = {"write_records_per_s": write(path, n), "file_MB": os.path.getsize(path) / 2**20}
    for par in (1, 2):
        res[f"read_parse_batch_par{par}_records_per_s"] = read(path, par)
    res["shuffle_5_epochs_rss_growth_MB"] = shuffle_rss(path)
    print(json.dumps({k: round(v, 1) for k, v in res.items()}, indent=1))


if __name__ == "__main__":
    main()
