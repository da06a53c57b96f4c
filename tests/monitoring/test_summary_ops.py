"""tf.summary ops: TF1's tags and op names, the kernels against TensorFlow's output, errors."""

from __future__ import annotations

import json
import struct
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.monitoring import summary as S
from tensorweave.runtime.kernels.cpu.summary import (
    BUCKET_LIMITS,
    encode_png,
    histogram_proto,
    normalize_image,
)

TF = json.loads((Path(__file__).parent / "data" / "tf_expected.json").read_text())


def _values(summary_bytes):
    return S.Summary.FromString(summary_bytes).value


def _run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_tags_op_names_and_collection_match_tensorflow():
    want = TF["tags"]
    x, v = tf.constant(1.5), tf.constant([1.0, 2.0, 3.0])
    img = tf.zeros([2, 3, 4, 1])
    ops = [S.scalar("loss", x), S.scalar("loss", x)]
    with tf.name_scope("train"):
        ops.append(S.scalar("acc", x))
        ops.append(S.histogram("w", v, family="weights"))
        ops.append(S.scalar("bad name!", x))
    ops.append(S.image("pic", img))
    ops.append(S.image("one", img, max_outputs=1))
    ops.append(S.text("note", tf.constant("hello")))
    ops.append(S.scalar("/lead", x, family="fam"))
    merged = S.merge_all()
    outs = _run(ops + [merged])
    assert [o.op.name for o in ops] == want["op_names"]
    assert [o.op.type for o in ops] == want["op_types"]
    # the tag / metadata constants live in the summary's own scope, as TF names them
    assert [o.op.inputs[0].op.name for o in ops] == [n[0] for n in want["input_names"]]
    assert ops[7].op.inputs[2].op.name == want["input_names"][7][2]
    assert [[val.tag for val in _values(b)] for b in outs[:-1]] == want["tags"]
    assert merged.op.name == want["merged_name"]
    assert [val.tag for val in _values(outs[-1])] == want["merged_tags"]
    assert [t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)] == want["collection"]


def test_scalar_value_and_custom_collections():
    x = tf.placeholder(tf.float64, [])
    s = S.scalar("lr", x, collections=["mine"])
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == []
    assert tf.get_collection("mine") == [s]
    (val,) = _values(_run(s, {x: 0.125}))
    assert (val.tag, val.simple_value) == ("lr", 0.125)


def test_scalar_rejects_a_known_non_scalar_at_construction():
    with pytest.raises(ValueError, match="needs a scalar tensor.*\\(2,\\)|needs a scalar"):
        S.scalar("v", tf.constant([1.0, 2.0]))


def test_scalar_kernel_error_matches_tensorflow():
    from tensorweave.ops.apply import apply_op

    op = apply_op("ScalarSummary", tags="s", values=tf.constant([1.0, 2.0]), name="s")
    with pytest.raises(errors.InvalidArgumentError) as e:
        _run(op)
    assert TF["errors"]["scalar_shape"]["message"].splitlines()[-2].strip() in str(e.value)


@pytest.mark.parametrize("key,value", [("histo_nan", np.nan), ("histo_inf", np.inf)])
def test_histogram_rejects_non_finite_like_tensorflow(key, value):
    name = {"histo_nan": "hn", "histo_inf": "hi"}[key]
    h = S.histogram(name, tf.constant([1.0, value], tf.float32))
    with pytest.raises(errors.InvalidArgumentError) as e:
        _run(h)
    assert TF["errors"][key]["message"].splitlines()[-2].strip() in str(e.value)


def test_histogram_close_to_tensorflow_on_random_floats():
    want = TF["histograms"]["normal_f32"]
    arr = np.array(want["input"], np.float32)
    (val,) = _values(_run(S.histogram("h", tf.constant(arr))))
    h, w = val.histo, want["histo"]
    assert list(h.bucket_limit) == w["bucket_limit"]
    assert list(h.bucket) == w["bucket"]
    assert (h.min, h.max, h.num) == (w["min"], w["max"], w["num"])
    np.testing.assert_allclose([h.sum, h.sum_squares], [w["sum"], w["sum_squares"]], rtol=1e-12)


def test_histogram_of_empty_tensor_matches_tensorflow():
    want = TF["histograms"]["empty"]["histo"]
    h = histogram_proto(np.zeros((0, 3), np.float32))
    assert (h.min, h.max, h.num) == (want["min"], want["max"], want["num"])
    assert (list(h.bucket_limit), list(h.bucket)) == (want["bucket_limit"], want["bucket"])


def test_default_bucket_limits_are_tfs():
    lim = BUCKET_LIMITS
    mid = len(lim) // 2
    assert len(lim) == 1551 and lim[mid] == 0.0  # 774 powers + DBL_MAX per side, 0
    assert lim[mid + 1] == 1e-12 and lim[mid + 2] == 1e-12 * 1.1
    assert lim[-1] == sys.float_info.max and lim[0] == -sys.float_info.max
    np.testing.assert_array_equal(lim[:mid], -lim[mid + 1:][::-1])
    assert np.all(np.diff(lim) > 0)


