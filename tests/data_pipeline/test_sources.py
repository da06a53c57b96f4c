"""Stage 3: TFRecordDataset (with Example parsing), TextLineDataset,
FixedLengthRecordDataset, list_files, from_generator, ignore_errors."""

import gzip
import logging
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.runtime.kernels.cpu.dataset_readers  # noqa: F401 - registers kernels
import tensorweave.runtime.kernels.cpu.dataset_transforms  # noqa: F401
import tensorweave.runtime.kernels.cpu.parsing  # noqa: F401
from tensorweave.data.transforms.experimental import ignore_errors
from tensorweave.data.transforms.readers import (
    FixedLengthRecordDataset,
    TextLineDataset,
    TFRecordDataset,
)
from tensorweave.formats import example as ex
from tensorweave.formats.tfrecord import TFRecordWriter, tf_record_iterator
from tensorweave.ops import parsing_ops as po
from tests.data_pipeline.helpers import Dataset, drain, values

DATA = Path(__file__).resolve().parent.parent / "data"
DIGITS = str(DATA / "digits.tfrecord")
CORRUPT = str(DATA / "digits_corrupt.tfrecord")
FEATURES = {"x": ex.FixedLenFeature([64], tf.float32), "y": ex.FixedLenFeature([1], tf.int64),
            "id": ex.FixedLenFeature([], tf.string)}


def _reference():
    out = []
    for r in tf_record_iterator(DIGITS):
        f = ex.Example.FromString(r).features.feature
        out.append((np.array(f["x"].float_list.value, np.float32),
                    int(f["y"].int64_list.value[0]), f["id"].bytes_list.value[0]))
    return out


def test_tfrecord_dataset_reads_all_records_in_order():
    got = [bytes(v) for v in values(TFRecordDataset(DIGITS))]
    assert got == list(tf_record_iterator(DIGITS))
    gz = [bytes(v) for v in values(TFRecordDataset(str(DATA / "digits.tfrecord.gz"), "GZIP"))]
    assert gz == got and len(got) == 200


def test_tfrecord_parse_single_example_pipeline_values():
    ds = TFRecordDataset(DIGITS).map(lambda r: po.parse_single_example(r, FEATURES))
    ds = ds.batch(64)
    assert ds.output_shapes["x"].as_list() == [None, 64]
    batches = values(ds)
    assert [len(b["y"]) for b in batches] == [64, 64, 64, 8]
    x = np.concatenate([b["x"] for b in batches])
    y = np.concatenate([b["y"] for b in batches]).ravel()
    ids = np.concatenate([b["id"] for b in batches])
    ref = _reference()
    np.testing.assert_array_equal(x, np.stack([r[0] for r in ref]))
    assert y.tolist() == [r[1] for r in ref]
    assert ids.tolist() == [b"digit-%d" % i for i in range(200)]


def test_several_files_in_order_and_parallel_reads(tmp_path):
    paths = []
    for k in range(3):
        p = str(tmp_path / f"f{k}.tfrecord")
        with TFRecordWriter(p) as w:
            for i in range(k + 2):
                w.write(b"%d-%d" % (k, i))
        paths.append(p)
    seq = [bytes(v) for v in values(TFRecordDataset(paths))]
    assert seq == [b"0-0", b"0-1", b"1-0", b"1-1", b"1-2", b"2-0", b"2-1", b"2-2", b"2-3"]
    par = [bytes(v) for v in values(TFRecordDataset(paths, num_parallel_reads=2))]
    # TF interleave order: an exhausted slot hands its turn on, then refills
    assert par == [b"0-0", b"1-0", b"0-1", b"1-1", b"1-2", b"2-0", b"2-1", b"2-2", b"2-3"]


def test_corrupt_record_raises_data_loss_without_ignore_errors():
    nx = TFRecordDataset(CORRUPT).make_one_shot_iterator().get_next()
    with tf.Session() as s:
        for _ in range(10):
            s.run(nx)
        with pytest.raises(tf.errors.DataLossError, match="record index 10"):
            s.run(nx)


def test_ignore_errors_skips_corrupt_records_and_counts(caplog):
    ds = TFRecordDataset(CORRUPT).map(lambda r: po.parse_single_example(r, FEATURES)["id"])
    ds = ds.apply(ignore_errors())
    nx = ds.make_one_shot_iterator().get_next()
    with caplog.at_level(logging.INFO, logger="tensorweave.data"), tf.Session() as s:
        got = drain(s, nx)
    expect = [b"digit-%d" % i for i in range(200) if i not in (10, 199)]
    assert [bytes(v) for v in got] == expect
    assert ds.skipped_count() == 2
    assert sum("skipped an element" in r.getMessage() for r in caplog.records) == 2


