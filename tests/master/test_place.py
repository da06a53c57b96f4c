"""Placement: colocation groups, sticky variables, constraints, soft placement, heuristics."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.master.place import Placement, place

DEV = [f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(3)]


def _place(graph=None, placement=None, soft=False):
    g = (graph or tf.get_default_graph())._as_ir()
    return place(g.node_map(), [n.name for n in g.nodes], DEV, placement or Placement(), soft)


def test_assign_follows_its_variable_through_the_ref_edge():
    with tf.device("/cpu:2"):
        v = tf.Variable(1.0, name="v")
    inc = tf.assign_add(v, 1.0, name="inc")  # no device asked: joins v's group
    p = _place()
    assert p.devices["v"] == DEV[2] and p.devices["inc"] == DEV[2]
    assert p.devices["v/Assign"] == DEV[2]
    del inc


def test_colocate_with_class_attr_groups_nodes():
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        b = tf.sin(a, name="b")
    b.op._set_device("")  # the _class attr alone must keep it with a
    p = _place()
    assert p.devices["b"] == DEV[1]


def test_conflicting_constraints_name_both_nodes():
    with tf.device("/cpu:1"):
        v = tf.Variable(1.0, name="v")
    # NOTE: an op taking a ref is colocated with its variable whatever the device scope (as
    # TF); only setting the device afterwards makes a conflict.
    tf.assign(v, 2.0, name="bad_assign").op._set_device("/device:CPU:2")
    p = _place()
    err = p.failed["v"]
    assert "bad_assign" in str(err) and "v" in str(err) and "colocate" in str(err)


def test_failure_surfaces_only_when_needed():
    with tf.device("/cpu:1"):
        v = tf.Variable(1.0, name="v")
    # NOTE: an op taking a ref is colocated with its variable whatever the device scope (as
    # TF); only setting the device afterwards makes a conflict.
    tf.assign(v, 2.0, name="bad_assign").op._set_device("/device:CPU:2")
    ok = tf.constant(3.0, name="ok") * 2.0
    cfg = tf.ConfigProto(device_count={"CPU": 3})
    with tf.Session(config=cfg) as s:
        assert s.run(ok) == 6.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad_assign"):
            s.run(v.initializer)


def test_variables_are_sticky_when_the_graph_grows():
    v = tf.Variable(1.0, name="v")
    p = _place()
    assert p.devices["v"] == DEV[0]
    with tf.device("/cpu:1"):
        tf.assign_add(v, 1.0, name="later")
    p = _place(placement=p)
    assert p.devices["v"] == DEV[0] and p.devices["later"] == DEV[0]


def test_metadata_ops_follow_input_and_generators_follow_consumer():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    with tf.device("/cpu:1"):
        y = tf.sin(x, name="y")
    s = tf.shape(y, name="shape_of_y")
    c = tf.constant(2.0, name="two")
    with tf.device("/cpu:2"):
        z = tf.multiply(y, c, name="z")
    p = _place()
    assert p.devices["shape_of_y"] == DEV[1]
    assert p.devices["two"] == DEV[2]
    del s, z


def test_soft_placement_drops_unknown_devices():
    with tf.device("/cpu:9"):
        tf.constant(1.0, name="far")
    assert "far" in _place().failed
    assert _place(soft=True).devices["far"] == DEV[0]


def test_log_device_placement_prints_every_node(capfd):
    tf.sin(tf.constant(1.0, name="c"), name="s")
    with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as sess:
        sess.run("s:0")
    err = capfd.readouterr().err
    assert "s: (Sin): /job:localhost/replica:0/task:0/device:CPU:0" in err


def test_variable_lives_on_its_device_across_steps():
    cfg = tf.ConfigProto(device_count={"CPU": 2})
    with tf.device("/cpu:1"):
        v = tf.Variable(np.zeros(2, np.float32), name="v")
    inc = tf.assign_add(v, np.ones(2, np.float32))
    with tf.Session(config=cfg) as s:
        s.run(tf.global_variables_initializer())
        s.run(inc)
        np.testing.assert_array_equal(s.run(v + 1.0), [2.0, 2.0])

