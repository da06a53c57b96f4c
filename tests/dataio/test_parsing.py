"""Example parsing against TensorFlow-written records and a protobuf-object reference;
parse errors; the other parsing ops' errors; SparseTensor in sessions."""

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.runtime.kernels.cpu.parsing  # noqa: F401  (until kernels.cpu imports it)
import tensorweave.runtime.kernels.cpu.parsing_io  # noqa: F401
from tensorweave import errors
from tensorweave.formats import example as ex
from tensorweave.formats.tfrecord import tf_record_iterator
from tensorweave.ops import parsing_ops as po
from tensorweave.ops.sparse_tensor import (
    SparseTensor,
    SparseTensorValue,
    sparse_placeholder,
)

DATA = Path(__file__).resolve().parent.parent / "data"
DIGITS = {"x": ex.FixedLenFeature([64], tf.float32), "y": ex.FixedLenFeature([1], tf.int64),
          "id": ex.FixedLenFeature([], tf.string)}


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def _strings(items) -> np.ndarray:
    out = np.empty(len(items), object)
    out[:] = items
    return out


def _example(**features) -> bytes:
    # NOTE: deterministic: the bytes name parametrized tests, the same in every process
    return ex.Example(features=ex.Features(feature={
        k: ex.feature_of(v) for k, v in features.items()})).SerializeToString(deterministic=True)


def _reference(records, key, kind):
    """Values of one feature per record, through protobuf objects."""
    out = []
    for r in records:
        f = ex.Example.FromString(r).features.feature
        out.append(list(getattr(f[key], kind).value) if key in f else None)
    return out


# -- TensorFlow-written records ----------------------------------------------------------------
@pytest.mark.parametrize("name,compression", [("digits.tfrecord", None),
                                              ("digits.tfrecord.gz", "GZIP")])
def test_tf_written_records_parse_exactly(name, compression):
    records = list(tf_record_iterator(str(DATA / name), compression))
    assert len(records) == 200
    s = tf.placeholder(tf.string, [None])
    f = po.parse_example(s, DIGITS)
    assert f["x"].shape.as_list() == [None, 64] and f["y"].dtype == tf.int64
    got = _run(f, {s: records})
    assert got["x"].dtype == np.float32 and got["x"].shape == (200, 64)
    assert got["y"].dtype == np.int64 and got["y"].shape == (200, 1)
    assert got["id"].dtype == object and got["id"].shape == (200,)
    np.testing.assert_array_equal(got["x"], np.array(_reference(records, "x", "float_list"),
                                                     np.float32))
    assert got["y"].ravel().tolist() == [v[0] for v in _reference(records, "y", "int64_list")]
    assert got["id"].tolist() == [b"digit-%d" % i for i in range(200)]


def test_parse_single_example_on_tf_records():
    records = list(tf_record_iterator(str(DATA / "digits.tfrecord")))
    s = tf.placeholder(tf.string, [])
    f = po.parse_single_example(s, DIGITS)
    assert f["x"].shape.as_list() == [64] and f["id"].shape.as_list() == []
    with tf.Session() as sess:
        for i in (0, 57, 199):
            got = sess.run(f, {s: records[i]})
            assert got["id"] == b"digit-%d" % i
            assert got["y"].tolist() == _reference([records[i]], "y", "int64_list")[0]
            np.testing.assert_array_equal(
                got["x"], np.array(_reference([records[i]], "x", "float_list")[0], np.float32))


def test_parse_example_builds_tf_graph():
    s = tf.placeholder(tf.string, [None], name="s")
    f = po.parse_example(s, {"x": ex.FixedLenFeature([3], tf.float32),
                             "y": ex.FixedLenFeature([], tf.int64, default_value=7),
                             "v": ex.VarLenFeature(tf.string),
                             "q": ex.FixedLenSequenceFeature([2], tf.float32,
                                                             allow_missing=True)})
    g = tf.get_default_graph()
    names = [(op.name, op.type) for op in g.get_operations()]
    assert names == [
        ("s", "Placeholder"), ("ParseExample/Const", "Const"),
        ("ParseExample/Const_1", "Const"), ("ParseExample/key_y", "Const"),
        ("ParseExample/Reshape/shape", "Const"), ("ParseExample/Reshape", "Reshape"),
        ("ParseExample/ParseExampleV2/names", "Const"),
        ("ParseExample/ParseExampleV2/sparse_keys", "Const"),
        ("ParseExample/ParseExampleV2/dense_keys", "Const"),
        ("ParseExample/ParseExampleV2/ragged_keys", "Const"),
        ("ParseExample/ParseExampleV2", "ParseExampleV2")]
    op = g.get_operation_by_name("ParseExample/ParseExampleV2")
    assert op.get_attr("num_sparse") == 1
    assert [t.name for t in op.get_attr("Tdense")] == ["float32", "float32", "int64"]
    assert [s.as_list() for s in op.get_attr("dense_shapes")] == [[None, 2], [3], []]
    assert f["q"].shape.as_list() == [None, None, 2] and f["y"].shape.as_list() == [None]
    assert isinstance(f["v"], SparseTensor) and f["v"].indices.shape.as_list() == [None, 2]