def test_ignore_errors_skips_failing_map_elements_and_missing_files(tmp_path):
    x = tf.placeholder(tf.float32, [None])
    def check(a):
        if a < 0:
            raise ValueError("negative")
        return a

    ds = Dataset.from_tensor_slices(x).map(
        lambda v: tf.py_func(check, [v], tf.float32)).apply(ignore_errors())
    it = ds.make_initializable_iterator()
    nx = it.get_next()
    with tf.Session() as s:
        s.run(it.initializer, feed_dict={x: [1, -1, 2, -3, 4]})
        assert [float(v) for v in drain(s, nx)] == [1, 2, 4]
    assert ds.skipped_count() == 2
    p = str(tmp_path / "ok.tfrecord")
    with TFRecordWriter(p) as w:
        w.write(b"fine")
    files = TFRecordDataset([str(tmp_path / "missing.tfrecord"), p]).apply(ignore_errors())
    assert [bytes(v) for v in values(files)] == [b"fine"]


def test_text_line_dataset(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt.gz"
    a.write_bytes(b"one\ntwo\r\nthree")
    with gzip.open(b, "wb") as f:
        f.write(b"four\n")
    assert [bytes(v) for v in values(TextLineDataset(str(a)))] == [b"one", b"two", b"three"]
    assert [bytes(v) for v in values(TextLineDataset(str(b), "GZIP"))] == [b"four"]


def test_fixed_length_record_dataset(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(b"HH" + b"abcdefghi" + b"F")
    ds = FixedLengthRecordDataset(str(p), 3, header_bytes=2, footer_bytes=1)
    assert [bytes(v) for v in values(ds)] == [b"abc", b"def", b"ghi"]


def test_list_files_sorted_and_seeded_shuffle(tmp_path):
    for n in ["b.rec", "a.rec", "c.rec", "skip.txt"]:
        (tmp_path / n).write_bytes(b"")
    pattern = str(tmp_path / "*.rec")
    plain = [bytes(v).decode() for v in values(Dataset.list_files(pattern, shuffle=False))]
    assert [Path(p).name for p in plain] == ["a.rec", "b.rec", "c.rec"]
    s1 = [bytes(v) for v in values(Dataset.list_files(pattern, seed=4))]
    s2 = [bytes(v) for v in values(Dataset.list_files(pattern, seed=4))]
    assert s1 == s2 and sorted(s1) == [p.encode() for p in plain]
    with pytest.raises(ValueError, match="No files matched"):
        Dataset.list_files(str(tmp_path / "*.none"))


def test_from_generator_structures_and_dtypes():
    def gen():
        for i in range(4):
            yield i, [i] * i

    ds = Dataset.from_generator(gen, (tf.int32, tf.float32), ([], [None]))
    assert ds.output_shapes[1].as_list() == [None]
    out = values(ds.map(lambda a, b: (a * 2, tf.reduce_sum(b) if hasattr(tf, "reduce_sum")
                                      else b)))
    assert [int(a) for a, _ in out] == [0, 2, 4, 6]
    assert out[1][0].dtype == np.int32
    again = values(Dataset.from_generator(gen, (tf.int32, tf.float32)))
    assert len(again) == 4 and again[3][1].dtype == np.float32
    d = values(Dataset.from_generator(lambda: iter([{"k": 1}]), {"k": tf.int64}))
    assert d == [{"k": 1}]


def test_from_generator_shape_mismatch_is_invalid_argument():
    ds = Dataset.from_generator(lambda: iter([[1, 2], [1, 2, 3]]), tf.int64, [2])
    nx = ds.make_one_shot_iterator().get_next()
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(nx), [1, 2])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \[3\]"):
            s.run(nx)


def test_training_style_pipeline_epochs_cover_every_record():
    ds = (TFRecordDataset(DIGITS).shuffle(50, seed=1)
          .map(lambda r: po.parse_single_example(r, FEATURES), num_parallel_calls=2)
          .batch(32).prefetch(2).repeat(2))
    out = values(ds)
    ids = np.concatenate([b["id"] for b in out]).tolist()
    assert len(ids) == 400 and len(out) == 14
    assert sorted(ids[:200]) == sorted(b"digit-%d" % i for i in range(200))
    assert sorted(ids[200:]) == sorted(ids[:200]) and ids[:200] != ids[200:]
    ref = {r[2]: r for r in _reference()}
    for b in out[:3]:
        for i, key in enumerate(b["id"]):
            np.testing.assert_array_equal(b["x"][i], ref[key][0])
            assert int(b["y"][i][0]) == ref[key][1]
