"""Readers, input producers and batching over real files (TF1's queue-based input)."""

import threading
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.data import readers as rd
from tensorweave.data.queues import FIFOQueue
from tensorweave.formats import example as ex
from tensorweave.formats.tfrecord import TFRecordOptions, tf_record_iterator
from tensorweave.framework.graph import GraphKeys, get_collection
from tensorweave.ops import parsing_ops as po
from tensorweave.runtime.kernels.cpu import queues as _q  # noqa: F401
from tensorweave.runtime.kernels.cpu import readers as _r  # noqa: F401
from tensorweave.training import input_producers as ip
from tensorweave.training.coordinator import Coordinator
from tensorweave.training.queue_runner import start_queue_runners

DATA = Path(__file__).resolve().parents[1] / "data"
DIGITS = {"x": ex.FixedLenFeature([64], tf.float32), "y": ex.FixedLenFeature([1], tf.int64),
          "id": ex.FixedLenFeature([], tf.string)}
T = tf.RunOptions(timeout_in_ms=10000)


def _runner_threads() -> list:
    return [t for t in threading.enumerate() if t.name.startswith("QueueRunnerThread")]


def _drain(sess, fetch) -> list:
    out = []
    try:
        while True:
            out.append(sess.run(fetch, options=T))
    except errors.OutOfRangeError:
        pass
    return out


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g
    assert not _runner_threads()


def test_tfrecord_pipeline_reads_exactly_200_then_out_of_range(graph):
    files = ip.string_input_producer([str(DATA / "digits.tfrecord")], num_epochs=1,
                                     shuffle=False)
    reader = rd.TFRecordReader()
    key, value = reader.read(files)
    f = po.parse_single_example(value, DIGITS)
    xb, yb, idb = ip.batch([f["x"], f["y"], f["id"]], batch_size=64,
                           allow_smaller_final_batch=True)
    assert xb.shape.as_list() == [None, 64]
    assert len(get_collection(GraphKeys.QUEUE_RUNNERS)) == 2
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = Coordinator()
        threads = start_queue_runners(sess, coord)
        batches = _drain(sess, [xb, yb, idb])
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
        assert sess.run(reader.num_records_produced()) == 200
    assert [len(b[0]) for b in batches] == [64, 64, 64, 8]
    ids = [i for b in batches for i in b[2].tolist()]
    assert ids == [b"digit-%d" % i for i in range(200)]
    records = list(tf_record_iterator(str(DATA / "digits.tfrecord")))
    first = ex.Example.FromString(records[0]).features.feature
    np.testing.assert_array_equal(batches[0][0][0], np.array(first["x"].float_list.value,
                                                             np.float32))
    assert batches[0][1].dtype == np.int64 and batches[0][1].shape == (64, 1)


def test_tfrecord_keys_and_gzip_options(graph):
    files = ip.string_input_producer([str(DATA / "digits.tfrecord.gz")], num_epochs=1,
                                     shuffle=False)
    reader = rd.TFRecordReader(options=TFRecordOptions("GZIP"))
    key, value = reader.read(files)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = Coordinator()
        threads = start_queue_runners(sess, coord)
        k0, v0 = sess.run([key, value], options=T)
        k1 = sess.run(key, options=T)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    path = str(DATA / "digits.tfrecord.gz")
    assert k0 == f"{path}:0".encode() and k1.startswith(f"{path}:".encode()) and k1 != k0
    assert v0 == next(iter(tf_record_iterator(str(DATA / "digits.tfrecord"))))


def test_num_epochs_requires_local_variables_initializer(graph):
    files = ip.string_input_producer(["a"], num_epochs=1)
    assert [v.op.name for v in tf.local_variables()] == ["input_producer/limit_epochs/epochs"]
    enq = get_collection(GraphKeys.QUEUE_RUNNERS)[0].enqueue_ops[0]
    with tf.Session() as sess:
        with pytest.raises(errors.FailedPreconditionError):
            sess.run(enq)
        sess.run(tf.local_variables_initializer())
        sess.run(enq)
        with pytest.raises(errors.OutOfRangeError):
            sess.run(enq)
        assert sess.run(files.dequeue()) == b"a"


def _write_lines(tmp_path, name, text) -> str:
    p = tmp_path / name
    p.write_bytes(text)
    return str(p)


def test_text_line_reader_skips_headers_and_reads_lines(graph, tmp_path):
    a = _write_lines(tmp_path, "a.csv", b"header\n1,2\n3,4\r\n")
    b = _write_lines(tmp_path, "b.csv", b"header\n5,6")
    files = ip.string_input_producer([a, b], num_epochs=1, shuffle=False)
    reader = rd.TextLineReader(skip_header_lines=1)
    key, value = reader.read(files)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = Coordinator()
        threads = start_queue_runners(sess, coord)
        got = _drain(sess, [key, value])
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
        assert sess.run(reader.num_work_units_completed()) == 2
        sess.run(reader.reset())
        assert sess.run(reader.num_records_produced()) == 0
    assert got == [[f"{a}:2".encode(), b"1,2"], [f"{a}:3".encode(), b"3,4"],
                   [f"{b}:2".encode(), b"5,6"]]


