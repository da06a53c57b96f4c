"""import_graph_def / graph_to_proto: prefixes, input_map, return_elements, ordering, control
inputs, devices, colocation, attr checks, errors, while-loop back edges."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import ir
from tensorweave.ops.importer import graph_to_proto, import_graph_def
from tensorweave.ops.registry import OPS
from tensorweave.proto import graph_pb2, op_def_pb2
from tensorweave.proto.convert import attr_to_proto, graph_from_proto
from tensorweave.proto.convert import graph_to_proto as to_pb
from tensorweave.runtime.kernels.registry import has_kernel
from tensorweave.shapes import TensorShape

F32 = tf.float32


def _simple_graph_def():
    """x (Placeholder [?,3]) → Sin → add(+1) → z (Identity)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(F32, [None, 3], name="x")
        y = tf.sin(x, name="s") + tf.constant(1.0, name="one")
        tf.identity(y, name="z")
    return g.as_graph_def()


def _run(graph, fetches, feed=None):
    with tf.Session(graph=graph) as sess:
        return sess.run(fetches, feed)


def _names(graph):
    return [op.name for op in graph.get_operations()]


def _node(name, op, inputs=(), device="", **attrs):
    return ir.NodeDef(name, op, list(inputs), device, attrs)


def _placeholder(name, shape=(3,), dtype=F32):
    return _node(name, "Placeholder", dtype=dtype, shape=TensorShape(list(shape)))


def _const(name, value, dtype=F32):
    return _node(name, "Const", dtype=dtype, value=np.asarray(value, dtype.np_dtype))


X = np.arange(6, dtype=np.float32).reshape(2, 3) / 4


# -- prefixes -------------------------------------------------------------------------------
def test_default_prefix_keeps_values_and_feedable_placeholder():
    gd = _simple_graph_def()
    g = tf.Graph()
    with g.as_default():
        assert import_graph_def(gd) is None
    assert _names(g) == ["import/x", "import/s", "import/one", "import/add", "import/z"]
    assert g.get_operation_by_name("import/s").node_def.inputs == ["import/x"]
    out = _run(g, "import/z:0", {"import/x:0": X})
    np.testing.assert_allclose(out, np.sin(X) + 1, rtol=1e-6)
    assert g.get_tensor_by_name("import/z:0").shape.as_list() == [None, 3]


def test_second_import_gets_a_unique_prefix_and_named_scopes_nest():
    gd = _simple_graph_def()
    g = tf.Graph()
    with g.as_default():
        import_graph_def(gd)
        import_graph_def(gd)
        with tf.name_scope("outer"):
            import_graph_def(gd, name="model")
    names = _names(g)
    assert "import_1/z" in names and "outer/model/z" in names
    assert g.get_operation_by_name("outer/model/s").node_def.inputs == ["outer/model/x"]


def test_empty_name_imports_without_prefix_and_renames_taken_names():
    gd = _simple_graph_def()
    g = tf.Graph()
    with g.as_default():
        tf.placeholder(F32, [2], name="x")
        import_graph_def(gd, name="")
    assert _names(g) == ["x", "x_1", "s", "one", "add", "z"]
    assert g.get_operation_by_name("s").node_def.inputs == ["x_1"]
    np.testing.assert_allclose(_run(g, "z:0", {"x_1:0": X}), np.sin(X) + 1, rtol=1e-6)
    with g.as_default():  # later ops do not collide with imported names
        assert tf.identity(tf.constant(1.0), name="z").op.name == "z_1"


# -- input_map ------------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["x", "x:0"])
def test_input_map_replaces_the_input(key):
    gd = _simple_graph_def()
    g = tf.Graph()
    with g.as_default():
        v = tf.constant(X, name="v")
        z, = import_graph_def(gd, input_map={key: v}, return_elements=["z:0"])
    s = g.get_operation_by_name("import/s")
    assert s.inputs[0] is v and s in v.consumers()
    assert "import/x" in _names(g)  # the mapped node is still imported, as in TF
    np.testing.assert_allclose(_run(g, z), np.sin(X) + 1, rtol=1e-6)


