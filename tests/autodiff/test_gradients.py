"""`gradients()` semantics: path sums, unconnected inputs, stops, grad_ys, names, errors,
sparse gradients, cond, variables, gating, colocation, aggregation, and graph economy."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff import (
    AggregationMethod,
    NotDifferentiable,
    RegisterGradient,
    UnconnectedGradients,
    gradients,
)
from tensorweave.ops.apply import apply_op as A
from tensorweave.ops.array_ops import stop_gradient
from tensorweave.ops.control_flow_ops import cond
from tensorweave.ops.gather_ops import gather
from tensorweave.ops.indexed_slices import IndexedSlices, IndexedSlicesValue
from tests.autodiff import families  # noqa: F401  (registers every op family)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def _types(graph=None, prefix="gradients"):
    graph = graph or tf.get_default_graph()
    return [op.type for op in graph.get_operations() if op.name.startswith(prefix + "/")]


# -- paths, stops, unconnected -------------------------------------------------------------------
def test_two_paths_are_summed_with_add_n():
    x = tf.constant([1.0, 2.0], name="x")
    y = x * 2.0 + x * 3.0
    (g,) = gradients(y, x)
    assert g.op.type == "AddN" and g.op.name == "gradients/AddN"
    np.testing.assert_allclose(_run(g), [5.0, 5.0])


def test_tree_aggregation_sums_pairwise():
    x = tf.constant(1.0)
    y = x * 2.0 + x * 3.0 + x * 4.0
    (g,) = gradients(y, x, aggregation_method=AggregationMethod.EXPERIMENTAL_TREE)
    assert "_gradient_sum/" in g.op.name
    assert [len(op.inputs) for op in tf.get_default_graph().get_operations()
            if op.type == "AddN"] == [2, 2]
    assert _run(g) == pytest.approx(9.0)


def test_bad_aggregation_method():
    x = tf.constant(1.0)
    with pytest.raises(ValueError, match="aggregation_method"):
        gradients(x * 2.0, x, aggregation_method=7)


def test_unconnected_gives_none_or_zeros():
    x = tf.constant([1.0, 2.0])
    z = tf.constant([3.0, 4.0, 5.0])
    y = x * 2.0
    assert gradients(y, [x, z])[1] is None
    gz = gradients(y, z, unconnected_gradients=UnconnectedGradients.ZERO)[0]
    assert gz.op.type == "ZerosLike" and gz.op.name == "zeros_like"
    np.testing.assert_array_equal(_run(gz), [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="unconnected_gradients"):
        gradients(y, z, unconnected_gradients="sometimes")


def test_integer_paths_carry_no_gradient():
    i = tf.placeholder(tf.int32, [2])
    y = tf.cast(i, tf.float32) * 2.0
    assert gradients(y, i) == [None]
    x = tf.constant([1.5, 2.5])
    y = tf.cast(tf.cast(x, tf.int32), tf.float32) * 3.0   # through an int tensor: cut
    assert gradients(y, x) == [None]


def test_stop_gradients_argument():
    a = tf.constant(0.0)
    b = 2.0 * a
    ga, gb = gradients(a + b, [a, b], stop_gradients=[a, b])
    assert _run([ga, gb]) == [1.0, 1.0]          # TF's documented example
    (ga_full,) = gradients(a + b, a)
    assert _run(ga_full) == 3.0


def test_stop_gradient_op_cuts_the_flow():
    x = tf.constant([2.0, 3.0])
    y = x * stop_gradient(x)
    np.testing.assert_allclose(_run(gradients(y, x)[0]), [2.0, 3.0])
    assert gradients(stop_gradient(x) * 2.0, x) == [None]


def test_only_ops_between_xs_and_ys_are_differentiated():
    x = tf.constant([1.0, 2.0])
    c = tf.constant([5.0, 7.0])
    A("Mod", x, 2.0)                                  # consumes x, not on a path to y
    y = x * A("Mod", c, 3.0)                          # on a path to y, not from x
    np.testing.assert_allclose(_run(gradients(y, x)[0]), [2.0, 1.0])


def test_missing_gradient_raises_lookup_error_naming_the_op():
    x = tf.constant([1.0, 2.0])
    y = A("Mod", x, 2.0, name="my_mod")
    with pytest.raises(LookupError, match=r"No gradient defined for operation 'my_mod' "
                                          r"\(op type: Mod\)"):
        gradients(y, x)


def test_not_differentiable_gives_none_and_registration_rejects_duplicates():
    x = tf.constant([1.0, 2.0])
    y = A("Floor", x) * 1.0
    assert gradients(y, x) == [None]
    with pytest.raises(KeyError, match="Registering two gradient with name 'Floor'"):
        NotDifferentiable("Floor")


@RegisterGradient("TestTripleGrad")
def _triple(op, grad):
    return grad * 3.0


@RegisterGradient("TestTwoGrads")
def _two(op, grad):
    return grad, grad


@RegisterGradient("TestBadShape")
def _bad(op, grad):
    return tf.constant([1.0, 2.0, 3.0])


def _overridden(x, grad_type):
    y = tf.identity(x)
    y.op._set_attr("_gradient_op_type", grad_type)
    return y


def test_gradient_op_type_attr_selects_the_gradient():
    x = tf.constant([1.0, 2.0])
    y = _overridden(x, "TestTripleGrad")
    np.testing.assert_allclose(_run(gradients(y, x)[0]), [3.0, 3.0])


def test_gradient_override_map_applies_to_ops_created_inside():
    g = tf.get_default_graph()
    x = tf.constant([1.0, 2.0])
    with g.gradient_override_map({"Identity": "TestTripleGrad"}):
        y = tf.identity(x)
    if "_gradient_op_type" not in y.op.node_def.attrs:
        pytest.skip("op creation does not stamp _gradient_op_type from "
                    "gradient_override_map yet (framework/apply.py)")
    np.testing.assert_allclose(_run(gradients(y, x)[0]), [3.0, 3.0])


def test_wrong_gradient_count_and_shape_raise():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(ValueError, match="Num gradients 2 generated for op"):
        gradients(_overridden(x, "TestTwoGrads"), x)
    with pytest.raises(ValueError, match="Incompatible shapes between op input and calculated"):
        gradients(_overridden(x, "TestBadShape"), x)


def test_prevent_gradient_raises():
    x = tf.constant([1.0])
    y = A("PreventGradient", x, message="no way") * 2.0
    with pytest.raises(LookupError, match="Gradient explicitly disabled. Reason: no way"):
        gradients(y, x)


def test_while_loop_gradient():
    """While-loop gradients: the full suite is tests/autodiff/test_while_grad.py."""
    from tensorweave.ops.while_loop import while_loop

    x = tf.constant(2.0)
    _, y = while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [tf.constant(0), x])
    np.testing.assert_allclose(_run(gradients(y, x)[0]), 4 * 2.0 ** 3)   # y = x^4


# -- grad_ys, names --------------------------------------------------------------------------------
def test_default_grad_ys_and_names():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    b = tf.placeholder(tf.float32, [3], name="b")
    y = x + b
    gx, gb = gradients(y, [x, b])
    names = [op.name for op in tf.get_default_graph().get_operations()]
    assert {"gradients/Shape", "gradients/grad_ys_0", "gradients/Fill"} <= set(names)
    assert gb.op.name.startswith("gradients/add_grad/")
    assert gx.op.name == "gradients/Fill"      # equal-shape side passes the ones through
    feed = {x: np.ones((2, 3)), b: np.ones(3)}
    np.testing.assert_allclose(_run(gb, feed), [2.0, 2.0, 2.0])
    (g2,) = gradients(y, b)
    assert g2.op.name.startswith("gradients_1/")


def test_custom_name_scope():
    x = tf.constant(1.0)
    (g,) = gradients(x * 2.0, x, name="my_grads")
    assert g.op.name.startswith("my_grads/")


def test_grad_ys_scale_and_are_checked():
    x = tf.constant([1.0, 2.0])
    y = x * x
    (g,) = gradients(y, x, grad_ys=tf.constant([10.0, 100.0]))
    np.testing.assert_allclose(_run(g), [20.0, 400.0])
    with pytest.raises(ValueError, match="Passed 2 grad_ys for 1 ys"):
        gradients(y, x, grad_ys=[None, None])
    with pytest.raises(TypeError, match="must be real or integer"):
        gradients(y, x, grad_ys=tf.constant([True, False]))
    z = tf.complex(x, x)
    with pytest.raises(TypeError, match="complex tensors must set grad_ys"):
        gradients(z, x)


def test_several_ys_are_summed():
    x = tf.constant(3.0)
    gx = gradients([x * 2.0, x * x], x)[0]
    assert _run(gx) == pytest.approx(8.0)


# -- sparse gradients ------------------------------------------------------------------------------
def test_gather_gives_indexed_slices():
    params = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2), name="emb")
    w = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    loss = tf.reduce_sum(gather(params, [0, 2, 0]) * w)
    (g,) = gradients(loss, params)
    assert isinstance(g, IndexedSlices)
    assert g.dense_shape.op.type == "Const"          # static shape: no Shape op at run time
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        value = sess.run(g)
        dense = sess.run(tf.convert_to_tensor(g))
    assert isinstance(value, IndexedSlicesValue)
    np.testing.assert_array_equal(value.indices, [0, 2, 0])
    np.testing.assert_allclose(value.values, w_value := [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(value.dense_shape, [4, 2])
    expected = np.zeros((4, 2))
    for i, row in zip([0, 2, 0], w_value):
        expected[i] += row
    np.testing.assert_allclose(dense, expected)


def test_sparse_paths_concatenate_and_mixed_paths_densify():
    params = tf.constant(np.ones((5, 2), np.float32))
    loss = tf.reduce_sum(gather(params, [1, 3])) + tf.reduce_sum(gather(params, [3]) * 2.0)
    (g,) = gradients(loss, params)
    assert isinstance(g, IndexedSlices) and g.values.op.type == "ConcatV2"
    v = _run(g)
    np.testing.assert_array_equal(v.indices, [1, 3, 3])
    mixed = loss + tf.reduce_sum(params * 0.5)
    (gm,) = gradients(mixed, params)
    assert not isinstance(gm, IndexedSlices) and gm.op.type == "AddN"
    expected = np.full((5, 2), 0.5)
    expected[1] += 1
    expected[3] += 3
    np.testing.assert_allclose(_run(gm), expected)


# -- cond ------------------------------------------------------------------------------------------
def test_gradient_through_cond_for_both_branches():
    x = tf.placeholder(tf.float32, [2], name="x")
    p = tf.placeholder(tf.bool, [], name="p")
    y = cond(p, lambda: x * x, lambda: x * 3.0) + x
    (g,) = gradients(y, x)
    types = _types()
    assert "Switch" in types and "Merge" in types
    xv = np.array([1.0, 2.0], np.float32)
    np.testing.assert_allclose(_run(g, {x: xv, p: True}), 2 * xv + 1)
    np.testing.assert_allclose(_run(g, {x: xv, p: False}), [4.0, 4.0])


def test_gradient_of_branch_without_x_is_zero():
    x = tf.placeholder(tf.float32, [], name="x")
    p = tf.placeholder(tf.bool, [], name="p")
    y = cond(p, lambda: tf.sin(x), lambda: tf.constant(1.0))
    (g,) = gradients(y, x)
    assert _run(g, {x: 0.5, p: True}) == pytest.approx(np.cos(0.5))
    assert _run(g, {x: 0.5, p: False}) == 0.0


def test_ref_switch_and_ref_merge():
    v = tf.Variable([1.0, 2.0], name="v")
    p = tf.placeholder(tf.bool, [], name="p")
    f, t = A("RefSwitch", v._ref(), p)
    merged = A("RefMerge", [f, t])[0]
    y = tf.identity(merged) * 3.0
    (g,) = gradients(y, v)
    assert {"RefSwitch", "Merge"} <= {op.type for op in tf.get_default_graph().get_operations()}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(g, {p: True}), [3.0, 3.0])
        np.testing.assert_allclose(sess.run(g, {p: False}), [3.0, 3.0])


# -- variables -------------------------------------------------------------------------------------
def test_gradient_with_respect_to_variables():
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], name="w")
    b = tf.get_variable("b", initializer=tf.constant([0.5, -0.5]))
    x = tf.constant([[1.0, 1.0, 2.0]])
    loss = tf.reduce_sum(tf.matmul(x, w) + b)
    gw, gb = gradients(loss, [w, b])
    assert gw.shape.as_tuple() == (3, 2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(gw), [[1, 1], [1, 1], [2, 2]])
        np.testing.assert_allclose(sess.run(gb), [1.0, 1.0])


# -- options ---------------------------------------------------------------------------------------
def test_gate_gradients_waits_for_all_inputs():
    x = tf.constant([1.0, 2.0])
    y = tf.constant([3.0, 4.0])
    gx, gy = gradients(x * y, [x, y], gate_gradients=True)
    assert gx.op.type == "Identity" and "tuple" in gx.op.name
    assert gx.op.control_inputs and gx.op.control_inputs[0].type == "NoOp"
    np.testing.assert_allclose(_run([gx, gy]), [[3.0, 4.0], [1.0, 2.0]])


def test_colocate_gradients_with_ops():
    x = tf.constant([1.0, 2.0], name="x")
    y = tf.sin(x, name="s")
    (g,) = gradients(y, x, colocate_gradients_with_ops=True)
    assert g.op.get_attr("_class") == [b"loc:@s"]


# -- economy: the gradient graph only has the ops it needs -----------------------------------------
def test_equal_static_shapes_need_no_broadcast_reduction():
    x = tf.placeholder(tf.float32, [2, 3])
    y = tf.placeholder(tf.float32, [2, 3])
    gradients(x * y + x, [x, y])
    types = _types()
    assert "BroadcastGradientArgs" not in types
    assert "Sum" not in types and "Reshape" not in types and "Shape" not in types


def test_static_broadcast_uses_one_sum():
    x = tf.placeholder(tf.float32, [None, 3])
    b = tf.placeholder(tf.float32, [3])
    gb = gradients(x + b, b)[0]
    types = _types()
    assert types.count("Sum") == 1 and "BroadcastGradientArgs" not in types
    assert "Reshape" not in types and gb.shape.as_tuple() == (3,)
    np.testing.assert_allclose(_run(gb, {x: np.ones((4, 3)), b: np.zeros(3)}), [4, 4, 4])


def test_unknown_shapes_use_broadcast_gradient_args():
    x = tf.placeholder(tf.float32)
    b = tf.placeholder(tf.float32)
    gb = gradients(x + b, b)[0]
    assert "BroadcastGradientArgs" in _types()
    np.testing.assert_allclose(_run(gb, {x: np.ones((4, 3)), b: np.zeros(3)}), [4, 4, 4])


def test_reduction_gradients_are_static_when_shapes_are_known():
    x = tf.placeholder(tf.float32, [2, 3, 4])
    gradients(tf.reduce_mean(x, axis=1), x)
    types = _types()
    assert "Shape" not in types and "Size" not in types and "DynamicStitch" not in types


def test_second_order_gradient():
    x = tf.constant([0.3, -0.4])
    (g,) = gradients(tf.tanh(x), x)
    (gg,) = gradients(g, x)
    t = np.tanh([0.3, -0.4])
    np.testing.assert_allclose(_run(gg), -2 * t * (1 - t * t), rtol=1e-5)


def test_broadcast_gradient_args_kernel_matches_tf():
    from tensorweave.ops.grad_ops import broadcast_gradient_args as bga

    # values written by TensorFlow's BroadcastGradientArgs
    assert bga([2, 1], [2, 1]) == ([], [])
    assert bga([2, 3], [3]) == ([], [0])
    assert bga([1], [2, 3]) == ([0, 1], [])
    assert bga([2, 1, 3], [4, 1]) == ([1], [0, 2])
    assert bga([], [2, 3]) == ([0, 1], [])
    assert bga([1, 1], [1]) == ([0, 1], [0, 1])
    r0, r1 = _run(list(A("BroadcastGradientArgs", [2, 1, 3], [4, 1])))
    assert r0.tolist() == [1] and r1.tolist() == [0, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        _run(A("BroadcastGradientArgs", tf.placeholder_with_default([2, 3], [2]), [4]))


def test_nested_cond_and_branch_returning_x_itself():
    x = tf.placeholder(tf.float32, [], name="x")
    p = tf.placeholder(tf.bool, [], name="p")
    q = tf.placeholder(tf.bool, [], name="q")
    y = cond(p, lambda: x, lambda: cond(q, lambda: x * x, lambda: tf.sin(x)) * 2.0)
    (g,) = gradients(y, x)
    for pv, qv, want in ((True, True, 1.0), (False, True, 4 * 0.5),
                         (False, False, 2 * np.cos(0.5))):
        assert _run(g, {x: 0.5, p: pv, q: qv}) == pytest.approx(want, rel=1e-6)
