"""Gradients through TensorArrays (TF1's tensor_array_grad.py), alone and in while loops:
map_fn, scan, folds and a dynamic_rnn-style loop.

Values are checked against numbers written by TensorFlow (`make_tensor_array_expected.py` →
`tests/data/tensor_array_grad_expected.npz`, same builders run on both) and against central
differences; structure against what TF builds (op counts, names, the gradient sources).
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.autodiff.tensor_array_grad import grad_source
from tensorweave.ops.functional_ops import map_fn
from tensorweave.ops.tensor_array_ops import TensorArray
from tests.autodiff.expected_cases import ExpectedCases
from tests.autodiff.make_tensor_array_expected import (
    CASES,
    GRAPH_DEF_CASES,
    op_counts,
    rnn_train,
    rnn_train_inputs,
)

DATA = ExpectedCases(CASES, "tensor_array_grad_expected.npz")
EXPECTED = DATA.expected
_inputs = DATA.inputs
_build = DATA.build


# -- against TensorFlow ------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    g, feeds, y, xs, grads = _build(name)
    assert all(d is not None for d in grads)
    with g.as_default(), tf.Session(graph=g) as sess:
        values = sess.run([y] + grads, feeds)
    np.testing.assert_allclose(values[0], EXPECTED[f"{name}/y"], rtol=1e-5)
    for i, v in enumerate(values[1:]):
        np.testing.assert_allclose(v, EXPECTED[f"{name}/grad{i}"], rtol=1e-5, atol=1e-12,
                                   err_msg=f"{name}: d y / d input {i}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_counts_as_tensorflow(name):
    """As many TensorArray ops (forward and gradient) and stack pushes/pops as TF builds."""
    g, *_ = _build(name)
    want = {t: int(EXPECTED[f"{name}/count/{t}"]) for t in op_counts(g)}
    assert op_counts(g) == want


@pytest.mark.parametrize("name", GRAPH_DEF_CASES)
def test_tensorflow_gradient_graph_runs(name):
    """TF's own gradient graph (TensorArrayGradV3 and friends) imports and runs."""
    g, values = DATA.run_tensorflow_graph(name)
    assert "TensorArrayGradV3" in {op.type for op in g.get_operations()}
    np.testing.assert_allclose(values[0], EXPECTED[f"{name}/y"], rtol=1e-7)
    for i, v in enumerate(values[1:]):
        np.testing.assert_allclose(v, EXPECTED[f"{name}/grad{i}"], rtol=1e-7)


def test_rnn_training_matches_tensorflow():
    """Five GradientDescent steps on the outputs of a TensorArray RNN."""
    with tf.Graph().as_default():
        losses, weights = rnn_train(tf, rnn_train_inputs())
    np.testing.assert_allclose(losses, EXPECTED["rnn_train/losses"], rtol=2e-6)
    assert losses[-1] < 0.9 * losses[0]
    for key, w in zip(("wx", "wh", "b"), weights):
        np.testing.assert_allclose(w, EXPECTED[f"rnn_train/{key}"], rtol=1e-5, atol=1e-6)


# -- against finite differences ----------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CASES))
def test_finite_differences(name):
    DATA.check_finite_differences(name)


# -- the graph TF builds -----------------------------------------------------------------------
def _scan_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, [4, 3], name="x")
        y = tf.reduce_sum(tf.scan(lambda a, e: a * e + tf.sin(a), x))
        (gx,) = tf.gradients(y, x)
    return g, x, gx


def test_gradient_op_names_as_tensorflow():
    g, *_ = _scan_graph()
    names = {op.name for op in g.get_operations()}
    for name in (   # as TF 2.21 names them (control flow v1)
            "gradients/scan/TensorArrayStack/TensorArrayGatherV3_grad/TensorArrayGrad/"
            "TensorArrayGradV3",
            "gradients/scan/TensorArrayStack/TensorArrayGatherV3_grad/TensorArrayScatter/"
            "TensorArrayScatterV3",
            "gradients/scan/while/TensorArrayWrite/TensorArrayWriteV3_grad/TensorArrayReadV3",
            "gradients/scan/while/TensorArrayReadV3_grad/TensorArrayWrite/TensorArrayWriteV3",
            "gradients/scan/TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3_grad/"
            "TensorArrayGatherV3"):
        assert name in names, name


def test_gradient_arrays_are_keyed_by_the_gradients_call():
    g, *_ = _scan_graph()
    sources = {op.get_attr("source") for op in g.get_operations()
               if op.type == "TensorArrayGradV3"}
    assert sources == {b"gradients"}
    write_grad = g.get_operation_by_name(
        "gradients/scan/while/TensorArrayWrite/TensorArrayWriteV3_grad/write_barrier")
    assert [c.name for c in write_grad.control_inputs] == \
        ["gradients/scan/while/TensorArrayWrite/TensorArrayWriteV3_grad/flow_out"]


def test_grad_source():
    with tf.Graph().as_default():
        with tf.name_scope("outer/gradients_3/scan/while"):
            t = tf.constant(1.0, name="c")
        assert grad_source(t) == "outer/gradients_3"
        with pytest.raises(ValueError, match="Expected op/tensor name to start with gradients"):
            grad_source(tf.constant(2.0, name="grads"))


