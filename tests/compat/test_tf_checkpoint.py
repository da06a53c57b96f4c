"""Checkpoints interchange with TensorFlow 2.21.

* We restore TF's checkpoint (tests/data/ckpt, copied from ../shared/fixtures/tf/ckpt) into
  variables made from the names and shapes in its index, and get expected_values.npz.
* Re-saving gives the same entries (names, dtypes, shapes, value bytes) and the same files.
* TF reads ours (slow; needs the TF peer Python): tests/training/make_tf_roundtrip.py reads a
  checkpoint we wrote with tf.train.load_checkpoint and, through our .meta, restores it with
  tf.train.import_meta_graph.
"""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.formats.checkpoint.bundle import BundleReader
from tensorweave.training.checkpoint_utils import NewCheckpointReader
from tensorweave.training.saver import Saver

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "ckpt")
FIXTURE = os.path.join(DATA, "model.ckpt-1234")
ROUNDTRIP = os.path.join(HERE, "..", "training", "make_tf_roundtrip.py")


def _variables_from_index(prefix: str) -> list:
    """Variables named and shaped after the checkpoint's own index (no Python model code)."""
    reader = NewCheckpointReader(prefix)
    shapes, dts = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    out = []
    for name in sorted(shapes):
        dt = dts[name]
        zeros = np.full(shapes[name], b"", dtype=object) if dt == tf.string else \
            np.zeros(shapes[name], dt.as_numpy_dtype)
        out.append(tf.Variable(zeros, name=name))
    return out


def _expected() -> dict:
    with np.load(os.path.join(DATA, "expected_values.npz"), allow_pickle=True) as z:
        return {k.replace("__", "/"): z[k] for k in z.files}


def test_manifest_matches_the_index():
    with open(os.path.join(DATA, "MANIFEST.json")) as f:
        manifest = json.load(f)["variables"]
    reader = NewCheckpointReader(FIXTURE)
    assert reader.get_variable_to_shape_map() == {k: v[1] for k, v in manifest.items()}
    dts = {k: d.name for k, d in reader.get_variable_to_dtype_map().items()}
    assert dts == {k: ("string" if v[0] == "object" else v[0]) for k, v in manifest.items()}


def test_restore_tf_checkpoint_then_resave_identically(tmp_path):
    variables = _variables_from_index(FIXTURE)
    saver = Saver()
    expected = _expected()
    with tf.Session() as sess:
        sess.run([v.initializer for v in variables])
        saver.restore(sess, FIXTURE)
        for v in variables:
            got = sess.run(v)
            want = expected[v.op.name]
            assert np.asarray(got).dtype == want.dtype, v.op.name
            assert np.array_equal(got, want), v.op.name
        ours = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1234)
    with BundleReader(FIXTURE) as theirs, BundleReader(ours) as mine:
        assert mine.names() == theirs.names()
        for name in theirs.names():
            a, b = theirs.entry(name), mine.entry(name)
            assert (a.dtype, a.shape, a.size, a.crc32c) == (b.dtype, b.shape, b.size, b.crc32c)
            ta, tb = theirs.get_tensor(name), mine.get_tensor(name)
            if ta.dtype == object:
                assert ta.tolist() == tb.tolist()
            else:
                assert ta.tobytes() == tb.tobytes()
    for suffix in (".index", ".data-00000-of-00001"):
        assert open(ours + suffix, "rb").read() == open(FIXTURE + suffix, "rb").read()


def test_reader_api_on_tf_checkpoint():
    reader = tf.train.load_checkpoint(DATA) if hasattr(tf.train, "load_checkpoint") else \
        NewCheckpointReader(FIXTURE)
    assert reader.has_tensor("dense/kernel") and not reader.has_tensor("dense")
    assert reader.get_tensor("global_step") == 1234
    assert isinstance(reader.get_tensor("global_step"), np.int64)
    assert reader.get_tensor("names").tolist() == [b"alpha", b"beta", b"gamma"]
    assert reader.debug_string() == (
        b"counts (DT_INT32) [3,4]\ndense/bias (DT_FLOAT) [32]\ndense/kernel (DT_FLOAT) [64,32]\n"
        b"flags (DT_BOOL) [3]\nglobal_step (DT_INT64) []\nnames (DT_STRING) [3]\n"
        b"scale (DT_DOUBLE) []\n")  # NOTE: byte for byte what TF 2.21 prints


# -- TensorFlow reads ours -------------------------------------------------------------------
def _run_peer(peer: str, prefix: str, *flags: str) -> dict:
    out = subprocess.run([peer, ROUNDTRIP, prefix, *flags], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout[out.stdout.index("{"):])


def _encode(value) -> dict:
    arr = np.asarray(value)
    data = [bytes(x).hex() for x in arr.reshape(-1)] if arr.dtype == object else \
        np.ascontiguousarray(arr).tobytes().hex()
    return {"shape": list(arr.shape), "hex": data}


_VALUES = {
    "dense/kernel": np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5,
    "half": np.array([1.5, -2.0, np.inf, 65504.0], np.float16),
    "names": np.array([b"", b"x" * 200, "\u00e9t\u00e9".encode()], dtype=object),
    "flags": np.array([[True, False]]),
    "global_step": np.int64(42),
    "scale": np.float64(0.125),
    "counts": np.arange(-3, 3, dtype=np.int32).reshape(3, 2),
}


@pytest.mark.slow
def test_tensorflow_reads_our_checkpoint_and_meta_graph(tmp_path, tf_peer):
    variables = [tf.Variable(v, name=n) for n, v in _VALUES.items()]
    saver = Saver()
    with tf.Session() as sess:
        sess.run([v.initializer for v in variables])
        prefix = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=42)
    seen = _run_peer(tf_peer, prefix, "--meta")
    for name, value in _VALUES.items():
        want = dict(_encode(value), dtype=tf.as_dtype(np.asarray(value).dtype).name
                    if np.asarray(value).dtype != object else "string")
        assert seen["tensors"][name] == want, name
        assert seen["restored"][name] == want, name  # NOTE: via our SaverDef, in TF


@pytest.mark.slow
def test_tensorflow_reads_our_sharded_checkpoint(tmp_path, tf_peer):
    with tf.device("/cpu:0"):
        a = tf.Variable(np.float32([1, 2]), name="a")
    with tf.device("/cpu:1"):
        b = tf.Variable(np.array([b"q"], dtype=object), name="b")
    saver = Saver(sharded=True)
    config = {"device_count": {"CPU": 2}}
    with tf.Session(config=config) as sess:
        sess.run([a.initializer, b.initializer])
        prefix = saver.save(sess, str(tmp_path / "m"), write_meta_graph=False)
    seen = _run_peer(tf_peer, prefix)["tensors"]
    assert seen["a"] == dict(_encode(np.float32([1, 2])), dtype="float32")
    assert seen["b"] == dict(_encode(np.array([b"q"], dtype=object)), dtype="string")
