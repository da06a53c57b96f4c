"""tensorweave on the input workload of ../shared/peers/tf_input_pipeline.py (records/s).

Writes N tf.train.Example records (784 float32 + an int64 label) to a TFRecord file with the
same user code as the TF peer, then reads them back with our streaming reader and parses
batches of 128 serialized records with the ParseExampleV2 kernel called directly (the
tf.data version of this pipeline comes with tf.data). Also reported, for comparison: the read
alone, the same batches parsed through `Session.run` (a fed placeholder), and a parse that
goes through protobuf objects (upb) instead of our wire decoder.

Usage: python benchmarks/input_pipeline.py [N]   (prints one JSON object)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

import numpy as np

import tensorweave as tf
import tensorweave.runtime.kernels.cpu.parsing  # noqa: F401  (until kernels.cpu imports it)
from tensorweave.formats import example as ex
from tensorweave.formats.tfrecord import RecordReader, TFRecordWriter, iter_records
from tensorweave.ops import parsing_ops
from tensorweave.ops.registry import OPS
from tensorweave.runtime.kernels.registry import KernelNode, lookup_kernel

BATCH = 128
FEATURES = {"x": ex.FixedLenFeature([784], tf.float32), "y": ex.FixedLenFeature([], tf.int64)}


def _write(path: str, n: int, features) -> float:
    """Writes n Examples of `features(x_i, y_i)` (a feature dict). Returns records/s."""
    rng = np.random.default_rng(0)
    x = rng.random((n, 784), dtype=np.float32)
    y = rng.integers(0, 10, n)
    t = time.perf_counter()
    with TFRecordWriter(path) as w:
        for i in range(n):
            e = ex.Example(features=ex.Features(feature=features(x[i], y[i])))
            w.write(e.SerializeToString())
    return n / (time.perf_counter() - t)


def write(path: str, n: int) -> float:
    """The TF peer's loop, with our classes. Returns records/s."""
    return _write(path, n, lambda x, y: {"x": ex.Feature(float_list=ex.FloatList(value=x)),
                                         "y": ex.Feature(int64_list=ex.Int64List(value=[y]))})


def write_feature_of(path: str, n: int) -> float:
    """As `write`, building features with our `feature_of` helper (lists, not numpy scalars,
    go into the protos: the idiomatic fast path)."""
    return _write(path, n, lambda x, y: {"x": ex.feature_of(x), "y": ex.feature_of(y)})


def write_framing(path: str, records: list) -> float:
    """Framing + CRC + file I/O alone, on already serialized records."""
    t = time.perf_counter()
    with TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    return len(records) / (time.perf_counter() - t)


def kernel_parser():
    """The ParseExampleV2 kernel for FEATURES, called without a session."""
    keys = sorted(FEATURES)
    dts = [FEATURES[k].dtype for k in keys]
    shapes = [tf.TensorShape(FEATURES[k].shape) for k in keys]
    attrs = {"Tdense": dts, "num_sparse": 0, "sparse_types": [], "ragged_value_types": [],
             "ragged_split_types": [], "dense_shapes": shapes}
    node = KernelNode("parse", "ParseExampleV2", attrs, [], dts, op_def=OPS.get("ParseExampleV2"))
    run = lookup_kernel("ParseExampleV2").factory(node)
    empty = np.zeros(0, object)
    dense_keys = np.array([k.encode() for k in keys], object)
    defaults = [np.zeros(0, d.np_dtype) for d in dts]
    return lambda batch: run(batch, empty, empty, dense_keys, empty, *defaults)


def _batches(path: str):
    with RecordReader(path) as reader:
        while True:
            records = reader.read_many(BATCH)
            if not records:
                return
            yield _as_array(records)


def _as_array(items: list) -> np.ndarray:
    out = np.empty(len(items), object)
    out[:] = items
    return out


def read_parse(path: str, parse) -> float:
    t = time.perf_counter()
    n = 0
    for batch in _batches(path):
        x, y = parse(batch)
        n += len(y)
    return n / (time.perf_counter() - t)


def read_only(path: str) -> float:
    t = time.perf_counter()
    n = sum(1 for _ in iter_records(path))
    return n / (time.perf_counter() - t)


def session_parser():
    g = tf.Graph()
    with g.as_default():
        s = tf.placeholder(tf.string, [None])
        f = parsing_ops.parse_example(s, FEATURES)
        sess = tf.Session(graph=g)
        fetch = [f["x"], f["y"]]
    return lambda batch: sess.run(fetch, {s: batch})


def upb_parse(batch):
    """The protobuf-object way: Example.FromString per record, then numpy per feature."""
    x = np.empty((len(batch), 784), np.float32)
    y = np.empty(len(batch), np.int64)
    for i, r in enumerate(batch.tolist()):
        feats = ex.Example.FromString(r).features.feature
        x[i] = np.asarray(feats["x"].float_list.value, np.float32)
        y[i] = feats["y"].int64_list.value[0]
    return x, y


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50000
    d = tempfile.mkdtemp()
    path = os.path.join(d, "train.tfrecord")
    res = {"write_records_per_s": write(path, n), "file_MB": os.path.getsize(path) / 2**20}
    records = [r.data for r in iter_records(path)]
    res["write_framing_records_per_s"] = write_framing(os.path.join(d, "copy.tfrecord"),
                                                       records)
    del records
    os.remove(os.path.join(d, "copy.tfrecord"))
    res["write_feature_of_records_per_s"] = write_feature_of(os.path.join(d, "f.tfrecord"), n)
    os.remove(os.path.join(d, "f.tfrecord"))
    res["read_only_records_per_s"] = read_only(path)
    res["read_parse_batch_kernel_records_per_s"] = read_parse(path, kernel_parser())
    res["read_parse_batch_session_records_per_s"] = read_parse(path, session_parser())
    res["read_parse_batch_upb_records_per_s"] = read_parse(path, upb_parse)
    os.remove(path)
    os.rmdir(d)
    print(json.dumps({k: round(v, 1) for k, v in res.items()}, indent=1))


if __name__ == "__main__":
    main()
