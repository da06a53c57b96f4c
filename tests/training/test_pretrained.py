"""Pretrained parameters: .npz / safetensors / checkpoints by name into variables, with checks.
tests/data/pretrained/reference.safetensors was written by the reference safetensors library
(tests/training/make_safetensors.py)."""

from __future__ import annotations

import json
import os
import struct

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.training import pretrained
from tensorweave.training.pretrained import (
    load_pretrained,
    pretrained_init_fn,
    read_pretrained,
    read_safetensors_metadata,
    write_safetensors,
)

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
REF_ST = os.path.join(DATA, "pretrained", "reference.safetensors")
REF_NPZ = os.path.join(DATA, "pretrained", "reference.npz")


def _reference() -> dict:
    with np.load(REF_NPZ) as z:
        return {k: z[k] for k in z.files}


def test_reads_reference_safetensors():
    want = _reference()
    got = read_pretrained(REF_ST)
    assert sorted(got) == sorted(want)
    for k, v in want.items():
        assert got[k].dtype == v.dtype and got[k].shape == v.shape, k
        assert np.array_equal(got[k], v), k
    assert read_safetensors_metadata(REF_ST) == {"format": "np"}


def test_writes_what_the_reference_writes(tmp_path):
    write_safetensors(tmp_path / "ours.safetensors", _reference(), {"format": "np"})
    assert (tmp_path / "ours.safetensors").read_bytes() == open(REF_ST, "rb").read()


def test_safetensors_rejects_what_it_cannot_hold(tmp_path):
    with pytest.raises(ValueError, match="cannot hold"):
        write_safetensors(tmp_path / "s.safetensors", {"s": np.array([b"a"], dtype=object)})
    with pytest.raises(ValueError, match="strings"):
        write_safetensors(tmp_path / "s.safetensors", {"x": np.ones(1)}, {"n": 1})


def _raw_st(tmp_path, header: dict, body: bytes = b"") -> str:
    text = json.dumps(header).encode()
    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", len(text)) + text + body)
    return str(path)


@pytest.mark.parametrize("header,body,match", [
    ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4, "offsets"),
    ({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8, "offsets"),
    ({"a": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}, b"\0", "dtype"),
    ({"a": {"dtype": "F32"}}, b"", "lacks"),
])
def test_malformed_safetensors_is_refused(tmp_path, header, body, match):
    with pytest.raises(ValueError, match=match):
        read_pretrained(_raw_st(tmp_path, header, body))


def test_truncated_safetensors_header(tmp_path):
    (tmp_path / "t.safetensors").write_bytes(struct.pack("<Q", 500) + b"{}")
    with pytest.raises(ValueError, match="header length 500"):
        read_pretrained(tmp_path / "t.safetensors")
    (tmp_path / "t.safetensors").write_bytes(b"\x01")
    with pytest.raises(ValueError, match="8-byte"):
        read_pretrained(tmp_path / "t.safetensors")


def _model():
    w = tf.Variable(np.zeros((3, 2), np.float32), name="dense/kernel")
    b = tf.Variable(np.zeros(2, np.float16), name="dense/bias")
    step = tf.Variable(np.int64(0), name="step")
    return w, b, step


@pytest.mark.parametrize("path", [REF_ST, REF_NPZ])
def test_load_by_name(path):
    w, b, step = _model()
    want = _reference()
    with tf.Session() as sess:
        sess.run([v.initializer for v in (w, b, step)])
        assert load_pretrained(sess, path) == ["dense/kernel", "dense/bias", "step"]
        assert np.array_equal(sess.run(w), want["dense/kernel"])
        assert np.array_equal(sess.run(b), want["dense/bias"])
        assert sess.run(step) == 41


