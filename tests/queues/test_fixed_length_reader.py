"""FixedLengthRecordReader and FixedLengthRecordDataset against what TensorFlow reads from the
same files (tests/queues/make_fixed_length_expected.py → tests/data/fixed_length*)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf

DATA = Path(__file__).resolve().parents[1] / "data"
E = np.load(DATA / "fixed_length_expected.npz")
CONFIGS = {  # as make_fixed_length_expected.py: record, header, footer, hop, encoding
    "plain": (5, 0, 0, 0, ""), "header_footer": (4, 3, 2, 0, ""), "hop": (6, 2, 1, 4, ""),
    "gzip": (5, 1, 2, 0, "GZIP"), "zlib": (5, 0, 3, 0, "ZLIB"),
}
T = tf.RunOptions(timeout_in_ms=10000)


def _path(name):
    return str(DATA / "fixed_length" / f"{name}.bin")


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_reader_reads_what_tensorflow_reads(name):
    rec, head, foot, hop, enc = CONFIGS[name]
    with tf.Graph().as_default(), tf.Session() as sess:
        q = tf.train.string_input_producer([_path(name)], num_epochs=1, shuffle=False)
        reader = tf.FixedLengthRecordReader(rec, header_bytes=head, footer_bytes=foot,
                                            hop_bytes=hop, encoding=enc or None)
        key, value = reader.read(q)
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                got.append(sess.run([key, value], options=T))
        coord.request_stop()
        coord.join(threads)
        assert sess.run(reader.num_records_produced()) == len(E[f"{name}_keys"])
    assert [k for k, _ in got] == [f"{_path(name)}:{i}".encode() for i in E[f"{name}_keys"]]
    assert [v for _, v in got] == list(E[f"{name}_values"])


@pytest.mark.parametrize("name", [n for n, c in sorted(CONFIGS.items()) if not c[3]])
def test_dataset_matches_tensorflow_including_its_errors(name):
    rec, head, foot, _, enc = CONFIGS[name]
    ds = tf.data.FixedLengthRecordDataset(_path(name), rec, header_bytes=head, footer_bytes=foot,
                                          compression_type=enc or None)
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    got, error = [], ""
    with tf.Session() as sess:
        try:
            while True:
                got.append(sess.run(nxt, options=T))
        except tf.errors.OutOfRangeError:
            pass
        except tf.errors.OpError as e:
            error = f"{type(e).__name__}: {e.message}"
    assert got == list(E[f"{name}_dataset"])
    want = str(E[f"{name}_dataset_error"])
    if want:
        tf_class, tf_line = want.split(":")[0], [ln for ln in want.splitlines()
                                                 if ln.startswith("Excluding")][0]
        # NOTE: TF's message names the file where the fixture was written; ours, where it is
        tf_line = re.sub(r'"[^"]*tests/data/fixed_length/', f'"{DATA / "fixed_length"}/', tf_line)
        assert error.startswith(tf_class) and tf_line in error, error
    else:
        assert error == ""


def test_reader_op_def_and_bad_layout():
    g = tf.Graph()
    with g.as_default():
        r = tf.FixedLengthRecordReader(8, header_bytes=1, hop_bytes=2, encoding="GZIP")
        op = r.reader_ref.op
        assert op.type == "FixedLengthRecordReaderV2"
        assert [op.get_attr(a) for a in ("header_bytes", "record_bytes", "footer_bytes",
                                         "hop_bytes")] == [1, 8, 0, 2]
        assert op.get_attr("encoding") in ("GZIP", b"GZIP")
        bad = tf.FixedLengthRecordReader(0)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="record_bytes must be > 0"):
            sess.run(bad.num_records_produced())
