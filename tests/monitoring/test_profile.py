"""The per-op profile: sums, sorting, percentages, the table, and real session steps."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.monitoring.profile import OpProfile, profile
from tensorweave.proto import step_stats_pb2


def _step(nodes):
    ss = step_stats_pb2.StepStats()
    dev = ss.dev_stats.add(device="/cpu:0")
    for name, op, micros in nodes:
        dev.node_stats.add(node_name=name, all_end_rel_micros=micros,
                           timeline_label=f"{name} = {op}(a)")
    return ss


STEPS = [
    _step([("mm1", "MatMul", 300), ("mm2", "MatMul", 100), ("relu", "Relu", 50),
           ("c", "Const", 0)]),
    _step([("mm1", "MatMul", 500), ("mm2", "MatMul", 100), ("relu", "Relu", 150)]),
]


def test_by_op_type_sums_counts_and_sorts():
    p = profile(STEPS)
    rows = p.by_op_type()
    assert p.steps == 2 and p.total_micros == 1200
    assert [(r.name, r.count, r.total_micros, r.nodes) for r in rows] == [
        ("MatMul", 4, 1000, 2), ("Relu", 2, 200, 1), ("Const", 1, 0, 1)]
    assert rows[0].mean_micros == 250.0
    assert rows[0].percent == pytest.approx(100 * 1000 / 1200)
    assert rows[-1].cumulative_percent == pytest.approx(100.0)


def test_by_node():
    rows = profile(STEPS).by_node()
    assert [(r.name, r.op, r.count, r.total_micros) for r in rows] == [
        ("mm1", "MatMul", 2, 800), ("mm2", "MatMul", 2, 200), ("relu", "Relu", 2, 200),
        ("c", "Const", 1, 0)]
    assert rows[1].mean_micros == 100.0


def test_table_and_data():
    p = profile(STEPS)
    text = p.table(max_rows=2)
    lines = text.splitlines()
    assert lines[0].startswith("Profile over 2 step(s), 1.20ms")
    assert lines[1].split()[:2] == ["op", "type"]
    assert lines[2].split()[:4] == ["MatMul", "2", "4", "1.00ms"] and "83.3%" in lines[2]
    assert len(lines) == 4
    node_table = p.table(by="node")
    assert node_table.splitlines()[2].split()[:2] == ["mm1", "MatMul"]
    data = p.to_dict(by="node")
    assert data["steps"] == 2 and data["rows"][0]["name"] == "mm1"
    with pytest.raises(ValueError, match="op_type"):
        p.table(by="device")


def test_profile_of_real_session_steps():
    x = tf.placeholder(tf.float32, [8, 16])
    w = tf.constant(np.ones((16, 4), np.float32))
    y = tf.matmul(x, w) + 1.0
    p = OpProfile()
    with tf.Session() as sess:
        for _ in range(3):
            md = tf.RunMetadata()
            sess.run(y, {x: np.ones((8, 16), np.float32)},
                     options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=md)
            p.add(md)
    by_type = {r.name: r for r in p.by_op_type()}
    assert p.steps == 3
    assert by_type["MatMul"].count == 3
    assert sum(r.total_micros for r in by_type.values()) == p.total_micros