def test_whole_file_reader_and_read_up_to(graph, tmp_path):
    a = _write_lines(tmp_path, "a.txt", b"alpha")
    b = _write_lines(tmp_path, "b.txt", b"beta\n")
    q = FIFOQueue(5, tf.string, shapes=[[]])
    reader = rd.WholeFileReader()
    keys, values = reader.read_up_to(q, 5)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[a, b]]))
        sess.run(q.close())
        k, v = sess.run([keys, values], options=T)
        assert k.tolist() == [a.encode(), b.encode()] and v.tolist() == [b"alpha", b"beta\n"]
        with pytest.raises(errors.OutOfRangeError):
            sess.run(keys, options=T)


def test_shuffle_batch_over_range_producer(graph):
    idx = ip.range_input_producer(20, num_epochs=1, shuffle=False).dequeue()
    xb = ip.shuffle_batch([idx * 10], batch_size=5, capacity=15, min_after_dequeue=5,
                          seed=1, allow_smaller_final_batch=True)
    assert xb.op.name == "shuffle_batch"
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = Coordinator()
        threads = start_queue_runners(sess, coord)
        got = [v for b in _drain(sess, xb) for v in b.tolist()]
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    assert sorted(got) == [10 * i for i in range(20)]
    assert got != sorted(got)


def test_slice_input_producer_and_batch_join(graph):
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    x, y = ip.slice_input_producer([data, np.arange(6)], num_epochs=2, shuffle=False)
    out = ip.batch_join([[x, y], [x, y]], batch_size=4, allow_smaller_final_batch=True)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = Coordinator()
        threads = start_queue_runners(sess, coord)
        batches = _drain(sess, out)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    ys = [v for b in batches for v in b[1].tolist()]
    assert sorted(ys) == sorted(list(range(6)) * 2)
    for b in batches:
        np.testing.assert_array_equal(b[0], data[b[1]])


def test_batch_dynamic_pad_and_dict(graph):
    v = tf.placeholder_with_default(np.array([1, 2, 3], np.int32), [None])
    out = ip.batch({"v": v}, batch_size=2, dynamic_pad=True)
    assert set(out) == {"v"} and out["v"].shape.as_list() == [2, None]
    with tf.Session() as sess:
        coord = Coordinator()
        threads = start_queue_runners(sess, coord)
        got = sess.run(out, options=T)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    np.testing.assert_array_equal(got["v"], [[1, 2, 3], [1, 2, 3]])


def test_shuffle_batch_rejects_small_capacity(graph):
    with pytest.raises(ValueError, match="must be bigger than min_after_dequeue"):
        ip.shuffle_batch([tf.constant(1)], 2, capacity=5, min_after_dequeue=5)


def test_op_names_match_tf1(graph):
    """Names written by TF 2.21 (compat.v1) for the same pipeline (checkpoints rely on them)."""
    files = ip.string_input_producer(["f"], num_epochs=1, shuffle=False)
    k, _ = rd.TFRecordReader().read(files)
    kb = ip.batch([k], 64, allow_smaller_final_batch=True)
    q = FIFOQueue(3, [tf.int32])
    e, dm, c, s = q.enqueue(1), q.dequeue_many(2), q.close(), q.size()
    names = {o.name for o in graph.get_operations()}
    assert {"input_producer/limit_epochs/epochs", "input_producer/limit_epochs/CountUpTo",
            "input_producer", "input_producer/input_producer_EnqueueMany",
            "input_producer/input_producer_Close", "input_producer/input_producer_Close_1",
            "input_producer/fraction_of_32_full", "TFRecordReaderV2", "ReaderReadV2",
            "batch/Const", "batch/fifo_queue", "batch/fifo_queue_enqueue", "batch/n",
            "batch/fraction_of_32_full", "fifo_queue_enqueue/component_0",
            "fifo_queue_DequeueMany/n"} <= names
    assert kb.name == "batch:0" and kb.shape.as_list() == [None]
    assert (e.name, dm.op.name, c.name, s.op.name) == (
        "fifo_queue_enqueue", "fifo_queue_DequeueMany", "fifo_queue_Close", "fifo_queue_Size")


def test_shuffle_batch_many_threads_share_one_reader(graph):
    files = ip.string_input_producer([str(DATA / "digits.tfrecord")], num_epochs=1, seed=3)
    _, value = rd.TFRecordReader().read(files)
    ids = po.parse_single_example(value, DIGITS)["id"]
    idb = ip.shuffle_batch([ids], batch_size=30, capacity=50, min_after_dequeue=10,
                           num_threads=4, seed=5, allow_smaller_final_batch=True)
    assert len(get_collection(GraphKeys.QUEUE_RUNNERS)[1].enqueue_ops) == 4
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = Coordinator()
        threads = start_queue_runners(sess, coord)
        got = [i for b in _drain(sess, idb) for i in b.tolist()]
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    assert sorted(got) == sorted(b"digit-%d" % i for i in range(200))
    assert got != [b"digit-%d" % i for i in range(200)]