def test_parse_single_example_names_and_shapes():
    s = tf.placeholder(tf.string, [])
    f = po.parse_single_example(s, {"x": ex.FixedLenFeature([3], tf.float32),
                                    "v": ex.VarLenFeature(tf.int64)})
    assert f["x"].op.name == "ParseSingleExample/ParseExample/ParseExampleV2"
    assert f["v"].indices.shape.as_list() == [None, 1] and f["x"].shape.as_list() == [3]
    with pytest.raises(ValueError, match="must be a scalar"):
        po.parse_single_example(tf.placeholder(tf.string, [2]), {"x": DIGITS["x"]})


# -- features and defaults -------------------------------------------------------------------
def test_defaults_varlen_and_sequence_features():
    recs = [_example(a=[1.0, 2.0], n=[5], w=["p", "q"], seq=[1, 2, 3, 4]),
            _example(n=[6], seq=[9, 8]),
            _example(a=[3.0, 4.0], w=["r"])]
    s = tf.placeholder(tf.string, [None])
    f = po.parse_example(s, {
        "a": ex.FixedLenFeature([2], tf.float32, default_value=[-1.0, -2.0]),
        "n": ex.FixedLenFeature([], tf.int64, default_value=0),
        "w": ex.VarLenFeature(tf.string),
        "seq": ex.FixedLenSequenceFeature([2], tf.int64, allow_missing=True, default_value=-9)})
    got = _run(f, {s: recs})
    np.testing.assert_array_equal(got["a"], [[1, 2], [-1, -2], [3, 4]])
    assert got["n"].tolist() == [5, 6, 0]
    w = got["w"]
    assert isinstance(w, SparseTensorValue)
    assert w.indices.tolist() == [[0, 0], [0, 1], [2, 0]]
    assert w.values.tolist() == [b"p", b"q", b"r"] and w.dense_shape.tolist() == [3, 2]
    assert got["seq"].shape == (3, 2, 2)
    assert got["seq"].tolist() == [[[1, 2], [3, 4]], [[9, 8], [-9, -9]], [[-9, -9], [-9, -9]]]
    dense = po.sparse_tensor_to_dense(f["w"], default_value=b"-")
    assert _run(dense, {s: recs}).tolist() == [[b"p", b"q"], [b"-", b"-"], [b"r", b"-"]]


def test_scalar_parse_of_varlen_and_sequence():
    s = tf.placeholder(tf.string, [])
    f = po.parse_single_example(s, {
        "v": ex.VarLenFeature(tf.float32),
        "seq": ex.FixedLenSequenceFeature([3], tf.float32, allow_missing=True)})
    got = _run(f, {s: _example(v=[0.5, 1.5], seq=np.arange(6.0))})
    assert got["v"].indices.tolist() == [[0], [1]] and got["v"].dense_shape.tolist() == [2]
    assert got["seq"].tolist() == [[0, 1, 2], [3, 4, 5]]


def test_feature_config_errors_at_construction():
    s = tf.placeholder(tf.string, [None])
    with pytest.raises(ValueError, match="allow_missing"):
        po.parse_example(s, {"q": ex.FixedLenSequenceFeature([2], tf.float32)})
    with pytest.raises(ValueError, match="First dimension of shape for feature x unknown"):
        po.parse_example(s, {"x": ex.FixedLenFeature([None, 2], tf.float32)})
    with pytest.raises(ValueError, match="float32, int64 or string"):
        po.parse_example(s, {"x": ex.FixedLenFeature([2], tf.float64)})
    with pytest.raises(ValueError):
        po.parse_example(s, {"x": ex.FixedLenFeature([2], tf.float32, default_value=[1.0])})
    with pytest.raises(ValueError, match="features"):
        po.parse_example(s, {})


# -- parse errors name the feature and the record ----------------------------------------------
def _batch_with(bad: bytes, at: int, n: int = 12):
    good = [_example(x=[1.0, 2.0], y=[i]) for i in range(n)]
    good[at] = bad
    return good


