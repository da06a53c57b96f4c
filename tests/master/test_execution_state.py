"""`explain` and `Session.run` get their partitions from the same `GraphExecutionState.build`:
the partitions a session registers (RunMetadata.partition_graphs) are the ones `explain`
shows as its last stage, on 1, 2 and 4 devices and over a two-task cluster."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import ir
from tensorweave.master.execution_state import GraphExecutionState, Signature
from tensorweave.master.explain import explain
from tensorweave.master.options import BuildOptions, SessionOptions
from tensorweave.proto.convert import graph_from_proto


def _model(n_devices: int):
    """A little model spread over `n_devices` CPUs: x -> per-device matmul -> sum."""
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    outs = []
    for d in range(n_devices):
        with tf.device(f"/cpu:{d}"):
            w = tf.constant(np.eye(2, dtype=np.float32) * (d + 1), name=f"w{d}")
            outs.append(tf.matmul(x, w) + 0.0)
    y = tf.add_n(outs) if len(outs) > 1 else outs[0]
    return x, tf.identity(y, name="y")


def _form(graphs) -> dict[str, list[tuple]]:
    """{device: sorted (name, op, device, inputs)} — a partition set's comparable form."""
    out: dict[str, list[tuple]] = {}
    for g in graphs:
        for n in g.nodes:
            out.setdefault(n.device, []).append((n.name, n.op, n.device, tuple(n.inputs)))
    return {d: sorted(v) for d, v in out.items()}


def _session_partitions(sess, fetch, feeds):
    opts = tf.RunOptions(output_partition_graphs=True)
    meta = tf.RunMetadata()
    sess.run(fetch, feeds, options=opts, run_metadata=meta)
    return [graph_from_proto(g) for g in meta.partition_graphs]


@pytest.mark.parametrize("n", [1, 2, 4])
def test_explain_shows_the_partitions_a_session_runs(n):
    config = tf.ConfigProto(device_count={"CPU": n})
    with tf.Graph().as_default() as g:
        x, y = _model(n)
        feeds = {x: np.ones((2, 2), np.float32)}
        with tf.Session(config=config) as s:
            ran = _session_partitions(s, y, feeds)
        shown = explain(y, feeds, graph=g, config=config)
    last = shown.stages[-1]
    assert last.name == "partitioned"
    assert len(last.graphs) == n
    assert _form(ran) == _form(last.graphs.values())


@pytest.mark.multiprocess
def test_explain_shows_the_partitions_a_cluster_session_runs():
    from tensorweave.distributed.local_cluster import LocalCluster

    with LocalCluster(ps=1, workers=1) as c, tf.Graph().as_default() as g:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="v")
        x = tf.placeholder(tf.float32, [2, 2], name="x")
        with tf.device("/job:worker/task:0"):
            y = tf.identity(tf.matmul(x, v), name="y")
        feeds = {x: np.ones((2, 2), np.float32)}
        with tf.Session(c.target("worker", 0)) as s:
            s.run(v.initializer)
            devices = [d.name for d in s.list_devices()]
            ran = _session_partitions(s, y, feeds)
        shown = explain(y, feeds, graph=g, devices=devices)
    parts = shown.stages[-1].graphs
    assert sorted(parts) == sorted({n.device for gr in ran for n in gr.nodes})
    assert any("/job:ps/" in d for d in parts) and any("/job:worker/" in d for d in parts)
    assert _form(ran) == _form(parts.values())


def test_build_places_once_and_keeps_placement_sticky():
    """A node placed for one signature keeps its device when the graph grows."""
    with tf.Graph().as_default() as g:
        a = tf.constant(1.0, name="a")
        tf.identity(a, name="b")
    state = GraphExecutionState(g._as_ir())
    opts = BuildOptions.from_config({"device_count": {"CPU": 2}})
    first = state.build(Signature.of([], ["b:0"], []), opts)
    where = dict(state.placement.devices)
    state.extend(ir.GraphDef(nodes=[ir.NodeDef("c", "Identity", ["a"], "/cpu:1",
                                               {"T": tf.float32})]))
    second = state.build(Signature.of([], ["c:0"], []), opts)
    assert {k: state.placement.devices[k] for k in where} == where
    assert first.client_device == opts.devices[0] == second.devices()[0]


def test_session_options_parse_every_config_form_the_same():
    proto = tf.ConfigProto(device_count={"CPU": 3}, allow_soft_placement=True,
                           operation_timeout_in_ms=1500)
    proto.graph_options.rewrite_options.constant_folding = 2  # OFF
    from_proto = SessionOptions.from_config(proto)
    assert from_proto == SessionOptions.from_config(from_proto.to_dict())
    assert from_proto.cpus == 3 and from_proto.soft_placement
    assert from_proto.timeout_s == 1.5
    assert "constant_folding" in from_proto.disabled_passes
    build = BuildOptions.from_config(proto)
    cpus = [d for d in build.devices if "/device:CPU:" in d]  # XLA_CPU:0 too, with jax
    assert len(cpus) == 3 and build.client_device.endswith("CPU:0")
    with pytest.raises(tf.errors.InvalidArgumentError, match="device_count"):
        SessionOptions.from_config({"device_count": {"CPU": 1000}})
