"""FileWriter and event files: TF's framing and naming, the writer thread, disk failures."""

from __future__ import annotations

import errno
import logging
import os
import re
import shutil
import socket
import struct
import threading
import time

import google_crc32c
import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.formats import events as event_file
from tensorweave.formats.events import (
    EventFileWriter,
    frame_record,
    masked_crc32c,
    read_records,
    summary_iterator,
)
from tensorweave.monitoring import summary as S
from tensorweave.proto import graph_pb2


def _events(logdir):
    files = sorted(p for p in os.listdir(logdir) if "tfevents" in p)
    return {f: list(summary_iterator(os.path.join(logdir, f))) for f in files}


def _only_events(logdir):
    (events,) = _events(logdir).values()
    return events


def test_masked_crc_and_framing_follow_tfrecord():
    # mask(crc) = rotr15(crc) + 0xa282ead8; check value of CRC-32C is 0xE3069283
    assert google_crc32c.value(b"123456789") == 0xE3069283
    crc = 0xE3069283
    assert masked_crc32c(b"123456789") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) % 2**32
    rec = frame_record(b"abc")
    assert rec[:8] == struct.pack("<Q", 3) and rec[12:15] == b"abc"
    assert struct.unpack("<I", rec[8:12])[0] == masked_crc32c(rec[:8])
    assert struct.unpack("<I", rec[15:])[0] == masked_crc32c(b"abc")


def test_file_name_version_record_and_summaries(tmp_path):
    with S.FileWriter(tmp_path) as w:
        w.add_summary(S.Summary(value=[S.Summary.Value(tag="a", simple_value=1.5)]), 3)
        w.add_summary(S.Summary(value=[S.Summary.Value(tag="a", simple_value=2.5)])
                      .SerializeToString(), global_step=4)
    (name,) = os.listdir(tmp_path)
    m = re.fullmatch(r"events\.out\.tfevents\.(\d{10})\.(.+)\.(\d+)\.(\d+)", name)
    assert m and m.group(2) == socket.gethostname() and int(m.group(3)) == os.getpid()
    assert abs(int(m.group(1)) - time.time()) < 60
    events = _only_events(tmp_path)
    assert events[0].file_version == "brain.Event:2" and events[0].wall_time > 0
    assert [(e.step, e.summary.value[0].simple_value) for e in events[1:]] == [(3, 1.5),
                                                                               (4, 2.5)]


def test_session_output_graph_and_meta_graph(tmp_path):
    x = tf.placeholder(tf.float32, [], name="x")
    s = S.scalar("loss", x * 2.0)
    with tf.Session() as sess, S.FileWriter(tmp_path, sess.graph) as w:
        w.add_summary(sess.run(s, {x: 3.0}), 1)
    events = _only_events(tmp_path)
    graph = graph_pb2.GraphDef.FromString(events[1].graph_def)
    assert {"x", "loss", "mul"} <= {n.name for n in graph.node}
    assert "_output_shapes" in next(n for n in graph.node if n.name == "x").attr
    assert events[2].HasField("meta_graph_def")
    assert events[3].summary.value[0].simple_value == 6.0


def test_add_graph_type_errors(tmp_path):
    with S.FileWriter(tmp_path) as w:
        with pytest.raises(TypeError, match="instance of `Graph`"):
            w.add_graph("not a graph")
        with pytest.raises(ValueError, match="only graph, or graph_def"):
            w.add_graph(tf.get_default_graph(), graph_def=graph_pb2.GraphDef())
        w.add_graph(graph_pb2.GraphDef(node=[{"name": "n", "op": "NoOp"}]))
    assert graph_pb2.GraphDef.FromString(_only_events(tmp_path)[1].graph_def).node[0].name == "n"


