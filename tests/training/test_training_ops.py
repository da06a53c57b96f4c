"""The Apply*/SparseApply* kernels against numpy references of TF's update formulas
(tensorflow/core/kernels/training_ops.cc), plus their shape checks and runtime errors.

These ops mutate variables, so the op-test harness lists them as EXEMPT and points here.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.runtime.kernels.cpu.training  # noqa: F401  (until cpu/__init__ imports it)
from tensorweave import errors
from tensorweave.ops import training_ops as T

RNG = np.random.RandomState(7)
SHAPE = (3, 4)


def _arr(dtype, positive=False, shape=SHAPE):
    a = RNG.standard_normal(shape)
    return (np.abs(a) + 0.1 if positive else a).astype(dtype)


def _run(build, init: dict, steps: int = 1):
    """Builds `build(vars)` over variables holding `init`, runs it `steps` times; returns
    (final values by name, the op's last output)."""
    g = tf.Graph()
    with g.as_default():
        variables = {k: tf.Variable(v, name=k) for k, v in init.items()}
        out = build(variables)
        with tf.Session(graph=g) as sess:
            sess.run([v.initializer for v in variables.values()])
            for _ in range(steps):
                got = sess.run(out)
            return {k: sess.run(v) for k, v in variables.items()}, got


# -- numpy references (float64 math, then the variable's dtype) --------------------------------
def ref_momentum(s, lr, g, mom, nesterov):
    s["accum"] = s["accum"] * mom + g
    s["var"] = s["var"] - (g * lr + s["accum"] * mom * lr if nesterov else s["accum"] * lr)


def ref_adam(s, b1p, b2p, lr, b1, b2, eps, g, nesterov):
    alpha = lr * np.sqrt(1 - b2p) / (1 - b1p)
    s["m"] = s["m"] + (g - s["m"]) * (1 - b1)
    s["v"] = s["v"] + (g * g - s["v"]) * (1 - b2)
    num = (g * (1 - b1) + b1 * s["m"]) if nesterov else s["m"]
    s["var"] = s["var"] - num * alpha / (np.sqrt(s["v"]) + eps)


def ref_rms(s, lr, rho, mom, eps, g):
    s["ms"] = s["ms"] + (g * g - s["ms"]) * (1 - rho)
    s["mom"] = s["mom"] * mom + g * lr / np.sqrt(s["ms"] + eps)
    s["var"] = s["var"] - s["mom"]


def ref_centered_rms(s, lr, rho, mom, eps, g):
    s["ms"] = s["ms"] + (g * g - s["ms"]) * (1 - rho)
    s["mg"] = s["mg"] + (g - s["mg"]) * (1 - rho)
    s["mom"] = s["mom"] * mom + g * lr / np.sqrt(s["ms"] - s["mg"] ** 2 + eps)
    s["var"] = s["var"] - s["mom"]


def ref_adagrad(s, lr, g, update_slots=True):
    if update_slots:
        s["accum"] = s["accum"] + g * g
    s["var"] = s["var"] - lr * g / np.sqrt(s["accum"])


def ref_adadelta(s, lr, rho, eps, g):
    s["accum"] = s["accum"] * rho + g * g * (1 - rho)
    update = np.sqrt(s["accum_update"] + eps) / np.sqrt(s["accum"] + eps) * g
    s["var"] = s["var"] - update * lr
    s["accum_update"] = s["accum_update"] * rho + update * update * (1 - rho)


def _reference(fn, init, *args, steps=1, **kwargs):
    state = {k: v.astype(np.float64) for k, v in init.items()}
    for _ in range(steps):
        fn(state, *args, **kwargs)
    return state


def _sparse_reference(fn, init, indices, grad, *args, steps=1, **kwargs):
    """TF's sparse kernels: the dense formula row by row, in index order."""
    state = {k: v.astype(np.float64) for k, v in init.items()}
    for _ in range(steps):
        for i, row in enumerate(indices):
            sub = {k: v[row] for k, v in state.items()}
            fn(sub, *args, grad=grad[i].astype(np.float64), **kwargs)
            for k in state:
                state[k][row] = sub[k]
    return state


def _check(got, want, dtype):
    tol = 2e-5 if dtype == np.float32 else 1e-10
    for k, w in want.items():
        assert got[k].dtype == dtype, k
        np.testing.assert_allclose(got[k], w, rtol=tol, atol=tol, err_msg=k)


FLOATS = [np.float32, np.float64]


# -- dense kernels -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_apply_gradient_descent(dtype):
    init, g = {"var": _arr(dtype)}, _arr(dtype)
    got, out = _run(lambda v: T.apply_gradient_descent(v["var"], dtype(0.3), g), init, steps=2)
    want = init["var"].astype(np.float64) - 2 * 0.3 * g
    _check(got, {"var": want}, dtype)
    np.testing.assert_array_equal(out, got["var"])  # the op outputs the updated ref


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("nesterov", [False, True])
def test_apply_momentum(dtype, nesterov):
    init, g = {"var": _arr(dtype), "accum": _arr(dtype)}, _arr(dtype)
    got, _ = _run(lambda v: T.apply_momentum(v["var"], v["accum"], dtype(0.1), g, dtype(0.9),
                                             use_nesterov=nesterov), init, steps=3)
    _check(got, _reference(ref_momentum, init, 0.1, g, 0.9, nesterov, steps=3), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("nesterov", [False, True])
def test_apply_adam(dtype, nesterov):
    init = {"var": _arr(dtype), "m": _arr(dtype), "v": _arr(dtype, positive=True)}
    g = _arr(dtype)
    args = (0.9 ** 3, 0.999 ** 3, 0.01, 0.9, 0.999, 1e-7)
    got, _ = _run(lambda v: T.apply_adam(v["var"], v["m"], v["v"], *map(dtype, args), g,
                                         use_nesterov=nesterov), init, steps=2)
    _check(got, _reference(ref_adam, init, *args, g, nesterov, steps=2), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_apply_rms_prop(dtype):
    init = {"var": _arr(dtype), "ms": _arr(dtype, positive=True), "mom": _arr(dtype)}
    g, args = _arr(dtype), (0.01, 0.9, 0.5, 1e-6)
    got, _ = _run(lambda v: T.apply_rms_prop(v["var"], v["ms"], v["mom"], *map(dtype, args), g),
                  init, steps=2)
    _check(got, _reference(ref_rms, init, *args, g, steps=2), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_apply_centered_rms_prop(dtype):
    init = {"var": _arr(dtype), "mg": _arr(dtype) * dtype(0.1),
            "ms": _arr(dtype, positive=True) + dtype(1), "mom": _arr(dtype)}
    g, args = _arr(dtype), (0.01, 0.9, 0.5, 1e-6)
    got, _ = _run(lambda v: T.apply_centered_rms_prop(v["var"], v["mg"], v["ms"], v["mom"],
                                                      *map(dtype, args), g), init, steps=2)
    _check(got, _reference(ref_centered_rms, init, *args, g, steps=2), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("update_slots", [True, False])
def test_apply_adagrad(dtype, update_slots):
    init = {"var": _arr(dtype), "accum": _arr(dtype, positive=True)}
    g = _arr(dtype)
    got, _ = _run(lambda v: T.apply_adagrad(v["var"], v["accum"], dtype(0.1), g,
                                            update_slots=update_slots), init, steps=2)
    _check(got, _reference(ref_adagrad, init, 0.1, g, update_slots, steps=2), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_apply_adadelta(dtype):
    init = {"var": _arr(dtype), "accum": _arr(dtype, positive=True),
            "accum_update": _arr(dtype, positive=True)}
    g, args = _arr(dtype), (1.0, 0.95, 1e-6)
    got, _ = _run(lambda v: T.apply_adadelta(v["var"], v["accum"], v["accum_update"],
                                             *map(dtype, args), g), init, steps=2)
    _check(got, _reference(ref_adadelta, init, *args, g, steps=2), dtype)


def test_dense_kernel_keeps_float16():
    init, g = {"var": _arr(np.float16), "accum": _arr(np.float16)}, _arr(np.float16)
    got, _ = _run(lambda v: T.apply_momentum(v["var"], v["accum"], np.float16(0.1), g,
                                             np.float16(0.9)), init)
    want = _reference(ref_momentum, init, 0.1, g, 0.9, False)
    for k, w in want.items():
        assert got[k].dtype == np.float16
        np.testing.assert_allclose(got[k], w, rtol=5e-3, atol=5e-3)


def test_complex_momentum():
    c = (_arr(np.float32) + 1j * _arr(np.float32)).astype(np.complex64)
    init, g = {"var": c, "accum": c * 0}, c * 2
    got, _ = _run(lambda v: T.apply_momentum(v["var"], v["accum"], np.complex64(0.1), g,
                                             np.complex64(0.9)), init)
    np.testing.assert_allclose(got["var"], c - 0.1 * g, rtol=1e-5)


# -- sparse kernels ----------------------------------------------------------------------------
INDICES = [[2, 0], [1, 2, 1]]   # unique, and with a repeated row (applied sequentially)


def _sparse_case(indices, dtype):
    return np.array(indices, np.int32), _arr(dtype, shape=(len(indices),) + SHAPE[1:])


@pytest.mark.parametrize("indices", INDICES)
@pytest.mark.parametrize("nesterov", [False, True])
def test_sparse_apply_momentum(indices, nesterov):
    idx, g = _sparse_case(indices, np.float32)
    init = {"var": _arr(np.float32), "accum": _arr(np.float32)}
    got, _ = _run(lambda v: T.sparse_apply_momentum(
        v["var"], v["accum"], np.float32(0.1), g, idx, np.float32(0.9),
        use_nesterov=nesterov), init, steps=2)

    def ref(s, grad, nesterov):
        ref_momentum(s, 0.1, grad, 0.9, nesterov)

    _check(got, _sparse_reference(ref, init, idx, g, nesterov=nesterov, steps=2), np.float32)


@pytest.mark.parametrize("indices", INDICES)
def test_sparse_apply_rms_prop(indices):
    idx, g = _sparse_case(indices, np.float64)
    init = {"var": _arr(np.float64), "ms": _arr(np.float64, True), "mom": _arr(np.float64)}
    args = (0.01, 0.9, 0.5, 1e-6)
    got, _ = _run(lambda v: T.sparse_apply_rms_prop(v["var"], v["ms"], v["mom"],
                                                    *map(np.float64, args), g, idx), init)

    def ref(s, grad):
        ref_rms(s, *args, grad)

    _check(got, _sparse_reference(ref, init, idx, g), np.float64)


@pytest.mark.parametrize("indices", INDICES)
def test_sparse_apply_centered_rms_prop(indices):
    idx, g = _sparse_case(indices, np.float32)
    init = {"var": _arr(np.float32), "mg": _arr(np.float32) * np.float32(0.1),
            "ms": _arr(np.float32, True) + np.float32(1), "mom": _arr(np.float32)}
    args = (0.01, 0.9, 0.5, 1e-6)
    got, _ = _run(lambda v: T.sparse_apply_centered_rms_prop(
        v["var"], v["mg"], v["ms"], v["mom"], *map(np.float32, args), g, idx), init, steps=2)

    def ref(s, grad):
        ref_centered_rms(s, *args, grad)

    _check(got, _sparse_reference(ref, init, idx, g, steps=2), np.float32)


@pytest.mark.parametrize("indices", INDICES)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_sparse_apply_adagrad(indices, index_dtype):
    idx, g = _sparse_case(indices, np.float32)
    init = {"var": _arr(np.float32), "accum": _arr(np.float32, True)}
    got, _ = _run(lambda v: T.sparse_apply_adagrad(v["var"], v["accum"], np.float32(0.1), g,
                                                   idx.astype(index_dtype)), init, steps=2)

    def ref(s, grad):
        ref_adagrad(s, 0.1, grad)

    _check(got, _sparse_reference(ref, init, idx, g, steps=2), np.float32)


@pytest.mark.parametrize("indices", INDICES)
def test_sparse_apply_adadelta(indices):
    idx, g = _sparse_case(indices, np.float32)
    init = {"var": _arr(np.float32), "accum": _arr(np.float32, True),
            "accum_update": _arr(np.float32, True)}
    args = (1.0, 0.95, 1e-6)
    got, _ = _run(lambda v: T.sparse_apply_adadelta(v["var"], v["accum"], v["accum_update"],
                                                    *map(np.float32, args), g, idx), init)

    def ref(s, grad):
        ref_adadelta(s, *args, grad)

    _check(got, _sparse_reference(ref, init, idx, g), np.float32)


def test_sparse_untouched_rows_stay():
    init = {"var": _arr(np.float32), "accum": _arr(np.float32, True)}
    got, _ = _run(lambda v: T.sparse_apply_adagrad(v["var"], v["accum"], np.float32(0.1),
                                                   np.ones((1, 4), np.float32), [1]), init)
    for k in init:
        np.testing.assert_array_equal(got[k][[0, 2]], init[k][[0, 2]])
        assert not np.array_equal(got[k][1], init[k][1])


def test_sparse_one_dimensional_var():
    init = {"var": np.arange(5, dtype=np.float32), "accum": np.ones(5, np.float32)}
    got, _ = _run(lambda v: T.sparse_apply_momentum(
        v["var"], v["accum"], np.float32(0.5), np.array([2.0, 4.0], np.float32), [4, 0],
        np.float32(0.0)), init)
    np.testing.assert_allclose(got["var"], [-2, 1, 2, 3, 3])


# -- construction-time and runtime errors ------------------------------------------------------
def test_shape_mismatch_fails_at_construction():
    v = tf.Variable(np.zeros((3, 4), np.float32), name="v")
    acc = tf.Variable(np.zeros((4, 3), np.float32), name="acc")
    with pytest.raises(ValueError, match="ApplyMomentum"):
        T.apply_momentum(v, acc, 0.1, np.zeros((3, 4), np.float32), 0.9)
    with pytest.raises(ValueError, match="rank 0 but is rank 1"):
        T.apply_gradient_descent(v, [0.1, 0.2], np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        T.sparse_apply_adagrad(tf.Variable(np.zeros((3, 4), np.float32)), v, 0.1,
                               np.zeros((3, 4), np.float32), [0, 1])


def test_static_shapes():
    v = tf.Variable(np.zeros((3, 4), np.float32), name="v")
    a = tf.Variable(np.zeros((3, 4), np.float32), name="a")
    g = tf.placeholder(tf.float32, [None, 4])
    out = T.sparse_apply_adagrad(v, a, 0.1, g, tf.placeholder(tf.int32, [None]))
    assert out.shape.as_list() == [3, 4] and out.dtype == tf.float32_ref
    assert out.op.get_attr("use_locking") is False
    assert out.op.get_attr("update_slots") is True


def test_requires_a_ref():
    with pytest.raises(TypeError, match="mutable"):
        T.apply_gradient_descent(tf.constant([1.0]), 0.1, [1.0])


def test_uninitialized_slot_fails():
    v = tf.Variable(np.zeros(3, np.float32), name="v")
    acc = tf.Variable(np.zeros(3, np.float32), name="acc")
    op = T.apply_adagrad(v, acc, 0.1, np.ones(3, np.float32))
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(errors.FailedPreconditionError, match="uninitialized.*acc"):
            sess.run(op)


def test_non_scalar_hyperparameter_fails_at_runtime():
    v = tf.Variable(np.zeros(3, np.float32), name="v")
    lr = tf.placeholder(tf.float32)
    op = T.apply_gradient_descent(v, lr, np.ones(3, np.float32))
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(errors.InvalidArgumentError, match=r"alpha is not a scalar: \[2\]"):
            sess.run(op, {lr: [0.1, 0.2]})


def test_sparse_index_out_of_range():
    v = tf.Variable(np.zeros((3, 2), np.float32), name="v")
    acc = tf.Variable(np.ones((3, 2), np.float32), name="acc")
    op = T.sparse_apply_adagrad(v, acc, 0.1, np.ones((2, 2), np.float32), [0, 9])
    with tf.Session() as sess:
        sess.run([v.initializer, acc.initializer])
        with pytest.raises(errors.InvalidArgumentError,
                           match="Index 9 at offset 1 in indices is out of range"):
            sess.run(op)
        np.testing.assert_array_equal(sess.run(v), np.zeros((3, 2)))  # nothing was applied


def test_integer_variables_have_no_kernel():
    v = tf.Variable(np.zeros(3, np.int32), name="v")
    op = T.apply_gradient_descent(v, 1, np.ones(3, np.int32))
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(errors.UnimplementedError, match="kernel for dtype int32"):
            sess.run(op)