def test_missing_keys_are_listed_at_once_with_closest_names(tmp_path):
    np.savez(tmp_path / "p.npz", **{"dense/kernel": np.ones((3, 2), np.float32),
                                    "dense/bias_": np.ones(2, np.float16)})
    w, b, step = _model()
    with tf.Session() as sess, pytest.raises(ValueError) as e:
        load_pretrained(sess, str(tmp_path / "p.npz"))
    msg = str(e.value)
    assert "2 variable(s) have no value" in msg
    assert "dense/bias (key 'dense/bias') (closest: dense/bias_" in msg
    assert "step (key 'step')" in msg
    with tf.Session() as sess:
        sess.run([v.initializer for v in (w, b, step)])
        assert load_pretrained(sess, str(tmp_path / "p.npz"), allow_missing=True) == \
            ["dense/kernel"]


def test_shape_and_dtype_mismatches_name_both_sides(tmp_path):
    np.savez(tmp_path / "p.npz", **{"dense/kernel": np.ones((2, 3), np.float32),
                                    "dense/bias": np.ones(2, np.float32),
                                    "step": np.int64(3)})
    w, b, step = _model()
    with tf.Session() as sess:
        sess.run([v.initializer for v in (w, b, step)])
        with pytest.raises(ValueError) as e:
            load_pretrained(sess, str(tmp_path / "p.npz"))
        msg = str(e.value)
        assert "variable dense/kernel: shape [3, 2]; 'dense/kernel' in" in msg
        assert "shape [2, 3]" in msg
        assert "variable dense/bias: dtype float16; 'dense/bias' in" in msg
        assert "dtype float32" in msg
        assert sess.run(step) == 0  # NOTE: nothing was assigned


def test_allow_cast_and_name_maps(tmp_path):
    np.savez(tmp_path / "p.npz", **{"model.w": np.full((3, 2), 2.0, np.float64),
                                    "model.b": np.array([1, 2], np.int32)})
    w, b, step = _model()
    with tf.Session() as sess:
        sess.run([v.initializer for v in (w, b, step)])
        loaded = load_pretrained(sess, str(tmp_path / "p.npz"),
                                 name_map={w: "model.w", "dense/bias": "model.b"},
                                 allow_cast=True)
        assert loaded == ["dense/kernel", "dense/bias"]
        assert sess.run(w).dtype == np.float32 and sess.run(w)[0, 0] == 2.0
        assert sess.run(b).tolist() == [1.0, 2.0]
        keys = {"dense/kernel": "model.w"}
        assert load_pretrained(sess, str(tmp_path / "p.npz"), allow_cast=True,
                               name_map=lambda n: keys.get(n)) == ["dense/kernel"]
        with pytest.raises(ValueError, match="not among the variables"):
            load_pretrained(sess, str(tmp_path / "p.npz"), name_map={"dense/kernal": "x"})


def test_bfloat16_widens_exactly_when_cast(tmp_path):
    bits = np.array([0x3FC0, 0xC000, 0x4049], np.uint16)  # 1.5, -2.0, 3.140625
    body = bits.tobytes()
    header = {"x": {"dtype": "BF16", "shape": [3], "data_offsets": [0, len(body)]}}
    path = _raw_st(tmp_path, header, body)
    v = tf.Variable(np.zeros(3, np.float32), name="x")
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(ValueError, match="dtype bfloat16"):
            load_pretrained(sess, path)
        load_pretrained(sess, path, allow_cast=True)
        assert sess.run(v).tolist() == [1.5, -2.0, 3.140625]


def test_from_checkpoint_and_init_fn_with_finalized_graph(tmp_path):
    w, b, step = _model()
    fn = pretrained_init_fn(os.path.join(DATA, "ckpt", "model.ckpt-1234"),
                            var_list=[step], name_map={step: "global_step"})
    tf.get_default_graph().finalize()  # NOTE: loading adds no op
    with tf.Session() as sess:
        sess.run([v.initializer for v in (w, b, step)])
        fn("scaffold", sess)
        assert sess.run(step) == 1234


def test_init_fn_checks_eagerly(tmp_path):
    _model()
    with pytest.raises(ValueError, match="no value"):
        pretrained_init_fn(REF_NPZ, name_map=lambda n: "missing/" + n)


def test_npz_with_pickles_is_refused(tmp_path):
    np.savez(tmp_path / "o.npz", x=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError):
        pretrained.read_npz_source(tmp_path / "o.npz")