# -- behaviours --------------------------------------------------------------------------------
def test_two_gradient_calls_get_their_own_gradient_arrays():
    """Two gradients() of one forward array run in one step: neither sees the other's sums."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3])
        ta = TensorArray(tf.float64, size=3, clear_after_read=False).unstack(x)
        y1 = ta.read(0) * ta.read(1)
        y2 = ta.read(2) * 3.0
        (g1,) = tf.gradients(y1, x)
        (g2,) = tf.gradients(y2, x, name="gradients_for_y2")
        with tf.Session() as sess:
            got = sess.run([g1, g2, g1], {x: [2.0, 5.0, 7.0]})
    np.testing.assert_allclose(got[0], [5.0, 2.0, 0.0])
    np.testing.assert_allclose(got[1], [0.0, 0.0, 3.0])


def test_gradients_scope_must_start_with_gradients():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        y = TensorArray(tf.float64, size=2).unstack(x).read(0)
        with pytest.raises(ValueError, match="does not start with 'gradients'"):
            tf.gradients(y, x, name="backprop")


def test_repeated_runs_get_fresh_gradient_arrays():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3, 2])
        y = tf.reduce_sum(map_fn(lambda e: e * e, x))
        (gx,) = tf.gradients(y, x)
        with tf.Session() as sess:
            for v in (1.0, 2.0, 1.0):
                np.testing.assert_allclose(sess.run(gx, {x: np.full((3, 2), v)}), 2 * v)


def test_gradient_array_freezes_a_dynamic_forward_array():
    """After its gradient array is made, a dynamically sized array no longer grows (TF)."""
    with tf.Graph().as_default():
        ta = TensorArray(tf.float32, size=0, dynamic_size=True).write(0, [1.0])
        g = ta.grad("gradients")
        with tf.control_dependencies([g.flow]):
            grown = ta.write(3, [2.0]).flow
        with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError,
                                                 match="not resizeable and size is: 1"):
            sess.run(grown)


def test_unwritten_gradient_reads_zeros_of_the_forward_elements_shape():
    """A gradient array gives zeros shaped like each forward element (known at run time only)
    at indices no gradient was written to."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, None)
        ta = TensorArray(tf.float32, size=2, infer_shape=False)
        ta = ta.write(0, x).write(1, tf.concat([x, x], 0))
        g = ta.grad("gradients").write(1, [1.0, 2.0, 3.0, 4.0])
        with tf.Session() as sess:
            got = sess.run([g.read(0), g.read(1)], {x: [5.0, 6.0]})
    np.testing.assert_array_equal(got[0], [0.0, 0.0])
    np.testing.assert_array_equal(got[1], [1.0, 2.0, 3.0, 4.0])


def test_stop_gradient_on_the_stacked_value():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3, 2])
        w = tf.placeholder(tf.float64, [2])
        out = map_fn(lambda e: e * w, x)
        y = tf.reduce_sum(tf.stop_gradient(out) * x) + tf.reduce_sum(out)
        gx, gw = tf.gradients(y, [x, w])
        with tf.Session() as sess:
            xv, wv = np.arange(6.0).reshape(3, 2), np.array([2.0, -1.0])
            got = sess.run([gx, gw], {x: xv, w: wv})
    np.testing.assert_allclose(got[0], xv * wv + wv)
    np.testing.assert_allclose(got[1], xv.sum(0))


def test_static_shapes_as_tensorflow():
    """The static shapes TF 2.21 gives (they decide what the gradient graphs save): handle
    data from TensorArrayV3's element_shape, else the Python-side element shape."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [4, 3])
        i = tf.placeholder(tf.int32, [])
        ta = TensorArray(tf.float64, size=4, clear_after_read=False).unstack(x)
        assert ta.gather(tf.stack([i, i + 1])).shape.as_list() == [None, 3]
        assert ta.gather([0, 2]).shape.as_list() == [None, 3]
        assert ta.read(i).shape.as_list() == [3]
        no_infer = TensorArray(tf.float64, size=4, infer_shape=False).unstack(x)
        assert no_infer.gather([0, 2]).shape.ndims is None
        declared = TensorArray(tf.float64, size=4, element_shape=[3])
        assert declared.gather([0, 2]).shape.as_list() == [2, 3]
        assert TensorArray(tf.float64, size=3).gather([0, 2]).shape.ndims is None
        zeros = tf.zeros([6, 2], tf.float64)
        split = TensorArray(tf.float64, size=3).split(zeros, [2, 2, 2])
        assert split.read(0).shape.as_list() == [2, 2]
        assert split.concat().shape.as_list() == [6, 2]
        unequal = TensorArray(tf.float64, size=3, infer_shape=False).split(zeros, [1, 2, 3])
        assert unequal.read(0).shape.ndims is None
        assert TensorArray(tf.float64, size=3, element_shape=[2, 2]).concat().shape.as_list() \
            == [6, 2]