def _decode_png(data: bytes) -> np.ndarray:
    """Minimal decoder for our PNGs (8-bit, no interlace, filter 0), checking chunk CRCs."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, kind
        chunks[kind] = chunks.get(kind, b"") + body
        pos += 12 + n
    w, h, depth, ctype = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    channels = {0: 1, 4: 2, 2: 3, 6: 4}[ctype]
    assert depth == 8 and b"IEND" in chunks
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(h, -1)
    assert np.all(rows[:, 0] == 0)
    return rows[:, 1:].reshape(h, w, channels)


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_png_round_trip(channels):
    img = np.random.default_rng(channels).integers(0, 256, (5, 7, channels)).astype(np.uint8)
    data = encode_png(img)
    np.testing.assert_array_equal(_decode_png(data), img)


def test_png_opens_with_pillow():
    pil = pytest.importorskip("PIL.Image")
    import io

    img = np.random.default_rng(0).integers(0, 256, (4, 6, 3)).astype(np.uint8)
    with pil.open(io.BytesIO(encode_png(img))) as im:
        assert im.size == (6, 4) and im.mode == "RGB"
        np.testing.assert_array_equal(np.asarray(im), img)


@pytest.mark.parametrize("key", ["mixed", "positive", "with_nan", "uint8", "half"])
def test_image_pixels_match_tensorflow(key):
    want = TF["images"][key]
    arr = np.array(want["input"], dtype=want["dtype"])
    if want["nan_at"]:
        arr[tuple(want["nan_at"])] = np.nan
        arr[tuple(want["inf_at"])] = np.inf
    out = _run(S.image("im", tf.constant(arr), max_outputs=want["max_outputs"]))
    got = _values(out)
    assert [v.tag for v in got] == [i["tag"] for i in want["images"]]
    for v, w in zip(got, want["images"]):
        assert (v.image.height, v.image.width, v.image.colorspace) == (
            w["height"], w["width"], w["colorspace"])
        np.testing.assert_array_equal(_decode_png(v.image.encoded_image_string), w["pixels"])


def test_normalize_positive_floats_scales_max_to_255():
    img = np.array([[[0.0], [0.25]], [[0.5], [0.2]]], np.float32)
    np.testing.assert_array_equal(normalize_image(img, np.array([255, 0, 0, 255], np.uint8))
                                  [..., 0], [[0, 127], [255, 102]])


def test_image_rejects_bad_channel_count():
    from tensorweave.ops.apply import apply_op

    op = apply_op("ImageSummary", tag="im", tensor=tf.zeros([1, 2, 2, 2]), name="im")
    with pytest.raises(errors.InvalidArgumentError, match="last dim 1, 3, or 4"):
        _run(op)


def test_text_summary_bytes_match_tensorflow():
    want = TF["text"]
    (val,) = _values(_run(S.text("t", tf.constant([["a", "bc"], ["d", "e"]]))))
    assert val.tag == want["tag"]
    assert val.metadata.SerializeToString().hex() == want["metadata_hex"]
    assert val.tensor.SerializeToString().hex() == want["tensor_hex"]


def test_text_requires_strings():
    with pytest.raises(ValueError, match="to have dtype string"):
        S.text("t", tf.constant([1.0]))


def test_tensor_summary_bytes_match_tensorflow():
    want = TF["tensor_summary"]
    s = S.tensor_summary("ts", tf.constant([[1.0, 2.0]]), summary_description="desc")
    (val,) = _values(_run(s))
    assert val.tag == want["tag"]
    assert val.metadata.SerializeToString().hex() == want["metadata_hex"]
    assert val.tensor.SerializeToString().hex() == want["tensor_hex"]


def test_merge_detects_duplicate_tags():
    from tensorweave.ops.apply import apply_op

    a = apply_op("ScalarSummary", tags="d", values=1.0)
    b = apply_op("ScalarSummary", tags="d", values=2.0)
    with pytest.raises(errors.InvalidArgumentError, match="Duplicate tag d found"):
        _run(S.merge([a, b]))


def test_merge_named_and_merge_all_scoped():
    assert S.merge_all() is None
    with tf.name_scope("a"):
        sa = S.scalar("x", 1.0)
    S.scalar("y", 2.0)
    m = S.merge_all(scope="a", name="only_a")
    assert m.op.name == "only_a/only_a" and list(m.op.inputs) == [sa]
    assert [v.tag for v in _values(_run(m))] == ["a/x"]


def test_merge_rejects_garbage():
    from tensorweave.ops.apply import apply_op

    bad = apply_op("MergeSummary", [tf.constant(b"\xff\xff\xff")])
    with pytest.raises(errors.InvalidArgumentError, match="Could not parse"):
        _run(bad)