def test_input_map_converts_non_tensor_values_in_the_import_scope():
    gd = _simple_graph_def()
    g = tf.Graph()
    with g.as_default():
        z, = import_graph_def(gd, input_map={"x:0": X}, return_elements=["z:0"])
    mapped = g.get_operation_by_name("import/s").inputs[0]
    assert mapped.op.type == "Const" and mapped.op.name.startswith("import/_inputs/")
    np.testing.assert_allclose(_run(g, z), np.sin(X) + 1, rtol=1e-6)


def test_input_map_errors():
    gd = _simple_graph_def()
    g = tf.Graph()
    with g.as_default():
        v = tf.constant(X)
        with pytest.raises(ValueError, match=r"not found in graph_def: \[nope:0, x:3\]"):
            import_graph_def(gd, input_map={"nope": v, "x:3": v})
        with pytest.raises(ValueError, match="Input 0 of node import/s was passed int32 from "
                                             "Const_1:0 incompatible with expected float32"):
            import_graph_def(gd, input_map={"x": tf.constant([1, 2])})
        with pytest.raises(ValueError, match="non-empty `name`"):
            import_graph_def(gd, input_map={"x": X}, name="")
        with pytest.raises(TypeError, match="input_map must be a dictionary"):
            import_graph_def(gd, input_map=[("x", v)])
    assert [op.type for op in g.get_operations()] == ["Const", "Const"]


def test_input_map_control_key_remaps_control_inputs():
    gd = ir.GraphDef([_const("c", 1.0), _const("d", 2.0, ), _node("i", "Identity", ["d", "^c"],
                                                                    T=F32)])
    g = tf.Graph()
    with g.as_default():
        other = tf.constant(0.0, name="other")
        i, = import_graph_def(gd, input_map={"^c": other}, return_elements=["i"])
    assert i.control_inputs == [other.op]
    assert i.node_def.inputs == ["import/d", "^other"]


# -- return_elements ------------------------------------------------------------------------
def test_return_elements_give_ops_and_tensors_in_order():
    gd = _simple_graph_def()
    g = tf.Graph()
    with g.as_default():
        v = tf.constant(X)
        z, s, x = import_graph_def(gd, input_map={"x": v}, return_elements=["z:0", "s", "x:0"])
    assert isinstance(z, tf.Tensor) and z.name == "import/z:0"
    assert isinstance(s, tf.Operation) and s.name == "import/s"
    assert x is v  # a mapped name returns the mapped tensor


@pytest.mark.parametrize("element, message", [
    ("nope", "Requested return node 'nope' not found"),
    ("nope:0", "Requested return tensor 'nope:0' not found"),
    ("z:1", "Invalid return output 1 of node 'z', which has 1 output"),
    ("z:a", "Cannot convert 'z:a' to a tensor name"),
])
def test_bad_return_elements(element, message):
    with pytest.raises(ValueError, match=message):
        import_graph_def(_simple_graph_def(), return_elements=[element])
    assert tf.get_default_graph().get_operations() == []


def test_return_elements_must_be_strings():
    with pytest.raises(TypeError, match="list of strings"):
        import_graph_def(_simple_graph_def(), return_elements=[1])


# -- op types, attrs, names -----------------------------------------------------------------
def test_unknown_op_types_are_all_listed_and_nothing_is_added():
    gd = ir.GraphDef([_const("c", 1.0), _node("f", "FooOp", ["c"]), _node("b", "BarOp", ["f"]),
                      _node("f2", "FooOp", ["b"])])
    with pytest.raises(ValueError) as info:
        import_graph_def(gd)
    text = str(info.value)
    assert "unknown op types: ['BarOp', 'FooOp']" in text
    assert "'b' (BarOp)" in text and "'f' (FooOp)" in text
    assert tf.get_default_graph().get_operations() == []


def test_missing_attr_defaults_are_filled_from_the_op_def():
    gd = ir.GraphDef([_node("p", "Placeholder", dtype=F32)])  # no "shape"
    p, = import_graph_def(gd, return_elements=["p"])
    assert p.get_attr("shape") == TensorShape(None)
    assert to_pb(ir.GraphDef([p.node_def])).node[0].attr["shape"].shape.unknown_rank


