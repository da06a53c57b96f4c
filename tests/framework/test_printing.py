"""The deterministic text form: one node per line in TF's SummarizeNodeDef style."""

from __future__ import annotations

import numpy as np

import tensorweave as tf
from tensorweave import ir
from tensorweave.framework.printing import (
    format_attr_value,
    format_graph,
    format_node,
    format_window,
)
from tensorweave.proto.convert import AttrPlaceholder, node_to_proto
from tensorweave.shapes import TensorShape


def _node(name, op, inputs=(), device="", **attrs):
    return ir.NodeDef(name, op, list(inputs), device, attrs)


def test_node_line_sorts_attrs_and_keeps_inputs_verbatim():
    node = _node("m", "MatMul", ["a", "b:1", "^c"], transpose_b=True, T=tf.float32,
                 transpose_a=False)
    assert format_node(node) == "m = MatMul[T=DT_FLOAT, transpose_a=false, transpose_b=true]" \
                                "(a, b:1, ^c)"


def test_device_comes_last_and_empty_node():
    node = _node("n", "NoOp", device="/job:w/device:CPU:0", _class=["loc:@v"])
    assert format_node(node) == 'n = NoOp[_class=["loc:@v"], _device="/job:w/device:CPU:0"]()'
    assert format_node(_node("e", "NoOp")) == "e = NoOp[]()"


def test_attr_values():
    cases = [
        (3, "3"), (np.int64(-2), "-2"), (True, "true"), (np.bool_(False), "false"),
        (0.0010000000474974513, "0.001"), (1.0, "1"), (float("inf"), "inf"),
        ("SAME", '"SAME"'), (b"a\x00\"\n", '"a\\000\\"\\n"'),
        (tf.int64, "DT_INT64"), (tf.float32._as_ref, "DT_FLOAT_REF"),
        (TensorShape([None, 3]), "[?,3]"), (TensorShape([]), "[]"),
        (TensorShape(None), "<unknown>"),
        ([1, 2, 3], "[1, 2, 3]"), ([], "[]"), ([tf.float32, tf.int32], "[DT_FLOAT, DT_INT32]"),
        ([TensorShape([2]), TensorShape(None)], "[[2], <unknown>]"),
        (list(range(12)), "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...(12 total)]"),
        (ir.NameAttrList("f", {"T": tf.float32, "n": 2}), "f[T=DT_FLOAT, n=2]"),
        (AttrPlaceholder("T"), "$T"),
    ]
    for value, text in cases:
        assert format_attr_value(value) == text, value


def test_tensor_values():
    assert format_attr_value(np.array(0.5, np.float32)) == \
        "Tensor<type: float shape: [] values: 0.5>"
    assert format_attr_value(np.arange(6, dtype=np.int32).reshape(2, 3)) == \
        "Tensor<type: int32 shape: [2,3] values: [0 1 2...]>"
    assert format_attr_value(np.array([1.5, 2], np.float64)) == \
        "Tensor<type: double shape: [2] values: [1.5 2]>"
    strings = np.array([b"ab", b"c"], dtype=object)
    assert format_attr_value(strings) == 'Tensor<type: string shape: [2] values: ["ab" "c"]>'
    assert format_attr_value(np.zeros((0, 3), np.float32)) == \
        "Tensor<type: float shape: [0,3] values: []>"


def test_proto_node_prints_like_its_ir():
    node = _node("p", "Placeholder", dtype=tf.float32, shape=TensorShape([None, 4]))
    assert format_node(node_to_proto(node)) == format_node(node) == \
        "p = Placeholder[dtype=DT_FLOAT, shape=[?,4]]()"


def _graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.sin(x) + tf.constant(2.0, name="two")
        tf.identity(y, name="out")
    return g


def test_graph_text_is_one_line_per_node_in_creation_order():
    text = format_graph(_graph())
    assert text.splitlines() == [
        "x = Placeholder[dtype=DT_FLOAT, shape=[?,3]]()",
        "Sin = Sin[T=DT_FLOAT](x)",
        "two = Const[dtype=DT_FLOAT, value=Tensor<type: float shape: [] values: 2>]()",
        "add = AddV2[T=DT_FLOAT](Sin, two)",
        "out = Identity[T=DT_FLOAT](add)",
    ]
    assert format_graph(_graph()) == text  # same graph, same text
    g = _graph()
    assert format_graph(g._as_ir()) == format_graph(g.as_graph_def()) == text
    assert str(g.get_operation_by_name("add")) == "add = AddV2[T=DT_FLOAT](Sin, two)"


def test_graph_text_does_not_depend_on_attr_insertion_order():
    a = ir.GraphDef([_node("n", "Op", x=1, y=2)])
    b = ir.GraphDef([_node("n", "Op", y=2, x=1)])
    assert format_graph(a) == format_graph(b)


def test_max_nodes_elides_the_rest():
    assert format_graph(_graph(), max_nodes=2).splitlines()[1:] == [
        "Sin = Sin[T=DT_FLOAT](x)", "... (3 more nodes)"]
    assert format_graph(_graph(), max_nodes=10) == format_graph(_graph())


def test_window_marks_the_node_and_elides_both_sides():
    nodes = [_node(f"n{i}", "NoOp") for i in range(10)]
    lines = format_window(ir.GraphDef(nodes), "n5", radius=2).splitlines()
    assert lines == [
        "   ... (3 nodes before)",
        "   n3 = NoOp[]()", "   n4 = NoOp[]()", ">> n5 = NoOp[]()", "   n6 = NoOp[]()",
        "   n7 = NoOp[]()",
        "   ... (2 nodes after)",
    ]
    edge = format_window(ir.GraphDef(nodes), "n0", radius=1).splitlines()
    assert edge == [">> n0 = NoOp[]()", "   n1 = NoOp[]()", "   ... (8 nodes after)"]
    assert format_window(ir.GraphDef(nodes), "zz") == "<node 'zz' is not in the graph (10 nodes)>"
