"""Gradients through `tf.while_loop` (TF1's gradient loops with stacks), and the stack ops.

Values are checked against numbers written by TensorFlow (`make_while_expected.py` →
`tests/data/while_grad_expected.npz`, same builders run on both) and against central
differences; structure against what TF builds (op names, attrs, control edges, stack op
counts).
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.autodiff.gradients import to_dense
from tensorweave.ops import control_flow_util as util
from tensorweave.ops.stack_ops import stack_close_v2, stack_pop_v2, stack_push_v2, stack_v2
from tests.autodiff.expected_cases import ExpectedCases
from tests.autodiff.make_while_expected import (
    CASES,
    GRAPH_DEF_CASES,
    rnn_train,
    rnn_train_inputs,
)

DATA = ExpectedCases(CASES, "while_grad_expected.npz")
EXPECTED = DATA.expected
_inputs = DATA.inputs
_build = DATA.build


def _types(g) -> list:
    return [op.type for op in g.get_operations()]


# -- against TensorFlow ------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    g, feeds, y, xs, grads = _build(name)
    with g.as_default(), tf.Session(graph=g) as sess:
        values = sess.run([y] + [to_dense(d) for d in grads], feeds)
    np.testing.assert_allclose(values[0], EXPECTED[f"{name}/y"], rtol=1e-7)
    for i, v in enumerate(values[1:]):
        np.testing.assert_allclose(v, EXPECTED[f"{name}/grad{i}"], rtol=1e-7, atol=1e-12,
                                   err_msg=f"{name}: d y / d input {i}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_stack_ops_as_tensorflow(name):
    """One push and one pop per forward value saved, as many as TF saves."""
    g, *_ = _build(name)
    types = _types(g)
    assert types.count("StackPushV2") == EXPECTED[f"{name}/pushes"] > 0
    assert types.count("StackPopV2") == EXPECTED[f"{name}/pops"]
    assert types.count("StackV2") == types.count("StackPushV2")


def test_rnn_training_matches_tensorflow():
    """Five GradientDescent steps on an RNN loss computed by a while loop."""
    with tf.Graph().as_default():
        losses, weights = rnn_train(tf, rnn_train_inputs())
    np.testing.assert_allclose(losses, EXPECTED["rnn_train/losses"], rtol=2e-6)
    assert losses[-1] < 0.7 * losses[0]
    for key, w in zip(("w", "u", "b"), weights):
        np.testing.assert_allclose(w, EXPECTED[f"rnn_train/{key}"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", GRAPH_DEF_CASES)
def test_tensorflow_gradient_graph_runs(name):
    """TF's own gradient graph (StackV2 family, f_count/b_count loops) imports and runs."""
    g, values = DATA.run_tensorflow_graph(name)
    assert "StackPushV2" in _types(g)
    np.testing.assert_allclose(values[0], EXPECTED[f"{name}/y"], rtol=1e-7)
    for i, v in enumerate(values[1:]):
        np.testing.assert_allclose(v, EXPECTED[f"{name}/grad{i}"], rtol=1e-7)


def test_imported_loop_cannot_be_differentiated():
    graph_def = tf.GraphDef.FromString(EXPECTED["power/graph_def"].tobytes())
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        y = g.get_tensor_by_name(str(EXPECTED["power/fetches"][0]))
        x = g.get_tensor_by_name(str(EXPECTED["power/feeds"][0]))
        with pytest.raises(ValueError, match="while loop without properly serializing graph "
                                             "via MetaGraphDef: Exit op 'while/Exit_1'"):
            tf.gradients(y, x)


# -- against finite differences ----------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CASES))
def test_finite_differences(name):
    DATA.check_finite_differences(name)


# -- the graph TF builds -----------------------------------------------------------------------
def _power_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x),
                             [tf.constant(0), x], swap_memory=True)
        (gx,) = tf.gradients(y, x)
    return g, x, y, gx


def test_graph_structure_as_tensorflow():
    g, x, y, gx = _power_graph()
    op = g.get_operation_by_name
    assert op("gradients/f_count_2").type == "Exit"             # forward iteration count
    assert op("gradients/b_count_2").type == "LoopCond"         # gradient loop predicate
    assert op("gradients/while/Exit_1_grad/b_exit").get_attr("frame_name") == \
        b"gradients/while/while_context"
    acc = op("gradients/while/mul_grad/Mul_1/f_acc")
    assert acc.type == "StackV2"
    assert acc.get_attr("elem_type") == tf.float32 and acc.get_attr("stack_name") == b""
    push = op("gradients/while/mul_grad/Mul_1/StackPushV2")
    assert push.get_attr("swap_memory") is True
    assert push.inputs[1].name == "while/Identity_1:0"          # the saved forward value
    assert [c.name for c in push.control_inputs] == ["gradients/Add"]
    assert "gradients/while/mul_grad/Mul_1/StackPushV2" in \
        [c.name for c in op("gradients/NextIteration").control_inputs]
    pop = op("gradients/while/mul_grad/Mul_1/StackPopV2")
    assert pop.get_attr("elem_type") == tf.float32
    assert [c.name for c in pop.control_inputs] == ["gradients/Sub"]
    sync = op("gradients/while/mul_grad/Mul_1/b_sync")
    assert sync.type == "ControlTrigger" and sync.control_inputs == [pop]
    assert sync in op("gradients/NextIteration_1").control_inputs
    assert op("gradients/while/mul/Enter_grad/b_acc_3").type == "Exit"   # invariant's sum
    assert gx.op.type == "AddN"