def test_run_metadata_session_log_and_duplicate_tag(tmp_path):
    md = tf.RunMetadata()
    md.step_stats.dev_stats.add(device="/cpu:0")
    with S.FileWriter(tmp_path) as w:
        w.add_run_metadata(md, "step1", global_step=1)
        with pytest.raises(ValueError, match="already used"):
            w.add_run_metadata(md, "step1")
        w.add_session_log(S.SessionLog(status=S.SessionLog.START), 5)
        w.add_event(S.Event(step=9, wall_time=1.0))
    events = _only_events(tmp_path)
    assert events[1].tagged_run_metadata.tag == "step1" and events[1].step == 1
    got = tf.RunMetadata.FromString(events[1].tagged_run_metadata.run_metadata)
    assert got.step_stats.dev_stats[0].device == "/cpu:0"
    assert events[2].session_log.status == S.SessionLog.START and events[2].step == 5
    assert (events[3].step, events[3].wall_time) == (9, 1.0)


def test_metadata_kept_only_on_first_value_of_a_tag(tmp_path):
    meta = S.SummaryMetadata(plugin_data=S.SummaryMetadata.PluginData(plugin_name="text"))
    summ = S.Summary(value=[S.Summary.Value(tag="t", metadata=meta)])
    with S.FileWriter(tmp_path) as w:
        w.add_summary(summ, 1)
        w.add_summary(summ, 2)
    events = _only_events(tmp_path)
    assert events[1].summary.value[0].HasField("metadata")
    assert not events[2].summary.value[0].HasField("metadata")
    assert summ.value[0].HasField("metadata")  # the caller's proto is not modified


def test_reopen_in_the_same_second_never_overwrites(tmp_path):
    w = S.FileWriter(tmp_path)
    w.add_summary(S.Summary(value=[S.Summary.Value(tag="a", simple_value=1)]), 1)
    w.close()
    w.reopen()
    w.add_summary(S.Summary(value=[S.Summary.Value(tag="a", simple_value=2)]), 2)
    w.close()
    w2 = S.FileWriter(tmp_path)
    w2.close()
    files = _events(tmp_path)
    assert len(files) == 3
    steps = sorted(e.step for events in files.values() for e in events if e.HasField("summary"))
    assert steps == [1, 2]
    assert all(events[0].file_version == "brain.Event:2" for events in files.values())


def test_closed_writer_warns_and_drops(tmp_path):
    w = S.FileWriter(tmp_path)
    w.close()
    with pytest.warns(UserWarning, match="closed FileWriter"):
        w.add_summary(S.Summary(value=[S.Summary.Value(tag="a", simple_value=1)]))
    assert len(_only_events(tmp_path)) == 1


def test_get_logdir_and_flush_makes_events_visible(tmp_path):
    w = S.FileWriter(tmp_path / "sub", flush_secs=1000)
    assert w.get_logdir() == str(tmp_path / "sub")
    w.add_summary(S.Summary(value=[S.Summary.Value(tag="a", simple_value=1)]), 7)
    w.flush()
    assert [e.step for e in _only_events(tmp_path / "sub")] == [0, 7]
    w.close()


def test_writer_thread_flushes_every_flush_secs_without_new_events(tmp_path):
    w = S.FileWriter(tmp_path, flush_secs=0.2)
    w.add_summary(S.Summary(value=[S.Summary.Value(tag="a", simple_value=1)]), 1)
    deadline = time.monotonic() + 5

    def visible():  # the file appears when the writer thread opens it
        try:
            return sum(len(ev) for ev in _events(tmp_path).values())
        except errors.DataLossError:  # caught mid-write
            return 0

    while time.monotonic() < deadline and visible() < 2:
        time.sleep(0.05)
    assert visible() == 2
    w.close()


def test_read_records_reports_corruption(tmp_path):
    path = tmp_path / "f.tfevents"
    data = frame_record(b"hello") + frame_record(b"world")
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    it = read_records(path)
    assert next(it) == b"hello"
    with pytest.raises(errors.DataLossError, match="corrupted record at 21"):
        next(it)
    path.write_bytes(data[:30])
    with pytest.raises(errors.DataLossError, match="truncated record at 21"):
        list(read_records(path))


