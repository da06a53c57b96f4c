"""Gradient functions for the linear-algebra ops (TF's linalg_grad.py formulas).

References: Giles 2008, "An extended collection of matrix derivative results for forward and
reverse mode automatic differentiation"; Murray 2016 (Cholesky); Ionescu et al. 2015 (eig,
SVD); Townsend 2016 (reduced SVD).

Eigen- and singular-vector gradients are infinite (NaN) where eigenvalues / singular values
repeat: the vectors are then only defined up to a rotation. Qr's and Svd's gradients need the
inner matrix dims known statically (NotImplementedError otherwise, with TF's messages).
"""

from __future__ import annotations

import numpy as np

from tensorweave.autodiff.gradients import shape_tensor
from tensorweave.autodiff.registry import RegisterGradient
from tensorweave.ops.apply import apply_op as _op
from tensorweave.ops.linalg_ops import (
    matrix_inverse,
    matrix_solve,
    matrix_triangular_solve,
    self_adjoint_eig,
)
from tensorweave.ops.math_matmul_ops import matmul


# -- helpers -------------------------------------------------------------------------------------
def _adjoint(x):
    """The conjugate transpose of each inner matrix (perm computed at run time when x's rank
    is unknown)."""
    rank = x.shape.ndims
    if rank is not None:
        perm = np.asarray(list(range(rank - 2)) + [rank - 1, rank - 2], np.int32)
    else:
        r = _op("Rank", x)
        last_two = _op("Pack", [r - 1, r - 2])
        perm = _op("ConcatV2", [_op("Range", np.int32(0), r - 2, np.int32(1)), last_two], 0)
    kind = "ConjugateTranspose" if x.dtype.is_complex else "Transpose"
    return _op(kind, x, perm)


def _band(x, lower: int, upper: int):
    return _op("MatrixBandPart", x, np.int64(lower), np.int64(upper))


def _diag(v):
    return _op("MatrixDiag", v)


def _diag_part(x):
    return _op("MatrixDiagPart", x)


def _scale_diag(x, factor: float):
    """TF's matrix_set_diag(x, factor * matrix_diag_part(x))."""
    return x - (1.0 - factor) * _diag(_diag_part(x)) if factor != 1.0 else x


def _safe_reciprocal(x, epsilon=1e-20):
    """x / (x^2 + eps): a Lorentz-broadened 1/x, 0 at x = 0 (TF's _SafeReciprocal)."""
    return x * _op("Reciprocal", x * x + epsilon)


def _pairwise_reciprocal(e):
    """f[i, j] = 1 / (e_j - e_i) off the diagonal, 0 on it."""
    f = _safe_reciprocal(_op("ExpandDims", e, -2) - _op("ExpandDims", e, -1))
    return _scale_diag(f, 0.0)


def _inner_slice(x, rows=(0, -1), cols=(0, -1)):
    """x[..., rows[0]:rows[0]+rows[1], cols[0]:cols[0]+cols[1]] (size -1: to the end); x's
    rank must be known."""
    lead = x.shape.ndims - 2
    begin = np.asarray([0] * lead + [rows[0], cols[0]], np.int32)
    size = np.asarray([-1] * lead + [rows[1], cols[1]], np.int32)
    return _op("Slice", x, begin, size)


def _batch_expand(t):
    """[...] -> [..., 1, 1], to scale each inner matrix by one value."""
    return _op("ExpandDims", _op("ExpandDims", t, -1), -1)


# -- inverse, determinants ----------------------------------------------------------------------
@RegisterGradient("MatrixInverse")
def _matrix_inverse_grad(op, grad):
    """d inv(A) = -inv(A) dA inv(A): grad_A = -inv(A)^H grad inv(A)^H.

    NOTE: TF ignores the `adjoint` attr here (a wrong gradient for adjoint=True); with B =
    inv(A^H) the gradient is -B grad^H B, used below."""
    ainv = op.outputs[0]
    if op.get_attr("adjoint"):
        return -matmul(ainv, matmul(grad, ainv, adjoint_a=True))
    return -matmul(ainv, matmul(grad, ainv, adjoint_b=True), adjoint_a=True)


@RegisterGradient("MatrixDeterminant")
def _matrix_determinant_grad(op, grad):
    """d det(A) / dA = det(A) inv(A)^H."""
    a, c = op.inputs[0], op.outputs[0]
    return _batch_expand(grad * c) * matrix_inverse(a, adjoint=True)


@RegisterGradient("LogMatrixDeterminant")
def _log_matrix_determinant_grad(op, _, grad_b):
    """d log|det(A)| / dA = inv(A)^H (the sign has no gradient)."""
    return _batch_expand(grad_b) * matrix_inverse(op.inputs[0], adjoint=True)


