"""Linear-algebra ops (TF's linalg_ops.cc): Qr, Svd, SelfAdjointEigV2, MatrixInverse,
MatrixDeterminant, LogMatrixDeterminant, Cholesky, MatrixSolve, MatrixTriangularSolve, and the
Python API on them (tf.linalg.qr/inv/det/slogdet/cholesky/solve/triangular_solve/eigh/svd,
with TF1's aliases tf.qr, tf.matrix_inverse, ...).

Every op works on the innermost two dimensions and treats the others as batch dimensions.
Shape functions follow TF's, messages included: a non-square matrix where a square one is
needed fails at construction ("Dimensions must be equal, but are 3 and 4"), as does a rank
below 2 ("Shape must be at least rank 2 but is rank 1").
"""

from __future__ import annotations

from tensorweave.framework.scopes import name_scope
from tensorweave.ops.apply import apply_op
from tensorweave.ops.joining_ops import merge_dims
from tensorweave.ops.math_ops import log, real
from tensorweave.ops.reduction_ops import reduce_sum
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape, broadcast_shapes

_TYPES = "{double, float, half, complex64, complex128}"
_DET_TYPES = "{half, float, double, complex64, complex128}"
_TRSV_TYPES = "{bfloat16, double, float, half, complex64, complex128}"


# -- shape functions (TF's linalg_ops.cc helpers) -----------------------------------------------
def _rank_at_least_2(ctx, i: int):
    """Input `i`'s dims (None for unknown rank); fails below rank 2 (WithRankAtLeast)."""
    dims = ctx.input_dims(i)
    if dims is not None and len(dims) < 2:
        raise ctx.fail(f"Shape must be at least rank 2 but is rank {len(dims)}")
    return dims