# -- init_from_checkpoint (TF's assignment-map rules) ----------------------------------------
CKPT = os.path.join(DATA, "ckpt", "model.ckpt-1234")


def _ckpt_expected(name: str) -> np.ndarray:
    with np.load(os.path.join(DATA, "ckpt", "expected_values.npz"), allow_pickle=True) as z:
        return z[name.replace("/", "__")]


def _initialize(variables):
    with tf.Session() as sess:
        sess.run([v.initializer for v in variables])
        return sess.run(variables)


def test_init_from_checkpoint_scope_to_scope():
    from tensorweave.training.checkpoint_utils import init_from_checkpoint

    with tf.variable_scope("model/dense"):
        k = tf.get_variable("kernel", [64, 32])
        b = tf.get_variable("bias", [32])
    init_from_checkpoint(os.path.join(DATA, "ckpt"), {"dense/": "model/dense/"})
    assert k.initializer.inputs[1].op.type == "RestoreV2"
    assert k.initializer.inputs[1].op.name.startswith("checkpoint_initializer")
    got_k, got_b = _initialize([k, b])
    assert np.array_equal(got_k, _ckpt_expected("dense/kernel"))
    assert np.array_equal(got_b, _ckpt_expected("dense/bias"))


def test_init_from_checkpoint_names_variables_and_root():
    from tensorweave.training.checkpoint_utils import init_from_checkpoint

    scale = tf.Variable(0.0, dtype=tf.float64, name="my_scale")
    counts = tf.get_variable("counts", [3, 4], dtype=tf.int32,
                             initializer=tf.zeros_initializer())
    with tf.variable_scope("x"):
        flags = tf.get_variable("flags", [3], dtype=tf.bool, initializer=tf.zeros_initializer())
    init_from_checkpoint(CKPT, {"scale": scale, "counts": "counts"})
    init_from_checkpoint(CKPT, {"/": "x/"})
    got = _initialize([scale, counts, flags])
    assert got[0] == _ckpt_expected("scale")
    assert np.array_equal(got[1], _ckpt_expected("counts"))
    assert np.array_equal(got[2], _ckpt_expected("flags"))


def test_init_from_checkpoint_lists_all_missing_and_mismatches():
    from tensorweave.training.checkpoint_utils import init_from_checkpoint

    with tf.variable_scope("m"):
        tf.get_variable("kernal", [64, 32])
        tf.get_variable("bias", [32])
        tf.get_variable("extra", [1])
    with pytest.raises(ValueError) as e:
        init_from_checkpoint(CKPT, {"dense/": "m/"})
    msg = str(e.value)
    assert "2 tensor(s) not found" in msg
    assert "dense/kernal (for variable m/kernal) (closest: dense/kernel" in msg
    assert "dense/extra (for variable m/extra)" in msg
    tf.reset_default_graph()
    k = tf.get_variable("k", [32, 64])
    s = tf.get_variable("s", [], dtype=tf.float32)
    with pytest.raises(ValueError) as e:
        init_from_checkpoint(CKPT, {"dense/kernel": k, "scale": s})
    msg = str(e.value)
    assert "variable k: shape [32, 64]; tensor dense/kernel in" in msg and "[64, 32]" in msg
    assert "variable s: dtype float32; tensor scale in" in msg and "dtype float64" in msg
    with pytest.raises(ValueError, match="scope only"):
        init_from_checkpoint(CKPT, {"dense": "m/"})


def test_checkpoint_readers_and_listing():
    from tensorweave.training import checkpoint_utils as cu

    assert cu.list_variables(CKPT)[:2] == [("counts", [3, 4]), ("dense/bias", [32])]
    assert cu.load_variable(os.path.join(DATA, "ckpt"), "global_step:0") == 1234
    reader = cu.load_checkpoint(CKPT + ".index")
    assert reader.get_variable_to_dtype_map()["names"] == tf.string
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        cu.load_checkpoint(os.path.join(DATA, "pretrained"))
    it = cu.checkpoints_iterator(os.path.join(DATA, "ckpt"), timeout=0.05)
    assert next(it) == CKPT
    assert list(it) == []
