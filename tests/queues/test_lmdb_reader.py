"""tf.LMDBReader (TF1's Ref(string)-handle reader, read through the V1 ReaderRead family and
FakeQueue) on an LMDB file written by tests/queues/make_lmdb_expected.py. TF 2.21 no longer
reads LMDB, so the expectations are TF1's documented ones: records in key order, key = the
database key, value = its value, one work unit per file."""

from __future__ import annotations

from pathlib import Path

import pytest

import tensorweave as tf

PATH = str(Path(__file__).resolve().parents[1] / "data" / "lmdb" / "data.mdb")
WANT = [(f"key{i:02d}".encode(), bytes([i]) * (i + 1)) for i in sorted((3, 1, 10, 7, 0))]
T = tf.RunOptions(timeout_in_ms=10000)


def _start(sess):
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    return coord, tf.train.start_queue_runners(sess, coord)


def test_reads_records_in_key_order_through_v1_ops():
    q = tf.train.string_input_producer([PATH, PATH], num_epochs=1, shuffle=False)
    reader = tf.LMDBReader()
    assert reader.reader_ref.op.type == "LMDBReader"
    assert reader.reader_ref.dtype == tf.string._as_ref
    key, value = reader.read(q)
    assert key.op.type == "ReaderRead"
    with tf.Session() as sess:
        coord, threads = _start(sess)
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                got.append(tuple(sess.run([key, value], options=T)))
        assert sess.run(reader.num_records_produced()) == 2 * len(WANT)
        assert sess.run(reader.num_work_units_completed()) == 2
        coord.request_stop()
        coord.join(threads)
    assert got == WANT + WANT


def test_read_up_to_and_reset():
    q = tf.train.string_input_producer([PATH], num_epochs=1, shuffle=False)
    reader = tf.LMDBReader()
    keys, values = reader.read_up_to(q, 3)
    with tf.Session() as sess:
        coord, threads = _start(sess)
        k, v = sess.run([keys, values], options=T)
        assert list(zip(k, v)) == WANT[:3]
        sess.run(reader.reset())
        assert sess.run(reader.num_records_produced()) == 0
        coord.request_stop()
        coord.join(threads)


def test_a_file_that_is_not_lmdb_is_an_invalid_argument(tmp_path):
    bad = tmp_path / "x.mdb"
    bad.write_bytes(b"not lmdb" * 100)
    q = tf.train.string_input_producer([str(bad)], num_epochs=1)
    key, _ = tf.LMDBReader().read(q)
    with tf.Session() as sess:
        coord, threads = _start(sess)
        with pytest.raises(tf.errors.InvalidArgumentError, match="LMDBReader: cannot open"):
            sess.run(key, options=T)
        coord.request_stop()
        coord.join(threads)