def test_undeclared_attr_is_an_error_unless_the_producer_default():
    gd = ir.GraphDef([_placeholder("p")])
    gd.nodes[0].attrs["new_attr"] = 7
    with pytest.raises(ValueError, match="NodeDef mentions attr 'new_attr' not in Op<name="
                                         "Placeholder"):
        import_graph_def(gd)
    producer = op_def_pb2.OpList()
    spec = producer.op.add(name="Placeholder").attr.add(name="new_attr", type="int")
    spec.default_value.CopyFrom(attr_to_proto(7, "int"))
    p, = import_graph_def(gd, producer_op_list=producer, return_elements=["p"])
    assert "new_attr" not in p.node_def.attrs
    gd.nodes[0].attrs["new_attr"] = 8  # not the default: still an error
    with pytest.raises(ValueError, match="new_attr"):
        import_graph_def(gd, producer_op_list=producer)


def test_attr_errors_name_the_node():
    with pytest.raises(ValueError, match="NodeDef missing attr 'dtype'.*NodeDef: p = Placeholder"):
        import_graph_def(ir.GraphDef([_node("p", "Placeholder")]))
    bad = ir.GraphDef([_const("c", 1.0), _node("s", "Sin", ["c"], T=tf.int32)])
    with pytest.raises(ValueError, match="Value for attr 'T' of int32 is not in the list of "
                                         "allowed values.*NodeDef: s = Sin"):
        import_graph_def(bad)


def test_duplicate_and_invalid_names():
    with pytest.raises(ValueError, match="Node 'c' is not unique"):
        import_graph_def(ir.GraphDef([_const("c", 1.0), _const("c", 2.0)]))
    with pytest.raises(ValueError, match="invalid characters"):
        import_graph_def(ir.GraphDef([_const("a b", 1.0)]))


def test_imported_constants_are_read_only():
    c, = import_graph_def(ir.GraphDef([_const("c", [1.0, 2.0])]), return_elements=["c"])
    with pytest.raises(ValueError):
        c.get_attr("value")[0] = 5


# -- inputs, order, control deps ------------------------------------------------------------
def test_nodes_in_any_order_are_created_topologically():
    gd = _simple_graph_def()
    shuffled = graph_pb2.GraphDef()
    shuffled.CopyFrom(gd)
    del shuffled.node[:]
    shuffled.node.extend([gd.node[i] for i in (4, 3, 1, 2, 0)])  # z, add, s, one, x
    g = tf.Graph()
    with g.as_default():
        import_graph_def(shuffled, name="")
    # ready nodes go smallest GraphDef index first: one (3) before x (4), then s, add, z
    assert _names(g) == ["one", "x", "s", "add", "z"]
    np.testing.assert_allclose(_run(g, "z:0", {"x:0": X}), np.sin(X) + 1, rtol=1e-6)


@pytest.mark.parametrize("inputs, message", [
    (["nope"], "Node 'i': Unknown input node 'nope'"),
    (["c:2"], "Node 'i': Connecting to invalid output 2 of source node c which has 1 outputs"),
    (["^nope", "c"], "Node 'i': Control dependencies must come after regular dependencies"),
    (["c", "^nope"], r"Node 'i': Unknown input node '\^nope'"),
    (["c", "c"], "expected inputs 'float32' do not match 2 inputs"),
])
def test_bad_input_references_name_the_node(inputs, message):
    gd = ir.GraphDef([_const("c", 1.0), _node("i", "Identity", inputs, T=F32)])
    with pytest.raises(ValueError, match=message):
        import_graph_def(gd)


def test_dtype_mismatch_inside_the_graph_def():
    gd = ir.GraphDef([_const("c", 1.0), _node("i", "Identity", ["c"], T=tf.int32)])
    with pytest.raises(ValueError, match="Input 0 of node import/i was passed float32 from "
                                         "import/c:0 incompatible with expected int32"):
        import_graph_def(gd)


def test_cycle_without_next_iteration_is_an_error():
    gd = ir.GraphDef([_const("c", 1.0), _node("a", "AddV2", ["c", "b"], T=F32),
                      _node("b", "Identity", ["a"], T=F32)])
    with pytest.raises(ValueError, match=r"cycle: 2 nodes.*\['a', 'b'\]"):
        import_graph_def(gd)


