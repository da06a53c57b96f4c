"""Chrome-trace timelines: equal to TensorFlow's for the same StepStats; real session traces."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.monitoring.timeline import Timeline, parse_op_label
from tensorweave.proto import step_stats_pb2

TF = json.loads((Path(__file__).parent / "data" / "tf_expected.json").read_text())["timeline"]


def _step_stats(description) -> step_stats_pb2.StepStats:
    """The StepStats make_expected.py built with TF's protos, with ours."""
    ss = step_stats_pb2.StepStats()
    for dev in description:
        ds = ss.dev_stats.add(device=dev["device"])
        for n in dev["nodes"]:
            ns = ds.node_stats.add(node_name=n["name"], all_start_micros=n["start"],
                                   all_end_rel_micros=n["end"], timeline_label=n["label"])
            for slot, (nbytes, alloc) in enumerate(n["outputs"]):
                o = ns.output.add(slot=slot)
                o.tensor_description.dtype = 1
                o.tensor_description.shape.dim.add(size=nbytes // 4)
                ad = o.tensor_description.allocation_description
                ad.requested_bytes = ad.allocated_bytes = nbytes
                ad.allocator_name = alloc
    return ss


@pytest.mark.parametrize("dataflow", [True, False])
@pytest.mark.parametrize("memory", [True, False])
def test_trace_equals_tensorflows(dataflow, memory):
    ss = _step_stats(TF["step_stats"])
    got = json.loads(Timeline(ss).generate_chrome_trace_format(show_dataflow=dataflow,
                                                               show_memory=memory))
    assert got == TF[f"dataflow={dataflow},memory={memory}"]


def test_trace_structure_lanes_flows_and_memory():
    ss = _step_stats(TF["step_stats"])
    tl = Timeline(ss)
    analysis = tl.analyze_step_stats(show_dataflow=True, show_memory=True)
    events = json.loads(analysis.chrome_trace.format_to_string())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    assert names[0] == "Allocators" and names[1].endswith("CPU:0 Compute")
    ops = {e["args"]["name"]: e for e in events if e["ph"] == "X"}
    # b overlaps a (lane 1); mm starts after a ended, so it reuses lane 0
    assert (ops["a"]["tid"], ops["b"]["tid"], ops["mm"]["tid"]) == (0, 1, 0)
    assert ops["mm"]["args"] == {"name": "mm", "op": "MatMul", "input0": "a", "input1": "b"}
    flows = [e for e in events if e["ph"] in "st"]
    # b/_3 (partition-renamed) flows from b; add -> relu crosses devices
    assert {(e["name"], e["ph"]) for e in flows} >= {("b", "s"), ("b", "t"), ("add", "s")}
    assert all(e["cat"] == "DataFlow" for e in flows)
    peak = analysis.allocator_maximums["cpu"]
    assert peak.num_bytes == 40 + 64 + 16 + 8 and peak.tensors == {"a", "b", "mm", "mm:1"}
    assert ss.dev_stats[0].node_stats[1].thread_id == 0  # the caller's proto is untouched


def test_accepts_run_metadata_and_saves(tmp_path):
    md = step_stats_pb2.StepStats()
    md.dev_stats.add(device="/cpu:0").node_stats.add(node_name="n", timeline_label="n = NoOp()")
    run_md = tf.RunMetadata()
    run_md.step_stats.CopyFrom(md)
    path = Timeline(run_md).save(tmp_path / "t.json")
    events = json.loads(Path(path).read_text())["traceEvents"]
    assert [e["name"] for e in events if e["ph"] == "X"] == ["NoOp"]


def test_parse_op_label():
    assert parse_op_label("a/b = MatMul(x, y:1)") == ("a/b", "MatMul", ["x", "y:1"])
    assert parse_op_label("c = Const()") == ("c", "Const", [])
    assert parse_op_label("garbage") == ("unknown", "unknown", [])


def test_trace_of_a_real_two_device_step():
    x = tf.placeholder(tf.float32, [3, 4], name="x")
    with tf.device("/cpu:0"):
        h = tf.matmul(x, tf.constant(np.ones((4, 5), np.float32)), name="h")
    with tf.device("/cpu:1"):
        y = tf.add(h, 1.0, name="y")
    md = tf.RunMetadata()
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Session(config=config) as sess:
        sess.run(y, {x: np.ones((3, 4), np.float32)},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
    trace = json.loads(Timeline(md.step_stats).generate_chrome_trace_format(show_memory=True))
    events = trace["traceEvents"]
    procs = [e["args"]["name"] for e in events if e["ph"] == "M"]
    assert procs[0] == "Allocators" and len(procs) == 1 + 2 * len(md.step_stats.dev_stats)
    op_names = {e["args"]["name"] for e in events if e["ph"] == "X"}
    assert {"h", "y"} <= op_names
    assert all(e["dur"] >= 0 and isinstance(e["ts"], int) for e in events if e["ph"] == "X")
    assert any(e["ph"] == "C" and e["cat"] == "Memory" for e in events)


def test_run_traced_writes_run_metadata_and_trace(tmp_path):
    from tensorweave.formats.events import summary_iterator
    from tensorweave.monitoring.summary import FileWriter
    from tensorweave.monitoring.timeline import run_traced

    x = tf.placeholder(tf.float32, [2])
    y = x * 3.0
    with tf.Session() as sess, FileWriter(tmp_path / "logs") as writer:
        out, md = run_traced(sess, y, {x: [1.0, 2.0]}, writer=writer, global_step=7,
                             trace_path=tmp_path / "trace.json")
        path = writer.event_writer.path
    np.testing.assert_array_equal(out, [3.0, 6.0])
    assert md.step_stats.dev_stats
    tagged = [e for e in summary_iterator(path) if e.HasField("tagged_run_metadata")]
    assert [(e.tagged_run_metadata.tag, e.step) for e in tagged] == [("traced_step", 7)]
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    assert any(e["ph"] == "X" and e["args"]["name"] == y.op.name for e in events)
