"""CPU kernels for the linear-algebra ops, on np.linalg (batched over the leading dims).

numpy has no half-precision LAPACK: half inputs are computed in float32 and the results cast
back, so every output has exactly the op's dtype. Runtime errors carry TF's kernel messages
("Input is not invertible.", "Cholesky decomposition was not successful. ...").
"""

from __future__ import annotations

import numpy as np

from tensorweave.runtime.kernels.cpu.array import fmt_shape, invalid, out_np
from tensorweave.runtime.kernels.registry import register_kernel

_LinAlgError = np.linalg.LinAlgError
_CHOLESKY_FAILED = "Cholesky decomposition was not successful. The input might not be valid."
_EIG_FAILED = ("Self-adjoint eigen decomposition was not successful. The input might not be "
               "valid.")


# -- helpers ---------------------------------------------------------------------------------------
def _work(x) -> np.ndarray:
    """`x` as an array numpy's LAPACK accepts (half -> float32)."""
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _cast(x, dt) -> np.ndarray:
    return np.asarray(x).astype(dt, copy=False)


def _adjoint(x: np.ndarray) -> np.ndarray:
    x = np.swapaxes(x, -1, -2)
    return np.conj(x) if np.iscomplexobj(x) else x


def _check_rank(x: np.ndarray, i: int = 0) -> None:
    if x.ndim < 2:
        raise invalid(f"Input tensor {i} must have rank >= 2, got {x.ndim}")


def _check_square(x: np.ndarray) -> None:
    _check_rank(x)
    if x.shape[-1] != x.shape[-2]:
        raise invalid("Input matrix must be square.")


def _check_solver(a: np.ndarray, b: np.ndarray) -> None:
    """TF's LinearAlgebraOp::AnalyzeInputs + ValidateSquareSolver."""
    _check_rank(a)
    if a.ndim != b.ndim:
        raise invalid("All input tensors must have the same rank.")
    if a.shape[:-2] != b.shape[:-2]:
        raise invalid("All input tensors must have the same outer dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise invalid("First input (lhs) must be a square matrix.")
    if a.shape[-2] != b.shape[-2]:
        raise invalid("Input matrix and rhs are incompatible.")


def _check_determinant_input(x: np.ndarray) -> None:
    if x.ndim < 2:
        raise invalid(f"Input must be at least 2-dim, received shape: {fmt_shape(x.shape)}")
    if x.shape[-1] != x.shape[-2]:
        raise invalid(f"Input matrices must be squares, got {x.shape[-2]} != {x.shape[-1]}")


# -- kernels ---------------------------------------------------------------------------------------
@register_kernel("MatrixDeterminant")
def _matrix_determinant(node):
    dt = out_np(node)

    def run(x):
        x = _work(x)
        _check_determinant_input(x)
        return _cast(np.linalg.det(x), dt)
    return run


@register_kernel("LogMatrixDeterminant")
def _log_matrix_determinant(node):
    dt = out_np(node)

    def run(x):
        x = _work(x)
        _check_determinant_input(x)
        sign, log_abs = np.linalg.slogdet(x)
        return _cast(sign, dt), _cast(log_abs, dt)
    return run


@register_kernel("MatrixInverse")
def _matrix_inverse(node):
    dt, adjoint = out_np(node), bool(node.attr("adjoint"))

    def run(x):
        x = _work(x)
        _check_square(x)
        try:
            inv = np.linalg.inv(_adjoint(x) if adjoint else x)
        except _LinAlgError:
            raise invalid("Input is not invertible.") from None
        return _cast(inv, dt)
    return run


@register_kernel("Cholesky")
def _cholesky(node):
    dt = out_np(node)

    def run(x):
        x = _work(x)
        _check_square(x)
        try:
            chol = np.linalg.cholesky(x)   # NOTE: LAPACK potrf('L') reads the lower triangle only
        except _LinAlgError:
            raise invalid(_CHOLESKY_FAILED) from None
        if not np.all(np.isfinite(chol)):
            raise invalid(_CHOLESKY_FAILED)
        return _cast(chol, dt)
    return run


@register_kernel("MatrixSolve")
def _matrix_solve(node):
    dt, adjoint = out_np(node), bool(node.attr("adjoint"))

    def run(matrix, rhs):
        a, b = _work(matrix), _work(rhs)
        _check_solver(a, b)
        try:
            x = np.linalg.solve(_adjoint(a) if adjoint else a, b)
        except _LinAlgError:
            raise invalid("Input matrix is not invertible.") from None
        return _cast(x, dt)
    return run


@register_kernel("MatrixTriangularSolve")
def _matrix_triangular_solve(node):
    dt, adjoint, lower = out_np(node), bool(node.attr("adjoint")), bool(node.attr("lower"))
    triangle = np.tril if lower else np.triu

    def run(matrix, rhs):
        a, b = _work(matrix), _work(rhs)
        _check_triangular_inputs(a, b)
        a = triangle(a)
        if a.size and np.min(np.abs(np.diagonal(a, axis1=-2, axis2=-1))) == 0:
            raise invalid("Input matrix is not invertible.")
        x = np.linalg.solve(_adjoint(a) if adjoint else a, b)
        return _cast(x, dt)
    return run


def _check_triangular_inputs(a: np.ndarray, b: np.ndarray) -> None:
    """TF's MatrixTriangularSolveOp checks; batch dims broadcast."""
    if a.ndim < 2:
        raise invalid(f"In[0] ndims must be >= 2: {a.ndim}")
    if b.ndim < 2:
        raise invalid(f"In[1] ndims must be >= 2: {b.ndim}")
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise invalid(f"In[0] and In[1] must have compatible batch dimensions: "
                      f"{fmt_shape(a.shape)} vs. {fmt_shape(b.shape)}") from None
    if a.shape[-1] != a.shape[-2] or a.shape[-1] != b.shape[-2]:
        raise invalid(f"In[0] mismatch In[1] shape: {a.shape[-1]} vs. {b.shape[-2]}: "
                      f"{fmt_shape(a.shape)} {fmt_shape(b.shape)} 0 0")


@register_kernel("SelfAdjointEigV2")
def _self_adjoint_eig(node):
    dt, compute_v = out_np(node), bool(node.attr("compute_v"))

    def run(x):
        x = _work(x)
        _check_square(x)
        try:
            if not compute_v:
                return _cast(np.linalg.eigvalsh(x), dt), np.zeros([0], dt)
            e, v = np.linalg.eigh(x)   # NOTE: UPLO='L', as TF reads the lower triangle only
        except _LinAlgError:
            raise invalid(_EIG_FAILED) from None
        return _cast(e, dt), _cast(v, dt)
    return run


@register_kernel("Qr")
def _qr(node):
    dt = out_np(node)
    mode = "complete" if node.attr("full_matrices") else "reduced"

    def run(x):
        x = _work(x)
        _check_rank(x)
        q, r = np.linalg.qr(x, mode=mode)
        return _cast(q, dt), _cast(r, dt)
    return run


@register_kernel("Svd")
def _svd(node):
    dt = out_np(node)
    compute_uv, full = bool(node.attr("compute_uv")), bool(node.attr("full_matrices"))

    def run(x):
        x = _work(x)
        _check_rank(x)
        if not compute_uv:
            empty = np.zeros([0], dt)
            return _cast(np.linalg.svd(x, compute_uv=False), dt), empty, empty.copy()
        u, s, vh = np.linalg.svd(x, full_matrices=full)
        return _cast(s, dt), _cast(u, dt), _cast(_adjoint(vh), dt)
    return run
