"""Zeta, Polygamma and MirrorPadGrad beyond the harness: TF's float32 artifacts, gradients
against TensorFlow's, errors at construction and at run time, and the public names."""

from __future__ import annotations

import ast
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import special_ops as sp
from tensorweave.runtime.kernels.cpu.special import polygamma, zeta
from tests.ops.cases_special import DATA, F32_TF_ARTIFACTS, F64_TF_ARTIFACTS, f32_artifacts


# -- values -----------------------------------------------------------------------------------
@pytest.mark.parametrize("op, first, second", [("zeta", "zeta_x", "zeta_q"),
                                               ("polygamma", "polygamma_n", "polygamma_x")])
def test_tf_float32_artifacts_are_the_documented_ones(op, first, second):
    mask = f32_artifacts(op)
    found = {(op, float(a), float(b)) for a, b in zip(DATA[first][mask], DATA[second][mask])}
    assert found == {k for k in F32_TF_ARTIFACTS if k[0] == op}


@pytest.mark.parametrize("fn, op, first, second", [
    (zeta, "zeta", "zeta_x", "zeta_q"), (polygamma, "polygamma", "polygamma_n", "polygamma_x")])
def test_float32_matches_tf_float32_off_the_artifacts(fn, op, first, second):
    with np.errstate(over="ignore"):
        got = fn(DATA[first].astype(np.float32), DATA[second].astype(np.float32)).astype(np.float32)
    keep = ~f32_artifacts(op)
    np.testing.assert_allclose(got[keep], DATA[f"{op}_f32"][keep], rtol=1e-5, atol=1e-6)


def test_float64_artifact_is_the_true_value():
    (_, x, q), value = next(iter(F64_TF_ARTIFACTS.items()))
    exact = math.fsum((q / (q + k)) ** x for k in range(200_000)) * q ** -x
    assert value == pytest.approx(exact, rel=1e-14)
    assert zeta(np.float64(x), np.float64(q)) == pytest.approx(exact, rel=1e-14)


def test_edge_values():
    inf, nan = np.inf, np.nan
    got = zeta(np.array([1.0, 0.5, 2.0, 3.0, 2.5, 2.0]), np.array([1.0, 1.0, 0.0, 0.0, -1.5, inf]))
    np.testing.assert_array_equal(got, [inf, nan, inf, nan, nan, 0.0])
    got = polygamma(np.array([0.5, -1.0, 1.0, 2.0, 0.0]), np.array([1.0, 1.0, 0.0, 0.0, -2.0]))
    np.testing.assert_array_equal(got, [nan, nan, inf, nan, nan])


def test_float32_in_float32_out():
    with tf.Graph().as_default():
        z = sp.zeta(np.float32(2.0), np.array([1.0, 2.0], np.float32))
        p = sp.polygamma(np.float32(1.0), np.array([[1.0]], np.float32))
        with tf.Session() as sess:
            zv, pv = sess.run([z, p])
    assert zv.dtype == pv.dtype == np.float32 and z.dtype == tf.float32
    np.testing.assert_allclose(zv, [math.pi ** 2 / 6, math.pi ** 2 / 6 - 1], rtol=1e-7)
    np.testing.assert_allclose(pv, [[math.pi ** 2 / 6]], rtol=1e-7)


# -- gradients --------------------------------------------------------------------------------
def _grads(fn, first, second):
    with tf.Graph().as_default():
        a, b = tf.constant(DATA[first]), tf.constant(DATA[second])
        ga, gb = tf.gradients(fn(a, b), [a, b])
        with tf.Session() as sess:
            return ga, sess.run(gb)


def test_polygamma_gradient_matches_tf():
    gn, gx = _grads(sp.polygamma, "grad_polygamma_n", "grad_polygamma_x")
    assert gn is None
    np.testing.assert_allclose(gx, DATA["grad_polygamma_dx"], rtol=1e-10)


def test_zeta_gradient_matches_tf():
    gx, gq = _grads(sp.zeta, "grad_zeta_x", "grad_zeta_q")
    assert gx is None
    np.testing.assert_allclose(gq, DATA["grad_zeta_dq"], rtol=1e-10)