def test_contexts_of_gradient_ops():
    g, *_ = _power_graph()
    op = g.get_operation_by_name
    forward = util.get_context(op("while/mul"))
    grad = util.get_context(op("gradients/while/mul_grad/Mul_1"))
    assert grad.grad_state.forward_context is forward
    assert util.get_context(op("gradients/while/mul_grad/Mul_1/StackPushV2")) is forward
    assert util.get_context(op("gradients/while/mul_grad/Mul_1/StackPopV2")) is grad
    assert util.get_context(op("gradients/while/mul_grad/Mul_1/f_acc")) is None
    assert grad.name == "gradients/while/while_context"


def test_shape_of_forward_value_runs_in_forward_loop():
    """With unknown shapes, the gradient needs Shape(v) of a forward v: the Shape op joins
    the forward loop and its (small) result is what gets saved, as TF does."""
    g, *_ = _build("dynamic_shapes")
    forward = util.get_context(g.get_operation_by_name("while/mul"))
    moved = [op for op in g.get_operations()
             if op.type == "Shape" and op.name.startswith("gradients/")
             and util.get_context(op) is forward]
    assert moved
    pushed = {op.inputs[1].op for op in g.get_operations() if op.type == "StackPushV2"}
    assert set(moved) <= pushed


def test_power_values_and_repeated_runs():
    g, x, y, gx = _power_graph()
    with tf.Session(graph=g) as sess:
        for v in (2.0, 3.0, 2.0):       # a fresh stack every step
            np.testing.assert_allclose(sess.run([y, gx], {x: v}), [v ** 4, 4 * v ** 3])
        np.testing.assert_allclose(sess.run(y, {x: 1.5}), 1.5 ** 4)   # forward alone


# -- behaviours --------------------------------------------------------------------------------
def _loop(x, body, n=3, **kw):
    _, *vs = tf.while_loop(lambda i, *v: i < n, lambda i, *v: (i + 1,) + tuple(body(*v)),
                           [tf.constant(0)] + list(x), **kw)
    return vs


def test_loop_variable_independent_of_itself_gets_zeros_after_first_iteration():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        c = tf.placeholder(tf.float64, [2])
        a, _ = _loop([x, x], lambda a, b: (a * b, c * 2.0))
        gx, gc = tf.gradients(tf.reduce_sum(a), [x, c])
        with tf.Session() as sess:
            vx, vc = np.array([1.0, 2.0]), np.array([3.0, 4.0])
            got = sess.run([gx, gc], {x: vx, c: vc})
    np.testing.assert_allclose(got[0], 2 * vx * 4 * vc ** 2)       # a = x * x * (2c)^2
    np.testing.assert_allclose(got[1], vx ** 2 * 8 * vc)


def test_zero_iterations():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        n = tf.placeholder(tf.int32, [])
        (v,) = _loop([x], lambda v: (v * x,), n=n)
        (gx,) = tf.gradients(tf.reduce_sum(v), x)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(gx, {x: [1.0, 2.0], n: 0}), [1.0, 1.0])
            np.testing.assert_allclose(sess.run(gx, {x: [1.0, 2.0], n: 2}), [3.0, 12.0])


def test_loop_inside_cond():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        p = tf.placeholder(tf.bool, [])
        y = tf.cond(p, lambda: _loop([x], lambda v: (v * x,))[0], lambda: tf.sin(x))
        (gx,) = tf.gradients(tf.reduce_sum(y), x)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(gx, {x: [1.0, 2.0], p: True}), [4.0, 32.0])
            np.testing.assert_allclose(sess.run(gx, {x: [1.0, 2.0], p: False}),
                                       np.cos([1.0, 2.0]))