def test_control_inputs_are_kept_and_renamed():
    gd = ir.GraphDef([_node("i", "Identity", ["d", "^c"], T=F32), _const("d", 2.0),
                      _const("c", 1.0)])
    g = tf.Graph()
    with g.as_default():
        i, c = import_graph_def(gd, return_elements=["i", "c"])
    assert i.control_inputs == [c]
    assert i.node_def.inputs == ["import/d", "^import/c"]
    assert _names(g) == ["import/d", "import/c", "import/i"]


def test_active_control_dependencies_apply_to_imported_roots():
    gd = _simple_graph_def()
    g = tf.Graph()
    with g.as_default():
        dep = tf.constant(0.0, name="dep")
        with tf.control_dependencies([dep]):
            import_graph_def(gd)
    assert g.get_operation_by_name("import/x").control_inputs == [dep.op]
    assert g.get_operation_by_name("import/s").control_inputs == []  # dominated by x


def test_shape_function_failure_adds_nothing():
    gd = ir.GraphDef([_placeholder("a", [2]), _placeholder("b", [3]),
                      _node("s", "AddV2", ["a", "b"], T=F32)])
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="keep")
        with pytest.raises(ValueError, match="import/s"):
            import_graph_def(gd)
        assert _names(g) == ["keep"]
        assert tf.placeholder(F32, name="import/a").op.name == "import/a"  # name released


# -- devices and colocation -----------------------------------------------------------------
def test_devices_are_kept_and_merged_under_device_scopes():
    gd = ir.GraphDef([_const("c", 1.0), _node("i", "Identity", ["c"], device="/cpu:0", T=F32)])
    g = tf.Graph()
    with g.as_default():
        import_graph_def(gd)
        with tf.device("/job:worker/task:1"):
            import_graph_def(gd)
    assert g.get_operation_by_name("import/i").device == "/device:CPU:0"
    assert g.get_operation_by_name("import/c").device == ""
    assert g.get_operation_by_name("import_1/i").device == "/job:worker/task:1/device:CPU:0"
    assert g.get_operation_by_name("import_1/c").device == "/job:worker/task:1"


def test_colocation_groups_are_renamed_and_give_the_device():
    gd = ir.GraphDef([
        _node("v", "Const", device="/cpu:1", dtype=F32, value=np.float32(1)),
        _node("r", "Identity", ["v"], device="/cpu:0", T=F32, _class=["loc:@v"]),
    ])
    r, = import_graph_def(gd, name="m", return_elements=["r"])
    assert r.get_attr("_class") == [b"loc:@m/v"]
    assert r.colocation_groups() == [b"loc:@m/v"]
    assert r.device == "/device:CPU:1"  # colocation wins over the node's own device (TF)


def test_invalid_device_is_an_error():
    with pytest.raises(ValueError, match="Node 'c': invalid device"):
        import_graph_def(ir.GraphDef([_node("c", "Const", device="/bogus:x:y", dtype=F32,
                                            value=np.float32(1))]))


# -- accepted inputs and export -------------------------------------------------------------
def test_graph_def_kinds():
    gd = _simple_graph_def()
    with pytest.raises(TypeError, match="graph_def must be a GraphDef proto"):
        import_graph_def(gd.SerializeToString())
    g = tf.Graph()
    with g.as_default():
        import_graph_def(graph_from_proto(gd), name="from_ir")
        import_graph_def(graph_pb2.GraphDef.FromString(gd.SerializeToString()), name="bytes")
        import_graph_def(_ForeignGraphDef(gd.SerializeToString()), name="foreign")
    assert {"from_ir/z", "bytes/z", "foreign/z"} <= set(_names(g))


class _ForeignGraphDef:
    """Stands in for TensorFlow's own GraphDef message class (same wire format)."""

    DESCRIPTOR = type("Descriptor", (), {"name": "GraphDef"})()

    def __init__(self, data: bytes):
        self._data = data

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's method name
        return self._data