# -- factorizations -------------------------------------------------------------------------------
@RegisterGradient("Cholesky")
def _cholesky_grad(op, grad):
    """l^{-H} ((l^H grad) * (tril(ones) - eye / 2)) l^{-1}, symmetrized."""
    l = op.outputs[0]  # noqa: E741 - the formula's name
    eye = _diag(_op("OnesLike", _diag_part(l)))
    l_inverse = matrix_triangular_solve(l, eye)
    middle = _band(_scale_diag(matmul(l, grad, adjoint_a=True), 0.5), -1, 0)
    grad_a = matmul(matmul(l_inverse, middle, adjoint_a=True), l_inverse)
    grad_a += _adjoint(grad_a)
    return grad_a * 0.5


def _static_inner(t):
    dims = t.shape.as_tuple()
    return (None, None) if dims is None else dims[-2:]


def _triangular_solve_right(x, r):
    """x @ adjoint(inv(r)) for upper-triangular r."""
    return _adjoint(matrix_triangular_solve(r, _adjoint(x), lower=False, adjoint=False))


def _qr_grad_deep(q, r, dq, dr):
    """QR gradient for num_rows >= num_cols, reduced q."""
    qdq = matmul(q, dq, adjoint_a=True)
    qdq_ = qdq - _adjoint(qdq)
    rdr = matmul(r, dr, adjoint_b=True)
    rdr_ = rdr - _adjoint(rdr)
    tril = _band(qdq_ + rdr_, -1, 0)
    grad_a = matmul(q, dr + _triangular_solve_right(tril, r))
    grad_b = _triangular_solve_right(dq - matmul(q, qdq), r)
    return grad_a + grad_b


@RegisterGradient("Qr")
def _qr_grad(op, dq, dr):
    """TF's QrGrad: the deep/square case directly; a wide input a = [x, y] (r = [u, v])
    through the square case on x.

    Raises:
      NotImplementedError: complex dtype, unknown inner dims, or nrows > ncols with
        full_matrices (TF's messages).
    """
    q, r = op.outputs
    if q.dtype.is_complex:
        raise NotImplementedError(f"QrGrad not implemented for dtype: {q.dtype}")
    r_rows, r_cols = _static_inner(r)
    if r.shape.ndims is None or r_rows is None or r_cols is None:
        raise NotImplementedError("QrGrad not implemented with dynamic shapes.")
    q_rows, q_cols = _static_inner(q)
    if r_rows > r_cols and q_rows == q_cols:
        raise NotImplementedError("QrGrad not implemented when nrows > ncols and "
                                  "full_matrices is true.")
    if q_rows >= r_cols:
        return _qr_grad_deep(q, r, dq, dr)
    m = q_rows
    y = _inner_slice(op.inputs[0], cols=(m, -1))
    u = _inner_slice(r, cols=(0, m))
    dv, du = _inner_slice(dr, cols=(m, -1)), _inner_slice(dr, cols=(0, m))
    dy = matmul(q, dv)
    dx = _qr_grad_deep(q, u, dq + matmul(y, dv, adjoint_b=True), du)
    return _op("ConcatV2", [dx, dy], -1)


# -- solvers --------------------------------------------------------------------------------------
@RegisterGradient("MatrixSolve")
def _matrix_solve_grad(op, grad):
    """With A c = b: grad_b = A^{-H} grad, grad_A = -grad_b c^H (adjoint: -c grad_b^H)."""
    a, c = op.inputs[0], op.outputs[0]
    adjoint_a = op.get_attr("adjoint")
    grad_b = matrix_solve(a, grad, adjoint=not adjoint_a)
    if adjoint_a:
        grad_a = -matmul(c, grad_b, adjoint_b=True)
    else:
        grad_a = -matmul(grad_b, c, adjoint_b=True)
    return grad_a, grad_b


@RegisterGradient("MatrixTriangularSolve")
def _matrix_triangular_solve_grad(op, grad):
    """As MatrixSolve's, kept to the triangle the op reads, summed over broadcast batch
    dims."""
    a, b = op.inputs
    c = op.outputs[0]
    adjoint_a, lower_a = op.get_attr("adjoint"), op.get_attr("lower")
    grad_b = matrix_triangular_solve(a, grad, lower=lower_a, adjoint=not adjoint_a)
    if adjoint_a:
        grad_a = -matmul(c, grad_b, adjoint_b=True)
    else:
        grad_a = -matmul(grad_b, c, adjoint_b=True)
    grad_a = _band(grad_a, -1, 0) if lower_a else _band(grad_a, 0, -1)
    if a.shape.is_fully_defined() and b.shape.is_fully_defined() and \
            a.shape.as_tuple()[:-2] == b.shape.as_tuple()[:-2]:
        return grad_a, grad_b
    return _unbroadcast_batch(a, b, grad_a, grad_b)