@pytest.mark.parametrize("bad,pattern", [
    (_example(x=[1.0, 2.0]),
     r"Key: y, Index: 7\.  Feature: y \(data type: int64\) is required but could not be found"),
    (_example(x=[1.0, 2.0], y=[1.5]),
     r"Key: y, Index: 7\.  Data types don't match. Data type: float but expected type: int64"),
    (_example(x=[1.0, 2.0, 3.0], y=[1]),
     r"Key: x, Index: 7\.  Number of float values != expected.  Values size: 3 but output "
     r"shape: \[2\]"),
    (b"\x0a\xff\xff", r"Could not parse example input, value: .*Index: 7"),
])
def test_parse_errors_name_feature_and_record(bad, pattern):
    s = tf.placeholder(tf.string, [None])
    f = po.parse_example(s, {"x": ex.FixedLenFeature([2], tf.float32),
                             "y": ex.FixedLenFeature([], tf.int64)})
    with pytest.raises(errors.InvalidArgumentError, match=pattern):
        _run(f, {s: _batch_with(bad, 7)})


def test_parse_error_uses_example_names_and_first_bad_record():
    s = tf.placeholder(tf.string, [None])
    names = tf.placeholder(tf.string, [None])
    f = po.parse_example(s, {"y": ex.FixedLenFeature([], tf.int64)}, example_names=names)
    batch = _batch_with(_example(z=[1]), 3)
    batch[9] = _example(y=[1.0])
    with pytest.raises(errors.InvalidArgumentError, match=r"Name: rec3, Key: y, Index: 3\."):
        _run(f, {s: batch, names: [b"rec%d" % i for i in range(12)]})


# -- the batch (layout) path and the per-record path agree --------------------------------------
def _random_records(rng, n):
    recs = []
    for _ in range(n):
        feats = {"f": rng.random(int(rng.integers(3, 5))).astype(np.float32).tolist()[:3],
                 "i": [int(v) for v in rng.integers(-2**62, 2**62, 2)]
                 if rng.random() < 0.3 else [int(rng.integers(0, 300)), -1],
                 "b": [b"x" * int(rng.integers(0, 3)), b"yz"]}
        if rng.random() < 0.8:
            feats["opt"] = [int(rng.integers(0, 5))]
        if rng.random() < 0.5:
            feats["vl"] = rng.random(int(rng.integers(0, 4))).astype(np.float32).tolist() \
                or [0.5]
        if rng.random() < 0.3:
            feats["unused"] = ["zzz" * int(rng.integers(1, 4))]
        recs.append(_example(**feats))
    return recs


def test_layout_path_matches_protobuf_reference():
    rng = np.random.default_rng(7)
    recs = _random_records(rng, 300)
    # same length, different structure: key order swapped (exercises the layout check)
    recs += [_example(f=[1.0, 2.0, 3.0], i=[1, 2], b=[b"a", b"yz"], opt=[1])] * 5
    e = ex.Example()
    for k, v in (("opt", ex.feature_of([1])), ("b", ex.feature_of([b"a", b"yz"])),
                 ("i", ex.feature_of([1, 2])), ("f", ex.feature_of([1.0, 2.0, 3.0]))):
        e.features.feature[k].CopyFrom(v)
    recs.append(e.SerializeToString())
    s = tf.placeholder(tf.string, [None])
    f = po.parse_example(s, {"f": ex.FixedLenFeature([3], tf.float32),
                             "i": ex.FixedLenFeature([2], tf.int64),
                             "b": ex.FixedLenFeature([2], tf.string),
                             "opt": ex.FixedLenFeature([], tf.int64, default_value=-5),
                             "vl": ex.VarLenFeature(tf.float32)})
    got = _run(f, {s: recs})
    np.testing.assert_array_equal(got["f"], _reference(recs, "f", "float_list"))
    assert got["i"].tolist() == _reference(recs, "i", "int64_list")
    assert got["b"].tolist() == _reference(recs, "b", "bytes_list")
    assert got["opt"].tolist() == [v[0] if v else -5 for v in _reference(recs, "opt",
                                                                          "int64_list")]
    vl = _reference(recs, "vl", "float_list")
    assert got["vl"].values.tolist() == pytest.approx([x for v in vl if v for x in v])
    rows = [i for i, v in enumerate(vl) if v for _ in v]
    assert got["vl"].indices[:, 0].tolist() == rows
    assert got["vl"].dense_shape.tolist() == [len(recs), max(len(v) for v in vl if v)]


