"""Gradients of the linear-algebra ops against central differences (the `GradCase` pattern of
grad_cases.py, kept here with the family), and the cases where TF's gradients refuse.

Inputs are chosen where the functions are smooth: well-conditioned matrices, symmetric
positive-definite inputs for Cholesky (built as x x^T + 3 I, since the op reads one triangle),
distinct eigen- and singular values. Eigen- and singular vectors are only unique up to sign,
so their columns are normalized (first entry positive) before differencing, as TF's tests do.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff import gradients
from tensorweave.client.gradient_checker import compute_gradient
from tensorweave.ops.apply import apply_op as A
from tests.autodiff.grad_cases import GradCase, f32_tol

F32, F64 = np.float32, np.float64
_RNG = np.random.default_rng(2024)


def _u(shape, lo=-1.0, hi=1.0, dt=F64):
    return _RNG.uniform(lo, hi, size=shape).astype(dt)


def _well_conditioned(shape, dt=F64):
    """Random square matrices with a dominant diagonal (invertible, det away from 0)."""
    n = shape[-1]
    return (_u(shape) + 3.0 * np.eye(n)).astype(dt)


def _lower(shape, dt=F64):
    return np.tril(_well_conditioned(shape, dt)).astype(dt)


def _flat_concat(parts):
    """One tensor from several outputs, each flattened and scaled differently."""
    return A("ConcatV2", [A("Reshape", p, [-1]) * float(i + 1) for i, p in enumerate(parts)], 0)


def _spd(x):
    """x x^T + 3 I (batched): symmetric positive definite."""
    eye = A("MatrixDiag", A("OnesLike", A("MatrixDiagPart", x)))
    return A("BatchMatMulV2", x, x, adj_y=True) + 3.0 * eye


def _sym(x):
    """(x + x^T) / 2 (batched)."""
    eye = A("MatrixDiag", A("OnesLike", A("MatrixDiagPart", x)))
    return (x + A("BatchMatMulV2", eye, x, adj_y=True)) * 0.5


def _spread(shape):
    """Random matrices plus diag(0, 2, 4, ...): symmetrized, their eigenvalues stay apart."""
    return _u(shape) + np.diag(np.arange(shape[-1]) * 2.0)


def _sign_normalized(v):
    """Columns of v times the sign of their first entry (v[..., 0:1, :])."""
    top = A("Slice", v, [0] * (v.shape.ndims - 2) + [0, 0], [-1] * (v.shape.ndims - 2) + [1, -1])
    return v * A("Sign", top)


def _eig(compute_v):
    def build(x):
        e, v = A("SelfAdjointEigV2", _sym(x), compute_v=compute_v)
        return _flat_concat([e, _sign_normalized(v)]) if compute_v else e
    return build


def _qr(full):
    def build(x):
        q, r = A("Qr", x, full_matrices=full)
        return _flat_concat([q, r])
    return build


def _svd(full=False, compute_uv=True):
    def build(x):
        s, u, v = A("Svd", x, compute_uv=compute_uv, full_matrices=full)
        if not compute_uv:
            return s
        m, n = x.shape.as_tuple()[-2:]
        top = u if m >= n else v
        sign = A("Sign", A("Slice", top, [0] * (top.shape.ndims - 1) + [0],
                           [-1] * (top.shape.ndims - 2) + [1, -1]))
        return _flat_concat([s, u * _first_cols(sign, u.shape.as_tuple()[-1]),
                             v * _first_cols(sign, v.shape.as_tuple()[-1])])
    return build


def _first_cols(sign, k):
    """sign[..., :k], padded with ones to k columns when it has fewer (full matrices)."""
    cols = sign.shape.as_tuple()[-1]
    if cols >= k:
        return A("Slice", sign, [0] * sign.shape.ndims, [-1] * (sign.shape.ndims - 1) + [k])
    pad = np.ones(sign.shape.as_tuple()[:-1] + (k - cols,), sign.dtype.base_dtype.np_dtype)
    return A("ConcatV2", [sign, pad], -1)


def _c(shape, diag=0.0):
    """Random complex128 matrices, plus diag * I."""
    x = _u(shape) + 1j * _u(shape)
    return (x + diag * np.eye(shape[-1]) if diag else x).astype(np.complex128)


def _svd_magnitudes(x):
    """|s|, |u|, |v|: invariant to the phase of each singular triple (complex inputs)."""
    s, u, v = A("Svd", x)
    return _flat_concat([A("ComplexAbs", t, Tout=x.dtype.real_dtype) for t in (s, u, v)])


def _svd_reconstruction(x):
    s, u, v = A("Svd", x)
    return A("BatchMatMulV2", u * A("ExpandDims", s, -2), v, adj_y=True)


def _tri(lower, adjoint):
    return lambda a, b: A("MatrixTriangularSolve", a, b, lower=lower, adjoint=adjoint)


def _slogdet(x):
    sign, log_abs = A("LogMatrixDeterminant", x)
    return sign * log_abs


CASES = [
    GradCase(("MatrixInverse",), lambda x: A("MatrixInverse", x), [_well_conditioned((3, 3))]),
    GradCase(("MatrixInverse",), lambda x: A("MatrixInverse", x, adjoint=True),
             [_well_conditioned((2, 3, 3))], name="adjoint_batched"),
    f32_tol(GradCase(("MatrixInverse",), lambda x: A("MatrixInverse", x),
                     [_well_conditioned((3, 3), F32)], name="float32")),
    GradCase(("MatrixDeterminant",), lambda x: A("MatrixDeterminant", x),
             [_well_conditioned((3, 3))]),
    GradCase(("MatrixDeterminant",), lambda x: A("MatrixDeterminant", x),
             [_well_conditioned((2, 3, 3)) * np.array([1.0, -1.0])[:, None, None]],
             name="batched"),
    GradCase(("LogMatrixDeterminant",), _slogdet,
             [_well_conditioned((2, 3, 3)) * np.array([1.0, -1.0])[:, None, None]]),
    GradCase(("Cholesky",), lambda x: A("Cholesky", _spd(x)), [_u((3, 3))]),
    GradCase(("Cholesky",), lambda x: A("Cholesky", _spd(x)), [_u((2, 4, 4))], name="batched"),
    GradCase(("MatrixSolve",), lambda a, b: A("MatrixSolve", a, b),
             [_well_conditioned((3, 3)), _u((3, 2))]),
    GradCase(("MatrixSolve",), lambda a, b: A("MatrixSolve", a, b, adjoint=True),
             [_well_conditioned((2, 3, 3)), _u((2, 3, 4))], name="adjoint_batched"),
    GradCase(("MatrixTriangularSolve",), _tri(True, False), [_lower((3, 3)), _u((3, 2))],
             name="lower"),
    GradCase(("MatrixTriangularSolve",), _tri(True, True), [_lower((3, 3)), _u((3, 4))],
             name="lower_adjoint"),
    GradCase(("MatrixTriangularSolve",), _tri(False, False),
             [_lower((3, 3)).T.copy(), _u((3, 2))], name="upper"),
    GradCase(("MatrixTriangularSolve",), _tri(False, True),
             [_lower((2, 3, 3)).swapaxes(-1, -2).copy(), _u((2, 3, 2))],
             name="upper_adjoint_batched"),
    GradCase(("MatrixTriangularSolve",), _tri(True, False),
             [_lower((2, 1, 3, 3)), _u((3, 3, 2))], name="broadcast_batch"),
    GradCase(("SelfAdjointEigV2",), _eig(True), [_spread((3, 3))], dynamic=False),
    GradCase(("SelfAdjointEigV2",), _eig(True), [_spread((2, 3, 3))], name="batched",
             dynamic=False),
    GradCase(("SelfAdjointEigV2",), lambda x: A("SelfAdjointEigV2", x)[0],
             [_spread((3, 3))], name="lower_triangle_only"),
    GradCase(("SelfAdjointEigV2",), _eig(False), [_spread((3, 3))], name="values_only"),
    GradCase(("Qr",), _qr(False), [_u((4, 3))], name="deep", dynamic=False),
    GradCase(("Qr",), _qr(False), [_u((3, 3))], name="square", dynamic=False),
    GradCase(("Qr",), _qr(False), [_u((2, 3, 5))], name="wide_batched", dynamic=False),
    GradCase(("Qr",), _qr(True), [_u((3, 4))], name="wide_full", dynamic=False),
    f32_tol(GradCase(("Qr",), _qr(False), [_u((4, 3), dt=F32)], name="float32",
                     dynamic=False)),
    # NOTE: close singular values curve u, v strongly: a smaller delta keeps the differences'
    # truncation error (O(delta^2)) below the tolerance
    GradCase(("Svd",), _svd(), [_u((4, 3))], name="deep", dynamic=False, delta=1e-4),
    GradCase(("Svd",), _svd(), [_u((3, 5))], name="wide", dynamic=False, delta=1e-4),
    GradCase(("Svd",), _svd(), [_u((2, 3, 3))], name="square_batched", dynamic=False,
             delta=1e-4),
    GradCase(("Svd",), _svd(full=True), [_u((4, 3))], name="full_deep", dynamic=False,
             delta=1e-4),
    GradCase(("Svd",), _svd(compute_uv=False), [_u((3, 4))], name="values_only"),
    # complex inputs (differenced through their real and imaginary parts)
    GradCase(("MatrixInverse",), lambda x: A("MatrixInverse", x, adjoint=True),
             [_c((3, 3), 3.0)], name="complex_adjoint"),
    GradCase(("MatrixDeterminant",), lambda x: A("MatrixDeterminant", x), [_c((3, 3), 2.0)],
             name="complex"),
    GradCase(("LogMatrixDeterminant",), lambda x: A("LogMatrixDeterminant", x)[1],
             [_c((3, 3), 2.0)], name="complex"),
    GradCase(("Cholesky",), lambda x: A("Cholesky", _spd(x)), [_c((3, 3))], name="complex"),
    GradCase(("MatrixSolve",), lambda a, b: A("MatrixSolve", a, b, adjoint=True),
             [_c((3, 3), 3.0), _c((3, 2))], name="complex_adjoint"),
    GradCase(("MatrixTriangularSolve",), _tri(True, True), [np.tril(_c((3, 3), 3.0)), _c((3, 2))],
             name="complex_lower_adjoint"),
    GradCase(("SelfAdjointEigV2",), _eig(False), [_c((3, 3)) + np.diag([0.0, 2.0, 4.0])],
             name="complex_values_only"),
    GradCase(("Svd",), _svd_magnitudes, [_c((4, 3))], name="complex_deep", dynamic=False,
             delta=1e-4),
    GradCase(("Svd",), _svd_magnitudes, [_c((3, 5))], name="complex_wide", dynamic=False,
             delta=1e-4),
    GradCase(("Svd",), _svd_reconstruction, [_c((3, 4))], name="complex_reconstruction",
             dynamic=False, delta=1e-4),
]
DYNAMIC = [c for c in CASES if c.dynamic]


def _check(case: GradCase, dynamic: bool) -> None:
    g = tf.Graph()
    with g.as_default():
        xs = [tf.placeholder(tf.as_dtype(np.asarray(a).dtype),
                             shape=None if dynamic else np.shape(a)) for a in case.inputs]
        y = case.build(*xs)
        built = {op.type for op in g.get_operations()}
        assert set(case.ops) <= built, f"case {case.id} built none of {case.ops}"
        feeds = dict(zip(xs, case.inputs))
        with tf.Session(graph=g) as sess:
            y_shape = np.shape(sess.run(y, feeds))
            for i in case.wrt_indices():
                others = {x: v for j, (x, v) in enumerate(feeds.items()) if j != i}
                jt, jn = compute_gradient(xs[i], np.shape(case.inputs[i]), y, y_shape,
                                          x_init_value=np.asarray(case.inputs[i]),
                                          delta=case.delta, extra_feed_dict=others)
                assert np.any(jt), f"{case.id}: zero Jacobian for input {i}"
                np.testing.assert_allclose(jt, jn, rtol=case.rtol, atol=case.atol,
                                           err_msg=f"{case.id}: d y / d input {i}")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_linalg_gradient_static_shapes(case):
    _check(case, dynamic=False)


@pytest.mark.parametrize("case", DYNAMIC, ids=[c.id for c in DYNAMIC])
def test_linalg_gradient_unknown_shapes(case):
    _check(case, dynamic=True)


def test_every_linalg_gradient_has_a_case():
    from tensorweave.autodiff.registry import registered_gradients, registration_site

    ours = {n for n, fn in registered_gradients().items()
            if fn is not None and "linalg_grad.py" in (registration_site(n) or "")}
    assert ours == {o for c in CASES for o in c.ops}


# -- refusals (TF's messages) ---------------------------------------------------------------------
def test_qr_gradient_refuses_deep_full_matrices():
    x = tf.placeholder(tf.float64, [4, 3])
    q, r = A("Qr", x, full_matrices=True)
    with pytest.raises(NotImplementedError, match="QrGrad not implemented when nrows > ncols "
                                                   "and full_matrices is true."):
        gradients(r, x)


def test_qr_gradient_refuses_dynamic_shapes():
    x = tf.placeholder(tf.float64, [None, 3])
    q, r = A("Qr", x)
    with pytest.raises(NotImplementedError, match="QrGrad not implemented with dynamic shapes"):
        gradients(q, x)


def test_qr_gradient_refuses_complex():
    x = tf.placeholder(tf.complex128, [3, 3])
    q, _ = A("Qr", x)
    with pytest.raises(NotImplementedError, match="QrGrad not implemented for dtype"):
        gradients(q, x, grad_ys=tf.ones_like(q))


def test_svd_gradient_refuses_unknown_inner_dims_and_wide_full_matrices():
    x = tf.placeholder(tf.float64, [None, None])
    s, _, _ = A("Svd", x)
    with pytest.raises(NotImplementedError, match="unknown inner matrix shape"):
        gradients(s, x)
    x = tf.placeholder(tf.float64, [5, 3])
    s, _, _ = A("Svd", x, full_matrices=True)
    with pytest.raises(NotImplementedError, match=r"abs\(m - n\) > 1"):
        gradients(s, x)


def test_matrix_inverse_gradient_values():
    """d sum(inv(A)) / dA = -inv(A)^T ones inv(A)^T, checked in closed form."""
    a = _well_conditioned((3, 3))
    x = tf.constant(a)
    (g,) = gradients(A("Sum", A("MatrixInverse", x), [0, 1]), x)
    with tf.Session() as sess:
        got = sess.run(g)
    inv = np.linalg.inv(a)
    np.testing.assert_allclose(got, -inv.T @ np.ones((3, 3)) @ inv.T, rtol=1e-10)