def test_finalized_graph_refuses_import():
    g = tf.Graph()
    g.finalize()
    with g.as_default(), pytest.raises(RuntimeError, match="finalized"):
        import_graph_def(_simple_graph_def())


def test_graph_to_proto_from_version_and_shapes():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(F32, [None, 3], name="x")
        v = g.version
        tf.sin(x, name="s")
    full = graph_to_proto(g)
    assert [n.name for n in full.node] == ["x", "s"]
    assert full.versions.producer == ir.PRODUCER_VERSION
    assert "_output_shapes" not in full.node[1].attr
    later = graph_to_proto(g, from_version=v, add_shapes=True)
    assert [n.name for n in later.node] == ["s"]
    dims = later.node[0].attr["_output_shapes"].list.shape[0].dim
    assert [d.size for d in dims] == [-1, 3]
    assert "_output_shapes" not in g.get_operation_by_name("s").node_def.attrs
    assert g.as_graph_def() == full


def test_update_input_keeps_consumers_and_node_def_consistent():
    g = tf.Graph()
    with g.as_default():
        a, b = tf.constant(1.0, name="a"), tf.constant(2.0, name="b")
        i = tf.identity(a, name="i")
    assert i.op.node_def.inputs == ["a"]
    i.op._update_input(0, b)
    assert i.op.inputs[0] is b and i.op.node_def.inputs == ["b"]
    assert a.consumers() == [] and b.consumers() == [i.op]


# -- while loop: NextIteration → Merge back edge --------------------------------------------
LOOP_OPS = ["Enter", "Merge", "Less", "LoopCond", "Switch", "NextIteration", "Exit", "AddV2",
            "Identity", "Const"]


def _loop_graph_def(order=None) -> ir.GraphDef:
    """i = 0; while i < 5: i = i + 1 — the nodes TF1's while_loop writes."""
    i32 = tf.int32
    frame = dict(T=i32, frame_name="while/while_context", is_constant=False,
                 parallel_iterations=10)
    nodes = [
        _const("i0", 0, i32),
        _node("while/Enter", "Enter", ["i0"], **frame),
        _node("while/Merge", "Merge", ["while/Enter", "while/NextIteration"], T=i32, N=2),
        _node("while/limit", "Const", ["^while/Merge"], dtype=i32, value=np.int32(5)),
        _node("while/Less", "Less", ["while/Merge", "while/limit"], T=i32),
        _node("while/LoopCond", "LoopCond", ["while/Less"]),
        _node("while/Switch", "Switch", ["while/Merge", "while/LoopCond"], T=i32),
        _node("while/Identity", "Identity", ["while/Switch:1"], T=i32),
        _node("while/one", "Const", ["^while/Identity"], dtype=i32, value=np.int32(1)),
        _node("while/add", "AddV2", ["while/Identity", "while/one"], T=i32),
        _node("while/NextIteration", "NextIteration", ["while/add"], T=i32),
        _node("while/Exit", "Exit", ["while/Switch"], T=i32),
    ]
    return ir.GraphDef([nodes[k] for k in order] if order else nodes)


def _skip_without(op_types):
    missing = [t for t in op_types if t not in OPS or not has_kernel(t)]
    if missing:
        pytest.skip(f"ops not registered yet (or without a CPU kernel): {missing}")


@pytest.mark.parametrize("order", [None, [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]])
def test_while_loop_back_edge_imports_and_runs(order):
    _skip_without(LOOP_OPS)
    g = tf.Graph()
    with g.as_default():
        merge, nxt, out = import_graph_def(_loop_graph_def(order), return_elements=[
            "while/Merge", "while/NextIteration", "while/Exit:0"])
    assert merge.inputs[1] is nxt.outputs[0]
    assert merge.node_def.inputs == ["import/while/Enter", "import/while/NextIteration"]
    assert merge in nxt.outputs[0].consumers()
    names = _names(g)
    assert names.index("import/while/Merge") < names.index("import/while/NextIteration")
    assert _run(g, out) == 5
    again = tf.Graph()
    with again.as_default():
        out2, = import_graph_def(g.as_graph_def(), name="", return_elements=["import/while/Exit:0"])
    assert _run(again, out2) == 5