def _merge_dim(ctx, a, b):
    """InferenceContext::Merge on two dims (None = unknown)."""
    if a is not None and b is not None and a != b:
        raise ctx.fail(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _min_dim(a, b):
    """InferenceContext::Min: a known 0 wins over an unknown dim."""
    if a == 0 or b == 0:
        return 0
    if a is None or b is None:
        return None
    return min(a, b)


def _shape(batch, *inner) -> TensorShape:
    """batch + inner dims; unknown rank when the batch dims are (None)."""
    return TensorShape(None if batch is None else tuple(batch) + inner)


def _batch_square(ctx, i: int = 0):
    """MakeBatchSquareMatrix: (batch dims or None, the merged square dim)."""
    dims = _rank_at_least_2(ctx, i)
    if dims is None:
        return None, None
    return dims[:-2], _merge_dim(ctx, dims[-2], dims[-1])


def _square_unchanged_shape(ctx) -> TensorShape:
    batch, n = _batch_square(ctx)
    return _shape(batch, n, n)


def _determinant_shape(ctx):
    """[..., M, M] -> [...]; the dims merge as (-1, -2), so messages name N first."""
    dims = _rank_at_least_2(ctx, 0)
    if dims is None:
        return TensorShape(None)
    _merge_dim(ctx, dims[-1], dims[-2])
    return TensorShape(dims[:-2])


def _log_determinant_shape(ctx):
    out = _determinant_shape(ctx)
    return [out, out]


def _solve_shape(ctx) -> TensorShape:
    """MatrixSolveShapeFn(square=True): [..., M, M], [..., M, K] -> [..., M, K] (batch dims
    must be equal)."""
    batch, n = _batch_square(ctx, 0)
    rhs = _rank_at_least_2(ctx, 1)
    batch = merge_dims(ctx, batch, None if rhs is None else rhs[:-2])
    n = _merge_dim(ctx, n, None if rhs is None else rhs[-2])
    return _shape(batch, n, None if rhs is None else rhs[-1])


def _triangular_solve_shape(ctx) -> TensorShape:
    """MatrixTriangularSolveShapeFn: as MatrixSolve, but the batch dims broadcast."""
    lhs_batch, m = _batch_square(ctx, 0)
    rhs = _rank_at_least_2(ctx, 1)
    batch = _broadcast_batch(ctx, lhs_batch, None if rhs is None else rhs[:-2])
    m = _merge_dim(ctx, m, None if rhs is None else rhs[-2])
    return _shape(batch, m, None if rhs is None else rhs[-1])


def _broadcast_batch(ctx, a, b):
    if a is None or b is None:
        return None
    try:
        return broadcast_shapes(TensorShape(list(a)), TensorShape(list(b))).as_tuple()
    except ValueError:
        n = max(len(a), len(b))
        a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
        p, q = next((p, q) for p, q in zip(a, b)
                    if p not in (1, None) and q not in (1, None) and p != q)
        raise ctx.fail(f"Dimensions must be equal, but are {p} and {q}") from None


def _eig_shape(ctx):
    """[..., N, N] -> e [..., N]; v [..., N, N], or [0] without compute_v."""
    batch, n = _batch_square(ctx)
    v = _shape(batch, n, n) if ctx.attr("compute_v") else TensorShape([0])
    return [_shape(batch, n), v]


def _matrix_dims(ctx):
    """(batch dims or None, M, N) of a [..., M, N] input."""
    dims = _rank_at_least_2(ctx, 0)
    if dims is None:
        return None, None, None
    return dims[:-2], dims[-2], dims[-1]


def _qr_shape(ctx):
    """q [..., M, M], r [..., M, N] (full_matrices) or q [..., M, P], r [..., P, N]."""
    batch, m, n = _matrix_dims(ctx)
    if ctx.attr("full_matrices"):
        return [_shape(batch, m, m), _shape(batch, m, n)]
    p = _min_dim(m, n)
    return [_shape(batch, m, p), _shape(batch, p, n)]


def _svd_shape(ctx):
    """s [..., P]; u, v [..., M, M], [..., N, N] (full_matrices) or [..., M, P], [..., N, P];
    [0], [0] without compute_uv."""
    batch, m, n = _matrix_dims(ctx)
    p = _min_dim(m, n)
    s = _shape(batch, p)
    if not ctx.attr("compute_uv"):
        return [s, TensorShape([0]), TensorShape([0])]
    if ctx.attr("full_matrices"):
        return [s, _shape(batch, m, m), _shape(batch, n, n)]
    return [s, _shape(batch, m, p), _shape(batch, n, p)]


# -- op registrations (TF's exact specs) ----------------------------------------------------------
register_op("MatrixDeterminant", inputs=["input: T"], outputs=["output: T"],
            attrs=[f"T: {_DET_TYPES}"], shape_fn=_determinant_shape)
register_op("LogMatrixDeterminant", inputs=["input: T"],
            outputs=["sign: T", "log_abs_determinant: T"], attrs=[f"T: {_DET_TYPES}"],
            shape_fn=_log_determinant_shape)
register_op("MatrixInverse", inputs=["input: T"], outputs=["output: T"],
            attrs=["adjoint: bool = false", f"T: {_TYPES}"], shape_fn=_square_unchanged_shape)
register_op("Cholesky", inputs=["input: T"], outputs=["output: T"], attrs=[f"T: {_TYPES}"],
            shape_fn=_square_unchanged_shape)
register_op("SelfAdjointEigV2", inputs=["input: T"], outputs=["e: T", "v: T"],
            attrs=["compute_v: bool = true", f"T: {_TYPES}"], shape_fn=_eig_shape)
register_op("MatrixSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
            attrs=["adjoint: bool = false", f"T: {_TYPES}"], shape_fn=_solve_shape)
register_op("MatrixTriangularSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
            attrs=["lower: bool = true", "adjoint: bool = false", f"T: {_TRSV_TYPES}"],
            shape_fn=_triangular_solve_shape)
register_op("Qr", inputs=["input: T"], outputs=["q: T", "r: T"],
            attrs=["full_matrices: bool = false", f"T: {_TYPES}"], shape_fn=_qr_shape)
register_op("Svd", inputs=["input: T"], outputs=["s: T", "u: T", "v: T"],
            attrs=["compute_uv: bool = true", "full_matrices: bool = false", f"T: {_TYPES}"],
            shape_fn=_svd_shape)


# -- Python API (TF1 signatures; ops named as TF names them) ------------------------------------
def qr(input, full_matrices=False, name=None):  # noqa: A002 - TF's argument name
    """The QR decomposition of each inner matrix: `input = q @ r`, q orthonormal columns, r
    upper triangular. Returns (q, r); shapes as the `Qr` op's (reduced unless
    `full_matrices`)."""
    q, r = apply_op("Qr", input, full_matrices=full_matrices, name=name)
    return q, r


def matrix_inverse(input, adjoint=False, name=None):  # noqa: A002
    """The inverse of each inner square matrix (of its adjoint when `adjoint`). Running it
    on a singular matrix raises InvalidArgumentError("Input is not invertible.")."""
    return apply_op("MatrixInverse", input, adjoint=adjoint, name=name)


def matrix_determinant(input, name=None):  # noqa: A002
    """The determinant of each inner square matrix: [..., M, M] -> [...]."""
    return apply_op("MatrixDeterminant", input, name=name)


def log_matrix_determinant(input, name=None):  # noqa: A002
    """(sign, log |det|) of each inner square matrix; det = sign * exp(log_abs_determinant)."""
    sign, log_abs = apply_op("LogMatrixDeterminant", input, name=name)
    return sign, log_abs


def cholesky(input, name=None):  # noqa: A002
    """The lower-triangular L with `input = L @ L^H`, reading only the lower triangle. A
    matrix that is not positive definite raises InvalidArgumentError when run."""
    return apply_op("Cholesky", input, name=name)


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    """X with `matrix @ X = rhs` (`adjoint(matrix) @ X = rhs` when `adjoint`)."""
    return apply_op("MatrixSolve", matrix, rhs, adjoint=adjoint, name=name)


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """X with `matrix @ X = rhs`, reading only the lower (`lower`) or upper triangle of
    `matrix`; batch dims broadcast."""
    return apply_op("MatrixTriangularSolve", matrix, rhs, lower=lower, adjoint=adjoint,
                    name=name)


def self_adjoint_eig(tensor, name=None):
    """(e, v): eigenvalues (ascending) and eigenvectors (columns) of each inner self-adjoint
    matrix, reading only its lower triangle."""
    e, v = apply_op("SelfAdjointEigV2", tensor, compute_v=True, name=name)
    return e, v


def self_adjoint_eigvals(tensor, name=None):
    """The eigenvalues (ascending) of each inner self-adjoint matrix."""
    e, _ = apply_op("SelfAdjointEigV2", tensor, compute_v=False, name=name)
    return e


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """The singular values s (descending) of each inner matrix, and with `compute_uv` the
    singular vectors: `tensor = u @ diag(s) @ adjoint(v)`. Returns (s, u, v), or s alone."""
    s, u, v = apply_op("Svd", tensor, compute_uv=compute_uv, full_matrices=full_matrices,
                       name=name)
    s = real(s)
    return (s, u, v) if compute_uv else s


def cholesky_solve(chol, rhs, name=None):
    """X with `A @ X = rhs`, given `chol = cholesky(A)`: two triangular solves."""
    with name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, adjoint=False, lower=True)
        return matrix_triangular_solve(chol, y, adjoint=True, lower=True)


def logdet(matrix, name=None):
    """log(det(matrix)) of each inner Hermitian positive-definite matrix, through its
    Cholesky factor: 2 * sum(log(real(diag(chol))))."""
    with name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        diag = real(apply_op("MatrixDiagPart", chol))
        return 2.0 * reduce_sum(log(diag), axis=[-1])


__all__ = ["qr", "matrix_inverse", "matrix_determinant", "log_matrix_determinant", "cholesky",
           "matrix_solve", "matrix_triangular_solve", "self_adjoint_eig",
           "self_adjoint_eigvals", "svd", "cholesky_solve", "logdet"]
