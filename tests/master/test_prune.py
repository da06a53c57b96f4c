"""Prune: feeds become _Arg, fetches _Retval, and only what the fetches need is kept."""

import pytest

import tensorweave as tf
from tensorweave import ir
from tensorweave.master.prune import prune


def _graph():
    nodes = [
        ir.NodeDef("x", "Placeholder", [], "", {"dtype": tf.float32, "shape": tf.TensorShape([])}),
        ir.NodeDef("c", "Const", [], "", {"dtype": tf.float32, "value": __import__("numpy")
                                          .float32(1.0)}),
        ir.NodeDef("a", "AddV2", ["x", "c"], "", {"T": tf.float32}),
        ir.NodeDef("s", "Sin", ["a"], "", {"T": tf.float32}),
        ir.NodeDef("unused", "Sin", ["c"], "", {"T": tf.float32}),
        ir.NodeDef("t", "Sin", ["c", "^unused"], "", {"T": tf.float32}),
    ]
    return {n.name: n for n in nodes}, [n.name for n in nodes]


def _ops(pruned):
    return {n.name: n.op for n in pruned.graph.nodes}


def test_fetch_keeps_only_what_it_needs():
    nodes, order = _graph()
    p = prune(nodes, order, ["x:0"], ["s:0"], [])
    ops = _ops(p)
    assert set(ops) == {"_arg_x_0_0", "c", "a", "s", "_retval_s_0_0"}
    assert p.feed_dtypes == [tf.float32]
    a = next(n for n in p.graph.nodes if n.name == "a")
    assert a.inputs == ["_arg_x_0_0", "c"]


def test_feeding_a_middle_tensor_cuts_its_inputs():
    nodes, order = _graph()
    p = prune(nodes, order, ["a:0"], ["s:0"], [])
    assert set(_ops(p)) == {"_arg_a_0_0", "s", "_retval_s_0_0"}


def test_control_inputs_are_kept():
    nodes, order = _graph()
    p = prune(nodes, order, [], ["t:0"], [])
    assert "unused" in _ops(p)


def test_targets_and_errors():
    nodes, order = _graph()
    p = prune(nodes, order, [], [], ["unused"])
    assert set(_ops(p)) == {"c", "unused"}
    with pytest.raises(tf.errors.InvalidArgumentError, match="placeholder tensor 'x'"):
        prune(nodes, order, [], ["s:0"], [])
    with pytest.raises(tf.errors.NotFoundError):
        prune(nodes, order, [], ["nope:0"], [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="only 1 outputs"):
        prune(nodes, order, [], ["s:1"], [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least one"):
        prune(nodes, order, [], [], [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than once"):
        prune(nodes, order, ["x:0", "x"], ["s:0"], [])
