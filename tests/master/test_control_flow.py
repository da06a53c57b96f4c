"""Control loops for split while loops (master/control_flow.py): the partitions' structure."""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave import errors, ir
from tensorweave.master.control_flow import add_control_flow, find_frames
from tensorweave.master.execution_state import GraphExecutionState, Signature
from tensorweave.master.options import BuildOptions
from tensorweave.ops import control_flow_ops as cf

CPU0, CPU1 = "/job:localhost/replica:0/task:0/device:CPU:0", \
    "/job:localhost/replica:0/task:0/device:CPU:1"


def _partitions(g, fetches):
    state = GraphExecutionState(g._as_ir())
    opts = BuildOptions.from_config({"device_count": {"CPU": 2}})
    return state.build(Signature.of([], [t.name for t in fetches], []), opts).partitions


def _counter(body_device="/cpu:1"):
    g = tf.Graph()
    with g.as_default():
        def body(i, x):
            with tf.device(body_device):
                y = x * 2.0 + 1.0
            return i + 1, y
        out = tf.while_loop(lambda i, x: i < 5, body, [tf.constant(0), tf.constant(1.0)])
    return g, out


def _ops(graph: ir.GraphDef, prefix: str) -> list[str]:
    return sorted(n.op for n in graph.nodes if n.name.startswith(prefix))


def test_each_partition_of_a_split_frame_gets_one_control_loop():
    g, out = _counter()
    parts = _partitions(g, out)
    loop = ["Const", "Enter", "Merge", "NextIteration", "Switch"]
    assert _ops(parts[CPU0], "_cloop") == loop == _ops(parts[CPU1], "_cloop")
    # The follower's control loop switches on the leader's LoopCond, received per iteration.
    switch = next(n for n in parts[CPU1].nodes if n.name.startswith("_cloop")
                  and n.op == "Switch")
    pred = next(n for n in parts[CPU1].nodes if n.name == switch.inputs[1])
    assert pred.op == "_Recv" and "LoopCond" in pred.attrs["tensor_name"]


def test_every_recv_inside_the_frame_waits_for_its_control_loop_merge():
    g, out = _counter()
    for part in _partitions(g, out).values():
        merge = next(n.name for n in part.nodes if n.name.startswith("_cloop")
                     and n.op == "Merge")
        recvs = [n for n in part.nodes if n.op == "_Recv"]
        assert recvs and all(f"^{merge}" in r.inputs for r in recvs)


def test_a_loop_on_one_device_gets_no_control_loop():
    g, out = _counter(body_device="/cpu:0")
    parts = _partitions(g, out)
    assert list(parts) == [CPU0]
    assert not _ops(parts[CPU0], "_cloop")


def test_loop_skeleton_moves_next_to_its_data():
    """TF's OptimizeControlFlowColocation: NextIteration beside its Merge (not its producer
    on another device), Enter beside its first consumer."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:1"):
            x0 = tf.constant(1.0)
        def body(i, x):
            with tf.device("/cpu:1"):
                y = x * 2.0
            return i + 1, y
        out = tf.while_loop(lambda i, x: i < 3, body, [tf.constant(0), x0])
    parts = _partitions(g, out)
    where = {n.name: dev for dev, p in parts.items() for n in p.nodes}
    assert where["while/NextIteration_1"] == where["while/Merge_1"]
    assert where["while/Enter_1"] == where["while/Merge_1"]
    assert where["while/Exit_1"] == where["while/Switch_1"] == where["while/Merge_1"]


def test_a_nested_control_loop_is_entered_from_its_parents_merge():
    g = tf.Graph()
    with g.as_default():
        def outer(i, t):
            def inner(j, u):
                with tf.device("/cpu:1"):
                    v = u + 1.0
                return j + 1, v
            return i + 1, tf.while_loop(lambda j, u: j < i, inner, [0, t])[1]
        out = tf.while_loop(lambda i, t: i < 3, outer, [0, tf.constant(0.0)])
    part = _partitions(g, out)[CPU1]
    nodes = {n.name: n for n in part.nodes}
    enters = [n for n in part.nodes if n.name.startswith("_cloop") and n.op == "Enter"]
    frames = {n.attrs["frame_name"]: n for n in enters}
    assert len(frames) == 2
    inner = next(n for f, n in frames.items() if f.count("while") > 2)
    outer_ = next(n for f, n in frames.items() if n is not inner)
    assert nodes[inner.inputs[0]].op == "Merge"
    assert nodes[outer_.inputs[0]].op == "Const"
    assert nodes[inner.inputs[0]].name.startswith("_cloop")


def test_frames_follow_enter_and_exit():
    g, (i, x) = _counter()
    frames = find_frames(g._as_ir())
    assert frames.own("while/Enter") == "while/while_context" == frames.in_frame["while/mul"]
    assert frames.in_frame["while/Enter"] == ""
    assert frames.out("while/Exit") == "" and frames.own("while/Exit") != ""
    assert frames.loop_cond["while/while_context"] == "while/LoopCond"


def test_a_split_frame_without_a_loop_cond_is_refused():
    """A hand-built frame (Enter/Exit, no LoopCond) cannot be followed on another device."""
    with tf.Graph().as_default() as g:
        inside = cf.enter(tf.constant(1.0), "hand_frame")
        with tf.device("/cpu:1"):
            y = tf.identity(inside)
        cf.exit(tf.identity(y))
    graph = g._as_ir()
    placement = {n.name: (CPU1 if n.name == y.op.name else CPU0) for n in graph.nodes}
    with pytest.raises(errors.InvalidArgumentError, match="pivot predicate: hand_frame"):
        add_control_flow(graph, placement)