def test_digamma_gradient_is_polygamma_1():
    with tf.Graph().as_default():
        x = tf.constant(DATA["grad_digamma_x"])
        (g,) = tf.gradients(tf.math.digamma(x), [x])
        assert g.op.type == "Mul" and "Polygamma" in {o.type for o in g.graph.get_operations()}
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(g), DATA["grad_digamma_dx"], rtol=1e-10)


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
def test_mirror_pad_gradients_match_tf(mode):
    x, pads = DATA["grad_mirror_x"], DATA[f"grad_mirror_{mode}_paddings"]
    with tf.Graph().as_default():
        xt = tf.constant(x)
        padded = tf.pad(xt, pads, mode=mode)
        w = tf.constant(np.arange(np.prod(padded.shape.as_list()), dtype=np.float64)
                        .reshape(padded.shape.as_list()))
        folded = sp.mirror_pad_grad(w, pads, mode)
        (dx,) = tf.gradients(padded * w, [xt])
        (dw,) = tf.gradients(folded * xt, [w])
        assert dx.op.type == "MirrorPadGrad" and dw.op.type == "MirrorPad"
        with tf.Session() as sess:
            got_dx, got_dw = sess.run([dx, dw])
    np.testing.assert_array_equal(got_dx, DATA[f"grad_mirror_{mode}_dx"])
    np.testing.assert_array_equal(got_dw, DATA[f"grad_mirror_{mode}_dg"])


# -- MirrorPadGrad errors and shapes ------------------------------------------------------------
_ERRORS = list(zip(DATA["mpg_err_shape"], DATA["mpg_err_paddings"], DATA["mpg_err_mode"],
                   DATA["mpg_err_message"]))


@pytest.mark.parametrize("shape, paddings, mode, message", _ERRORS,
                         ids=[f"{s}-{p}-{m}" for s, p, m, _ in _ERRORS])
def test_mirror_pad_grad_runtime_errors_match_tf(shape, paddings, mode, message):
    with tf.Graph().as_default():
        x, p = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
        y = sp.mirror_pad_grad(x, p, str(mode))
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y, {x: np.ones(ast.literal_eval(str(shape))),
                        p: ast.literal_eval(str(paddings))})
    assert str(message) in str(info.value)
    assert "MirrorPadGrad" in str(info.value)


@pytest.mark.parametrize("x_shape, paddings, want", [
    ([3, 3], [[1, 1], [0, 0]], [1, 3]),
    ([None, 7], [[1, 1], [2, 3]], [None, 2]),
    ([], np.zeros((0, 2), np.int32), []),
    (None, [[1, 1]], [None]),
])
def test_mirror_pad_grad_static_shape(x_shape, paddings, want):
    with tf.Graph().as_default():
        y = sp.mirror_pad_grad(tf.placeholder(tf.float32, x_shape), paddings, "REFLECT")
    assert y.shape.as_list() == want


def test_mirror_pad_grad_shape_unknown_paddings():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 4])
        assert sp.mirror_pad_grad(x, tf.placeholder(tf.int32, [2, 2]), "REFLECT").shape \
            .as_list() == [None, None]
        assert sp.mirror_pad_grad(tf.placeholder(tf.float32), tf.placeholder(tf.int32, [None, 2]),
                                  "REFLECT").shape.ndims is None


@pytest.mark.parametrize("x_shape, paddings, message", [
    ([3], [[2, 2]], "Negative dimension size caused by subtracting 4 from 3"),
    ([3], [[1, 1], [1, 1]], "Shape must be rank 2 but is rank 1"),
    ([3], [[1, -1]], "Paddings must be non-negative"),
    ([3], [[1, 1, 1]], "Dimension 1 in both shapes must be equal, but are 3 and 2"),
])
def test_mirror_pad_grad_construction_errors(x_shape, paddings, message):
    with tf.Graph().as_default(), pytest.raises(ValueError, match=message) as info:
        sp.mirror_pad_grad(tf.placeholder(tf.float32, x_shape), paddings, "SYMMETRIC")
    assert "MirrorPadGrad" in str(info.value)


def test_zero_paddings_fold_to_the_input():
    x = np.arange(6.0).reshape(2, 3)
    with tf.Graph().as_default(), tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(sp.mirror_pad_grad(x, [[0, 0], [0, 0]],
                                                                   "SYMMETRIC")), x)


# -- construction and names -------------------------------------------------------------------
def test_types_and_broadcasting_checked_at_construction():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="int32 not in list of allowed values"):
            sp.zeta(tf.constant([1, 2]), tf.constant([1, 2]))
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
            sp.polygamma(tf.placeholder(tf.float64, [2, 3]), tf.placeholder(tf.float64, [4]))
        assert sp.zeta(tf.placeholder(tf.float32, [2, 1]), tf.placeholder(tf.float32, [4])) \
            .shape.as_list() == [2, 4]


def test_public_names_and_default_op_names():
    assert tf.math.polygamma is sp.polygamma and tf.math.zeta is sp.zeta
    with tf.Graph().as_default():
        p = tf.math.polygamma(tf.constant(1.0), tf.constant([2.0]))
        z = tf.math.zeta(tf.constant(2.0), tf.constant([2.0]), name="my_zeta")
    assert (p.op.name, p.op.type, z.op.name, z.op.type) == ("Polygamma", "Polygamma",
                                                            "my_zeta", "Zeta")
