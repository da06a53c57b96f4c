"""tf.train.Example protos (TF's field numbers) and the feature config namedtuples."""

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.formats import example as ex
from tensorweave.formats.tfrecord import tf_record_iterator

DATA = Path(__file__).resolve().parent.parent / "data"


def test_example_bytes_use_tf_field_numbers():
    e = ex.Example(features=ex.Features(feature={
        "f": ex.Feature(float_list=ex.FloatList(value=[1.0]))}))
    # Example.features=1 { Features.feature=1 map entry { key=1 "f", value=2 Feature {
    #   float_list=2 { packed value=1: 0x3f800000 } } } }
    want = bytes([0x0A, 0x0F, 0x0A, 0x0D, 0x0A, 0x01]) + b"f" + bytes(
        [0x12, 0x08, 0x12, 0x06, 0x0A, 0x04, 0x00, 0x00, 0x80, 0x3F])
    assert e.SerializeToString() == want
    i = ex.Feature(int64_list=ex.Int64List(value=[1, -1])).SerializeToString()
    assert i[0] == 0x1A and i[2] == 0x0A  # int64_list = 3, packed
    b = ex.Feature(bytes_list=ex.BytesList(value=[b"ab"])).SerializeToString()
    assert b == bytes([0x0A, 0x04, 0x0A, 0x02]) + b"ab"


def test_tf_written_examples_parse():
    records = list(tf_record_iterator(str(DATA / "digits.tfrecord")))
    first = ex.Example.FromString(records[7]).features.feature
    assert sorted(first) == ["id", "x", "y"]
    assert len(first["x"].float_list.value) == 64
    assert list(first["y"].int64_list.value) == [7]
    assert list(first["id"].bytes_list.value) == [b"digit-7"]
    assert all(0.0 <= v <= 1.0 for v in first["x"].float_list.value)


def test_sequence_example_round_trip():
    s = ex.SequenceExample()
    s.context.feature["len"].int64_list.value.append(2)
    steps = s.feature_lists.feature_list["tok"].feature
    steps.add().bytes_list.value.append(b"a")
    steps.add().bytes_list.value.append(b"b")
    back = ex.SequenceExample.FromString(s.SerializeToString())
    assert back == s
    assert [f.bytes_list.value[0] for f in back.feature_lists.feature_list["tok"].feature] == \
        [b"a", b"b"]
    assert isinstance(ex.FeatureList(), ex.FeatureList) and ex.FeatureLists().feature_list == {}


def test_feature_configs_are_tf_namedtuples():
    f = ex.FixedLenFeature([3], tf.float32)
    assert f == ex.FixedLenFeature(shape=[3], dtype=tf.float32, default_value=None)
    assert f._fields == ("shape", "dtype", "default_value")
    s = ex.FixedLenSequenceFeature([2], tf.int64)
    assert (s.allow_missing, s.default_value) == (False, None)
    assert ex.VarLenFeature(tf.string).dtype == tf.string
    sp = ex.SparseFeature("i", "v", tf.float32, 10)
    assert sp.already_sorted is False and sp._fields[-1] == "already_sorted"


def test_feature_of_infers_the_list_kind():
    f = ex.feature_of(np.array([[1.5, 2.0]], np.float64))
    assert f.WhichOneof("kind") == "float_list" and list(f.float_list.value) == [1.5, 2.0]
    assert list(ex.feature_of(np.int32(4)).int64_list.value) == [4]
    assert list(ex.feature_of(["a", b"b"]).bytes_list.value) == [b"a", b"b"]
    assert list(ex.feature_of([b"\x00\xff\x00", b"\x00"]).bytes_list.value) == \
        [b"\x00\xff\x00", b"\x00"]  # trailing NULs kept
    assert list(ex.feature_of(b"one").bytes_list.value) == [b"one"]
    assert ex.feature_of([1, 2], dtype=tf.float32).WhichOneof("kind") == "float_list"
    with pytest.raises(TypeError, match="float32, int64 or string"):
        ex.feature_of([1.0], dtype=tf.float64)
