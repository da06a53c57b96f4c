"""Graph construction: names, scopes, collections, devices, control deps, finalize."""

import pytest

import tensorweave as tf


def test_unique_names_and_lookup():
    a = tf.constant(1.0, name="c")
    b = tf.constant(2.0, name="c")
    c = tf.constant(3.0, name="c_1_1")
    assert (a.op.name, b.op.name, c.op.name) == ("c", "c_1", "c_1_1")
    g = tf.get_default_graph()
    assert g.get_operation_by_name("c_1") is b.op
    assert g.get_tensor_by_name("c:0") is a
    with pytest.raises(KeyError, match="does not exist"):
        g.get_tensor_by_name("nope:0")
    with pytest.raises(ValueError, match="looks like an"):
        g.get_tensor_by_name("c")


def test_name_scopes_nest_and_reenter():
    with tf.name_scope("outer"):
        with tf.name_scope("inner") as scope:
            x = tf.constant(1, name="x")
        with tf.name_scope("inner"):
            y = tf.constant(1, name="x")
        with tf.name_scope(scope):
            z = tf.constant(1, name="x")
    assert scope == "outer/inner/"
    assert (x.op.name, y.op.name, z.op.name) == ("outer/inner/x", "outer/inner_1/x",
                                                  "outer/inner/x_1")


def test_version_counts_ops_and_finalize():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1)
        assert g.version == 1
        g.finalize()
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(2)


def test_default_graph_stack_and_reset():
    g = tf.Graph()
    with g.as_default():
        assert tf.get_default_graph() is g
        with pytest.raises(AssertionError):
            tf.reset_default_graph()
    assert tf.get_default_graph() is not g


def test_collections():
    c = tf.constant(1)
    tf.add_to_collection("mine", c)
    tf.add_to_collections(["a", "b"], c)
    assert tf.get_collection("mine") == [c]
    assert tf.get_collection("b") == [c]
    assert tf.get_collection("mine", scope="Const") == [c]
    assert tf.get_collection("mine", scope="zzz") == []


def test_control_dependencies_and_clearing():
    a = tf.constant(1, name="a")
    with tf.control_dependencies([a]):
        b = tf.constant(2, name="b")
        with tf.control_dependencies(None):
            c = tf.constant(3, name="c")
    assert b.op.control_inputs == [a.op]
    assert c.op.control_inputs == []
    assert b.op.node_def.inputs == ["^a"]


def test_device_scopes_merge_and_functions():
    with tf.device("/job:worker"):
        with tf.device("/cpu:1"):
            a = tf.constant(1)
    with tf.device(lambda op: "/device:CPU:0" if op.type == "Const" else ""):
        b = tf.constant(1)
    assert a.device == "/job:worker/device:CPU:1"
    assert b.device == "/device:CPU:0"


def test_colocate_with_sets_class_and_device():
    with tf.device("/cpu:0"):
        a = tf.constant(1, name="a")
    with tf.colocate_with(a):
        b = tf.constant(2)
    assert b.op.get_attr("_class") == [b"loc:@a"]
    assert b.device == a.device


def test_creation_site_is_recorded():
    c = tf.constant(1)
    assert c.op.site.endswith("test_graph.py:" + str(c.op.traceback[0][1]))
    assert "test_graph.py" in c.op.site


def test_tensor_bool_is_an_error():
    with pytest.raises(TypeError, match="Python `bool`"):
        bool(tf.constant(True))


def test_set_shape_merges_and_rejects():
    p = tf.placeholder(tf.float32, [None, 3])
    p.set_shape([2, None])
    assert p.shape.as_list() == [2, 3]
    with pytest.raises(ValueError, match="not compatible"):
        p.set_shape([3, 3])


def test_get_attr_strings_are_bytes():
    p = tf.placeholder(tf.float32, [1], name="p")
    assert p.op.get_attr("dtype") == tf.float32
    assert p.op.get_attr("shape").as_list() == [1]


def test_dtype_mismatch_fails_at_construction_naming_op():
    with pytest.raises(TypeError, match="AddV2"):
        tf.add(tf.constant(1.0), tf.constant(1))


def test_snapshot_and_rollback_remove_ops_edges_and_names():
    with tf.Graph().as_default() as g:
        a = tf.constant(1.0, name="a")
        snap = g.snapshot()
        b = tf.identity(a, name="b")
        with g.control_dependencies([b.op]):
            tf.identity(a, name="c")
        g.rollback(snap)
        assert [op.name for op in g.get_operations()] == ["a"]
        assert a.consumers() == []
        assert tf.identity(a, name="b").op.name == "b"  # the name is free again


def test_replace_input_rewires_and_checks_the_dtype():
    with tf.Graph().as_default():
        a, b = tf.constant(1.0), tf.constant(2.0)
        y = tf.identity(a)
        y.op.replace_input(0, b)
        assert y.op.inputs[0] is b and y.op in b.consumers() and y.op not in a.consumers()
        with pytest.raises(TypeError, match="incompatible"):
            y.op.replace_input(0, tf.constant(1))


def test_control_flow_context_is_set_for_a_block():
    with tf.Graph().as_default() as g:
        marker = object()
        with g.in_control_flow_context(marker):
            assert g.control_flow_context is marker
        assert g.control_flow_context is None