def _unbroadcast_batch(a, b, grad_a, grad_b):
    """Sums each gradient over the batch dims its input was broadcast along."""
    a_shape, b_shape = shape_tensor(a), shape_tensor(b)
    ra, rb = _op("BroadcastGradientArgs", _op("StridedSlice", a_shape, [0], [-2], [1]),
                 _op("StridedSlice", b_shape, [0], [-2], [1]))
    grad_a = _op("Reshape", _op("Sum", grad_a, ra), a_shape)
    grad_b = _op("Reshape", _op("Sum", grad_b, rb), b_shape)
    return grad_a, grad_b


# -- eigen / singular value decompositions -----------------------------------------------------
@RegisterGradient("SelfAdjointEigV2")
def _self_adjoint_eig_grad(op, grad_e, grad_v):
    """v (diag(grad_e) + f * (v^H grad_v)) v^H, f[i, j] = 1 / (e_j - e_i); then kept to the
    lower triangle the op reads (off-diagonal entries count twice)."""
    e = op.outputs[0]
    if op.get_attr("compute_v"):
        v = op.outputs[1]
        f = _pairwise_reciprocal(e)
        inner = _diag(grad_e) + f * matmul(v, grad_v, adjoint_a=True)
        grad_a = matmul(v, matmul(inner, v, adjoint_b=True))
    else:
        _, v = self_adjoint_eig(op.inputs[0])
        grad_a = matmul(v, matmul(_diag(grad_e), v, adjoint_b=True))
    grad_a = _band(grad_a + _adjoint(grad_a), -1, 0)
    return _scale_diag(grad_a, 0.5)


@RegisterGradient("Svd")
def _svd_grad(op, grad_s, grad_u, grad_v):
    """TF's SvdGrad (Giles 2008; Townsend 2016 for reduced u, v).

    Raises:
      NotImplementedError: unknown inner dims, or full_matrices with |m - n| > 1.
    """
    a = op.inputs[0]
    grad_s = _op("Cast", grad_s, DstT=a.dtype.base_dtype) if grad_s.dtype != a.dtype else grad_s
    grad_s_mat = _diag(grad_s)
    if not op.get_attr("compute_uv"):
        _, u, v = _op("Svd", a, compute_uv=True, full_matrices=False)
        grad_a = matmul(u, matmul(grad_s_mat, v, adjoint_b=True))
        grad_a.set_shape(a.shape)
        return grad_a
    m, n = _static_inner(a)
    if a.shape.ndims is None or m is None or n is None:
        raise NotImplementedError("SVD gradient has not been implemented for input with "
                                  "unknown inner matrix shape.")
    s, u, v = op.outputs
    use_adjoint = m > n
    if use_adjoint:   # the gradient of A^H = V S U^H, adjointed at the end
        m, n, u, v, grad_u, grad_v = n, m, v, u, grad_v, grad_u
    full = op.get_attr("full_matrices")
    if full and abs(m - n) > 1:
        raise NotImplementedError("svd gradient is not implemented for abs(m - n) > 1 "
                                  "when full_matrices is True")
    grad_a = _svd_grad_wide(s, u, v, grad_s_mat, grad_u, grad_v, m, n, full, a.dtype)
    if use_adjoint:
        grad_a = _adjoint(grad_a)
    grad_a.set_shape(a.shape)
    return grad_a


def _svd_grad_wide(s, u, v, grad_s_mat, grad_u, grad_v, m, n, full, dtype):
    """The SVD gradient for m <= n (u: [..., m, m], v: [..., n, m or n])."""
    s_mat = _diag(s)
    f = _pairwise_reciprocal(s * s)
    s_inv_mat = _diag(_safe_reciprocal(s))
    v1, grad_v1 = _inner_slice(v, cols=(0, m)), _inner_slice(grad_v, cols=(0, m))
    f_u = f * matmul(u, grad_u, adjoint_a=True)
    v_gv = matmul(v1, grad_v1, adjoint_a=True)
    f_v = f * v_gv
    term1_nouv = (grad_s_mat + matmul(f_u + _adjoint(f_u), s_mat)
                  + matmul(s_mat, f_v + _adjoint(f_v)))
    grad_a = matmul(u, matmul(term1_nouv, v1, adjoint_b=True))
    if m != n:
        gv1t = _adjoint(grad_v1)
        term2_nous = gv1t - matmul(matmul(gv1t, v1), v1, adjoint_b=True)
        if full:
            v2, grad_v2 = _inner_slice(v, cols=(m, n - m)), _inner_slice(grad_v, cols=(m, n - m))
            term2_nous -= matmul(matmul(v1, grad_v2, adjoint_a=True), v2, adjoint_b=True)
        grad_a += matmul(matmul(u, s_inv_mat), term2_nous)
    if dtype.is_complex:
        l = _diag(_diag_part(v_gv))  # noqa: E741 - eye * v_gv
        term3_nouv = matmul(s_inv_mat, _adjoint(l) - l)
        grad_a += 0.5 * matmul(u, matmul(term3_nouv, v1, adjoint_b=True))
    return grad_a