# -- failures never reach the training loop ------------------------------------------------------
def _summ(step):
    return S.Summary(value=[S.Summary.Value(tag="loss", simple_value=float(step))])


def test_removed_directory_is_logged_once_and_writing_resumes(tmp_path, caplog):
    logdir = tmp_path / "logs"
    w = EventFileWriter(logdir, flush_secs=0.05, retry_secs=0.05)
    w.add_event(S.Event(step=1, summary=_summ(1)))
    w.flush()
    first = w.path
    shutil.rmtree(logdir)
    with caplog.at_level(logging.ERROR, logger="tensorweave.summary"):
        for step in range(2, 40):
            w.add_event(S.Event(step=step, summary=_summ(step)))   # never raises
            w.flush()
            time.sleep(0.01)
    w.close()
    errors_logged = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors_logged) == 1 and "deleted" in errors_logged[0].getMessage()
    assert w.path != first and os.path.exists(w.path)
    steps = [e.step for e in summary_iterator(w.path) if e.HasField("summary")]
    assert steps and steps[-1] == 39 and steps == sorted(steps)


def test_disk_full_is_logged_once_and_never_raises(tmp_path, caplog, monkeypatch):
    w = EventFileWriter(tmp_path, flush_secs=1000, retry_secs=1000)
    w.flush()

    class Full:
        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        flush = close = fileno = lambda self: (_ for _ in ()).throw(  # noqa: E731
            OSError(errno.ENOSPC, "No space left on device"))

    w._file._fh.close()
    w._file._fh = Full()
    with caplog.at_level(logging.ERROR, logger="tensorweave.summary"):
        for step in range(20):
            w.add_event(S.Event(step=step))
        w.flush()
        w.close()
    msgs = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(msgs) == 1 and "No space left" in msgs[0]
    assert w.dropped_events == 20


def test_unwritable_logdir_does_not_raise(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with caplog.at_level(logging.ERROR, logger="tensorweave.summary"):
        with S.FileWriter(blocker / "logs") as w:   # a path under a file cannot be created
            for step in range(5):
                w.add_summary(_summ(step), step)
            w.flush()
    assert sum(r.levelno == logging.ERROR for r in caplog.records) == 1


def test_a_stuck_disk_does_not_block_training(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(event_file, "_PUT_TIMEOUT_S", 0.2)
    release = threading.Event()
    w = EventFileWriter(tmp_path, max_queue=2)
    w.flush()
    real_write = w._file.write
    w._file.write = lambda data: (release.wait(10), real_write(data))
    start = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="tensorweave.summary"):
        for step in range(50):
            w.add_event(S.Event(step=step))
    elapsed = time.monotonic() - start
    assert elapsed < 2.0, elapsed   # one bounded wait, then drops
    assert w.dropped_events >= 40
    assert any("not keeping up" in r.getMessage() for r in caplog.records)
    release.set()
    w.close()


def test_file_writer_cache(tmp_path):
    a = S.FileWriterCache.get(str(tmp_path))
    assert S.FileWriterCache.get(str(tmp_path)) is a
    S.FileWriterCache.clear()
    assert S.FileWriterCache.get(str(tmp_path)) is not a
    S.FileWriterCache.clear()
    assert all(events[1].HasField("graph_def") for events in _events(tmp_path).values())


def test_many_threads_write_concurrently(tmp_path):
    w = S.FileWriter(tmp_path, max_queue=4)

    def work(k):
        for i in range(50):
            w.add_summary(S.Summary(value=[S.Summary.Value(tag=f"t{k}", simple_value=i)]), i)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    w.close()
    events = _only_events(tmp_path)[1:]
    assert len(events) == 200
    for k in range(4):
        vals = [e.summary.value[0].simple_value for e in events if e.summary.value[0].tag ==
                f"t{k}"]
        np.testing.assert_array_equal(vals, np.arange(50))