def test_unusual_encodings_fall_back_to_protobuf():
    floats = np.array([1.5, -2.0], np.float32).tobytes()
    unpacked = b"".join(b"\x0d" + floats[i:i + 4] for i in (0, 4))  # FloatList, not packed
    feature = b"\x12" + bytes([len(unpacked)]) + unpacked
    entry = b"\x0a\x01x\x12" + bytes([len(feature)]) + feature
    features = b"\x0a" + bytes([len(entry)]) + entry
    rec = b"\x0a" + bytes([len(features)]) + features
    assert list(ex.Example.FromString(rec).features.feature["x"].float_list.value) == \
        [1.5, -2.0]
    merged = rec + _example(y=[3])  # two Example.features fields: protobuf merges them
    unknown = rec + b"\x10\x01"  # an unknown Example field (varint): parsed by protobuf
    s = tf.placeholder(tf.string, [None])
    f = po.parse_example(s, {"x": ex.FixedLenFeature([2], tf.float32),
                             "y": ex.FixedLenFeature([], tf.int64, default_value=0)})
    got = _run(f, {s: [rec] * 5 + [merged] * 2 + [unknown] * 4})
    assert got["x"].tolist() == [[1.5, -2.0]] * 11
    assert got["y"].tolist() == [0] * 5 + [3] * 2 + [0] * 4


def test_empty_batch_and_empty_record():
    s = tf.placeholder(tf.string, [None])
    f = po.parse_example(s, {"x": ex.FixedLenFeature([2], tf.float32, default_value=[1, 2]),
                             "v": ex.VarLenFeature(tf.int64)})
    got = _run(f, {s: np.zeros(0, object)})
    assert got["x"].shape == (0, 2) and got["v"].indices.shape == (0, 2)
    got = _run(f, {s: [b""]})
    assert got["x"].tolist() == [[1, 2]] and got["v"].dense_shape.tolist() == [1, 0]


# -- other parsing ops --------------------------------------------------------------------------
def test_decode_raw_errors_and_endianness():
    s = tf.placeholder(tf.string, [None])
    with pytest.raises(errors.InvalidArgumentError, match="element 1 has size 8 != 4"):
        _run(po.decode_raw(s, tf.float32), {s: [b"abcd", b"abcdefgh"]})
    with pytest.raises(errors.InvalidArgumentError, match="length 3 that is not a multiple of 4"):
        _run(po.decode_raw(s, tf.int32), {s: [b"abc"]})
    got = _run(po.decode_raw(s, tf.uint16, little_endian=False), {s: [b"\x01\x02"]})
    assert got.tolist() == [[0x0102]] and got.dtype == np.uint16
    assert _run(po.decode_raw(bytes=s, out_type=tf.bool), {s: [b"\x00\x07"]}).tolist() == \
        [[False, True]]


@pytest.mark.parametrize("rec,pattern", [
    ("1,a", "Expect 3 fields but have 2 in record 0"),
    ("x,a,3", "Field 0 in record 0 is not a valid float: x"),
    ("1,a,", "Field 2 is required but missing in record 0!"),
    ('1,"a"b,2', "Quote inside a string has to be escaped by another quote"),
    ("1,a,99999999999", "Field 2 in record 0 is not a valid int32: 99999999999"),
])
def test_decode_csv_errors(rec, pattern):
    s = tf.placeholder(tf.string, [None])
    cols = po.decode_csv(s, [[1.0], [""], tf.constant([], tf.int32)])
    with pytest.raises(errors.InvalidArgumentError, match=pattern):
        _run(cols, {s: [rec]})


def test_decode_csv_values_defaults_and_na():
    s = tf.placeholder(tf.string, [None])
    cols = po.decode_csv(s, [[1.0], ["d"], [7]], na_value="NA")
    got = _run(cols, {s: [' 2.5 ,"a,""b""",4', ',,', 'NA,x,NA']})
    assert got[0].tolist() == [2.5, 1.0, 1.0] and got[2].tolist() == [4, 7, 7]
    assert got[1].tolist() == [b'a,"b"', b"d", b"x"]
    assert [c.op.name for c in cols] == ["DecodeCSV"] * 3
    assert tf.get_default_graph().get_operation_by_name("DecodeCSV/record_defaults_0")


def test_read_and_write_file(tmp_path):
    target = tmp_path / "sub" / "out.bin"
    w = po.write_file(str(target), tf.constant(b"\x00payload\xff"))
    r = po.read_file(str(target))
    _run(w)
    assert target.read_bytes() == b"\x00payload\xff"
    assert _run(r) == b"\x00payload\xff"
    target.write_bytes(b"changed")  # not folded at plan time: a rerun reads the file again
    with tf.Session() as sess:
        assert sess.run(r) == b"changed"
        target.write_bytes(b"again")
        assert sess.run(r) == b"again"
    with pytest.raises(errors.NotFoundError, match="No such file or directory"):
        _run(po.read_file(str(tmp_path / "missing")))