def test_several_ys_and_gradients_twice():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        v, w = _loop([x, x], lambda v, w: (v * x, w + v))
        g1 = tf.gradients(tf.reduce_sum(v), x)[0]
        g2 = tf.gradients([tf.reduce_sum(v), tf.reduce_sum(w)], x, gate_gradients=True,
                          colocate_gradients_with_ops=True)[0]
        with tf.Session() as sess:
            vx = np.array([1.0, 2.0])
            got = sess.run([g1, g2], {x: vx})
    np.testing.assert_allclose(got[0], 4 * vx ** 3)                  # v = x^4
    np.testing.assert_allclose(got[1], 4 * vx ** 3 + 2 + 2 * vx + 3 * vx ** 2)


def test_stop_gradients_and_unconnected():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        c = tf.placeholder(tf.float64, [2])
        z = tf.placeholder(tf.float64, [2])
        (v,) = _loop([x], lambda v: (v * c + x,))
        y = tf.reduce_sum(v)
        (gx,) = tf.gradients(y, x, stop_gradients=[c])
        gz = tf.gradients(y, [x, z], unconnected_gradients="zero")[1]
        with tf.Session() as sess:
            got = sess.run([gx, gz], {x: [1.0, 2.0], c: [2.0, 2.0], z: [5.0, 5.0]})
    np.testing.assert_allclose(got[0], [15.0, 15.0])                 # v = 15 x
    np.testing.assert_allclose(got[1], [0.0, 0.0])


def test_back_prop_false_gives_no_gradient():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        (v,) = _loop([x], lambda v: (v * x,), back_prop=False)
        assert tf.gradients(tf.reduce_sum(v), x) == [None]


def test_gradient_inside_body():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [])
        (v,) = _loop([x], lambda v: (v + tf.gradients(v * v, v)[0],), n=2)
        with tf.Session() as sess:
            assert sess.run(v, {x: 1.0}) == 9.0


def test_gradient_inside_body_through_initial_value_raises():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [], name="x0")
        with pytest.raises(ValueError, match="Cannot compute gradient inside while loop with "
                                             "respect to op 'x0'"):
            _loop([x], lambda v: (v + tf.gradients(v * v, x)[0],), n=2)


def test_second_order_raises():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [])
        (v,) = _loop([x], lambda v: (v * x,))
        (g,) = tf.gradients(v, x)
        with pytest.raises(TypeError, match="Second-order gradient for while loops"):
            tf.gradients(g, x)


def test_optimizer_on_variables_in_loop():
    with tf.Graph().as_default():
        w = tf.Variable(np.array([0.5, -0.5]), name="w")
        (v,) = _loop([tf.constant([1.0, 1.0], tf.float64)], lambda v: (v * w + 1.0,))
        loss = tf.reduce_sum(tf.square(v))
        step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(loss)
            for _ in range(3):
                sess.run(step)
            assert sess.run(loss) < before


# -- stack ops ---------------------------------------------------------------------------------
def test_stack_push_pop_lifo():
    with tf.Graph().as_default():
        h = stack_v2(-1, tf.float32, name="s")
        a = stack_push_v2(h, tf.constant([1.0, 2.0]))
        with tf.control_dependencies([a]):
            b = stack_push_v2(h, tf.constant([3.0]))
        with tf.control_dependencies([b]):
            p1 = stack_pop_v2(h, tf.float32)
        with tf.control_dependencies([p1]):
            p2 = stack_pop_v2(h, tf.float32)
        assert a.shape.as_list() == [2] and p1.shape.ndims is None
        with tf.Session() as sess:
            got = sess.run([a, p1, p2])
            np.testing.assert_allclose(got[0], [1.0, 2.0])
            np.testing.assert_allclose(got[1], [3.0])
            np.testing.assert_allclose(got[2], [1.0, 2.0])
            got = sess.run([p1, p2])        # a new stack in every step
            np.testing.assert_allclose(got[1], [1.0, 2.0])


def test_stack_errors():
    with tf.Graph().as_default():
        h = stack_v2(1, tf.float32, stack_name="acc")
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match=r"Stack\[acc_\d+\] is empty "
                                                                  r"when calling Pop\(\)"):
                sess.run(stack_pop_v2(h, tf.float32))
            push = stack_push_v2(h, 1.0)
            with tf.control_dependencies([push]):
                again = stack_push_v2(h, 2.0)
            with pytest.raises(errors.InvalidArgumentError, match=r"overflowed its max_size"):
                sess.run(again)
            with pytest.raises(errors.InvalidArgumentError, match="Must have type float"):
                sess.run(stack_push_v2(h, np.float64(1.0)))
            close = stack_close_v2(h)
            with tf.control_dependencies([close]):
                late = stack_push_v2(h, 1.0)
            with pytest.raises(errors.InvalidArgumentError, match="has already been closed"):
                sess.run(late)


def test_stack_ops_not_differentiable():
    with tf.Graph().as_default():
        h = stack_v2(-1, tf.float32)
        x = tf.constant(1.0)
        assert tf.gradients(stack_push_v2(h, x), x) == [None]