def test_string_number_and_base64_errors():
    s = tf.placeholder(tf.string, [None])
    with pytest.raises(errors.InvalidArgumentError, match="could not correctly convert string: "
                                                          "abc"):
        _run(po.string_to_number(s), {s: ["abc"]})
    with pytest.raises(errors.InvalidArgumentError, match="convert string: 3000000000"):
        _run(po.string_to_number(s, tf.int32), {s: ["3000000000"]})
    with pytest.raises(errors.InvalidArgumentError, match="base64"):
        _run(po.decode_base64(s), {s: ["a*b="]})
    round_trip = po.decode_base64(po.encode_base64(s))
    data = [bytes(range(i, i + 7)) for i in range(0, 250, 50)]
    assert _run(round_trip, {s: data}).tolist() == data


@pytest.mark.parametrize("indices,pattern", [
    ([[1, 0], [0, 1]], r"indices\[1\] = \[0,1\] is out of order"),
    ([[0, 1], [0, 1]], r"indices\[1\] = \[0,1\] is repeated"),
    ([[0, 1], [2, 0]], r"indices\[1\] = \[2,0\] is out of bounds: need 0 <= index < \[2,3\]"),
])
def test_sparse_to_dense_validation(indices, pattern):
    sp = SparseTensor(indices, [3.0, 4.0], [2, 3])
    with pytest.raises(errors.InvalidArgumentError, match=pattern):
        _run(po.sparse_tensor_to_dense(sp))


def test_sparse_to_dense_unvalidated_order_is_fine():
    sp = SparseTensor([[1, 0], [0, 1]], [3.0, 4.0], [2, 3])
    got = _run(po.sparse_tensor_to_dense(sp, validate_indices=False))
    assert got.tolist() == [[0, 4, 0], [3, 0, 0]]


# -- SparseTensor -------------------------------------------------------------------------------
def test_sparse_tensor_fetch_feed_and_static_shape():
    sp = SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [2, 3])
    assert sp.shape.as_list() == [2, 3] and sp.dtype == tf.float32
    assert sp.indices.dtype == tf.int64 and sp.dense_shape.dtype == tf.int64
    got = _run(sp)
    assert isinstance(got, SparseTensorValue) and got.values.tolist() == [1.0, 2.0]
    ph = sparse_placeholder(tf.float32, name="sp")
    assert ph.values.op.name == "sp/values" and ph.indices.op.name == "sp/indices"
    dense = po.sparse_tensor_to_dense(ph)
    value = SparseTensorValue(np.array([[0, 1]], np.int64), np.array([5.0], np.float32),
                              np.array([1, 2], np.int64))
    assert _run(dense, {ph: value}).tolist() == [[0.0, 5.0]]
    assert _run(dense, {ph: (value.indices, value.values, value.dense_shape)}).tolist() == \
        [[0.0, 5.0]]
    both = _run([sp, dense], {ph: value})
    assert isinstance(both[0], SparseTensorValue)
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.convert_to_tensor(sp)


def test_sparse_placeholder_with_known_shape_needs_no_shape_feed():
    ph = sparse_placeholder(tf.int64, shape=[2, 2])
    assert ph.shape.as_list() == [2, 2]
    dense = po.sparse_tensor_to_dense(ph)
    got = _run(dense, {ph.indices: [[1, 1]], ph.values: [9]})
    assert got.tolist() == [[0, 0], [0, 9]]


# -- a GraphDef written by TensorFlow --------------------------------------------------------
def test_tf_written_parse_graph_runs():
    from tensorweave.proto import graph_pb2

    gd = graph_pb2.GraphDef.FromString((DATA / "parse_example_graph.pb").read_bytes())
    tf.import_graph_def(gd, name="")
    records = list(tf_record_iterator(str(DATA / "digits.tfrecord")))
    missing_y = _example(x=np.ones(64, np.float32), id=[b"extra"])
    with tf.Session() as sess:
        x, y, idv = sess.run(["x:0", "y:0", "idv:0"], {"s:0": records[:20] + [missing_y]})
        x1 = sess.run("x1:0", {"s1:0": records[5]})
    np.testing.assert_array_equal(x[:20], _reference(records[:20], "x", "float_list"))
    assert y.ravel().tolist() == [v[0] for v in _reference(records[:20], "y", "int64_list")] \
        + [3]
    assert idv.tolist() == [b"digit-%d" % i for i in range(20)] + [b"extra"]
    np.testing.assert_array_equal(x1, _reference([records[5]], "x", "float_list")[0])
