"""Harness cases for the linear-algebra ops (Qr, Svd, SelfAdjointEigV2, MatrixInverse,
MatrixDeterminant, LogMatrixDeterminant, Cholesky, MatrixSolve, MatrixTriangularSolve).

References are computed in float64 with numpy and cast to the case's dtype. Decompositions
whose factors are unique only up to the sign (phase) of each column are compared through
sign-invariant views built in the graph: the elementwise squares (magnitudes) of the factors
and the reconstruction of the input, so the check holds whatever sign convention the kernel
picks. Inputs hold garbage in the triangle an op must not read (Cholesky, eigh, triangular
solves), so reading it shows.
"""

from __future__ import annotations

import numpy as np

from tensorweave.ops import linalg_ops as la
from tensorweave.ops.apply import apply_op as A
from tests.ops.harness import OpCase

F16, F32, F64 = np.float16, np.float32, np.float64
C64, C128 = np.complex64, np.complex128
_RNG = np.random.default_rng(17)


def _tol(dt) -> dict:
    if dt == F16:
        return {"rtol": 2e-2, "atol": 2e-2}
    if dt in (F32, C64):
        return {"rtol": 1e-4, "atol": 1e-4}
    return {"rtol": 1e-9, "atol": 1e-10}


def _rand(shape, dt):
    x = _RNG.uniform(-1, 1, size=shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * _RNG.uniform(-1, 1, size=shape)
    return x.astype(dt)


def _invertible(shape, dt):
    return (_rand(shape, dt) + 3 * np.eye(shape[-1])).astype(dt)


def _hermitian_lower(x):
    """The Hermitian matrix an op reading only x's lower triangle sees (LAPACK takes the real
    part of a complex diagonal)."""
    strict = np.tril(x, -1)
    diag = np.real(np.diagonal(x, axis1=-2, axis2=-1))
    return strict + np.conj(np.swapaxes(strict, -1, -2)) + diag[..., None] * np.eye(x.shape[-1])


def _spd_with_garbage_above(shape, dt):
    """Hermitian positive-definite in the lower triangle; the upper triangle is random."""
    x = _rand(shape, dt).astype(np.complex128 if np.dtype(dt).kind == "c" else F64)
    spd = x @ np.conj(np.swapaxes(x, -1, -2)) + shape[-1] * np.eye(shape[-1])
    garbage = _rand(shape, dt)
    return (np.tril(spd) + np.triu(garbage, 1)).astype(dt)


def _wide(x):
    return x.astype(np.complex128 if x.dtype.kind == "c" else F64)


def _ref(fn):
    """A reference computed in float64 (complex128) and cast back to the input's dtype."""
    def ref(*xs):
        out = fn(*[_wide(x) for x in xs])
        outs = out if isinstance(out, (list, tuple)) else [out]
        cast = [np.asarray(o).astype(xs[0].dtype) for o in outs]
        return cast if isinstance(out, (list, tuple)) else cast[0]
    return ref


def _adj(x):
    return np.conj(np.swapaxes(x, -1, -2))


CASES: list[OpCase] = []


# -- inverse, determinants -------------------------------------------------------------------
for _dt, _shape in ((F32, (3, 3)), (F64, (2, 4, 4)), (F16, (3, 3)), (C128, (2, 3, 3))):
    _n = np.dtype(_dt).name
    CASES += [
        OpCase("MatrixInverse", la.matrix_inverse, [_invertible(_shape, _dt)],
               _ref(np.linalg.inv), name=_n, **_tol(_dt)),
        OpCase("MatrixDeterminant", la.matrix_determinant, [_invertible(_shape, _dt)],
               _ref(np.linalg.det), name=_n, **_tol(_dt)),
        OpCase("LogMatrixDeterminant", lambda x: list(la.log_matrix_determinant(x)),
               [_invertible(_shape, _dt) * -1], _ref(lambda x: list(np.linalg.slogdet(x))),
               name=_n, **_tol(_dt)),
    ]
CASES += [
    OpCase("MatrixInverse", lambda x: la.matrix_inverse(x, adjoint=True),
           [_invertible((2, 3, 3), C64)], _ref(lambda x: np.linalg.inv(_adj(x))),
           name="adjoint_complex64", **_tol(C64)),
    OpCase("MatrixDeterminant", la.matrix_determinant, [np.zeros((2, 0, 0), F32)],
           lambda x: np.ones([2], F32), name="empty_matrices"),
    OpCase("LogMatrixDeterminant", lambda x: list(la.log_matrix_determinant(x)),
           [np.array([[1.0, 2.0], [2.0, 4.0]], F64)],
           lambda x: [np.float64(0.0), np.float64(-np.inf)], name="singular"),
]

# -- Cholesky ------------------------------------------------------------------------------------
for _dt, _shape in ((F32, (3, 3)), (F64, (2, 4, 4)), (F16, (3, 3)), (C128, (3, 3))):
    CASES.append(OpCase("Cholesky", la.cholesky, [_spd_with_garbage_above(_shape, _dt)],
                        _ref(lambda x: np.linalg.cholesky(_hermitian_lower(x))),
                        name=np.dtype(_dt).name, **_tol(_dt)))

# -- solvers -------------------------------------------------------------------------------------
for _dt, (_ma, _mb) in ((F32, ((3, 3), (3, 2))), (F64, ((2, 4, 4), (2, 4, 3))),
                        (F16, ((3, 3), (3, 1))), (C128, ((2, 3, 3), (2, 3, 5)))):
    _n = np.dtype(_dt).name
    _pair = [_invertible(_ma, _dt), _rand(_mb, _dt)]
    CASES += [
        OpCase("MatrixSolve", la.matrix_solve, _pair, _ref(np.linalg.solve), name=_n,
               **_tol(_dt)),
        OpCase("MatrixSolve", lambda a, b: la.matrix_solve(a, b, adjoint=True), _pair,
               _ref(lambda a, b: np.linalg.solve(_adj(a), b)), name=f"adjoint_{_n}",
               **_tol(_dt)),
    ]
    for _lower in (True, False):
        for _adjoint in (False, True):
            _tri = np.tril if _lower else np.triu
            CASES.append(OpCase(
                "MatrixTriangularSolve",
                lambda a, b, lo=_lower, ad=_adjoint: la.matrix_triangular_solve(
                    a, b, lower=lo, adjoint=ad),
                _pair,
                _ref(lambda a, b, t=_tri, ad=_adjoint:
                     np.linalg.solve(_adj(t(a)) if ad else t(a), b)),
                name=f"{'lower' if _lower else 'upper'}{'_adjoint' if _adjoint else ''}_{_n}",
                **_tol(_dt)))
CASES.append(OpCase("MatrixTriangularSolve", la.matrix_triangular_solve,
                    [_invertible((2, 1, 3, 3), F64), _rand((4, 3, 2), F64)],
                    _ref(lambda a, b: np.linalg.solve(np.tril(a), b)), name="broadcast_batch",
                    **_tol(F64)))


# -- self-adjoint eigendecomposition ------------------------------------------------------------
def _eigh_views(compute_v):
    """e; |v|^2 (sign/phase-invariant); v diag(e) v^H (the Hermitian input it read)."""
    def build(x):
        e, v = A("SelfAdjointEigV2", x, compute_v=compute_v)
        if not compute_v:
            return [e, v]
        mag = A("Square", v) if not v.dtype.is_complex else A("ComplexAbs", v,
                                                               Tout=v.dtype.real_dtype)
        vd = v * A("ExpandDims", e, -2)
        return [e, mag, A("BatchMatMulV2", vd, v, adj_y=True)]
    return build


def _eigh_ref(compute_v):
    def ref(x):
        h = _hermitian_lower(_wide(x))
        e, v = np.linalg.eigh(h)
        real = np.finfo(x.dtype).dtype if x.dtype.kind == "c" else x.dtype
        if not compute_v:
            return [e.astype(x.dtype), np.zeros([0], x.dtype)]
        mag = (np.abs(v) if x.dtype.kind == "c" else v * v).astype(real)
        return [e.astype(x.dtype), mag, h.astype(x.dtype)]
    return ref


def _spread(shape, dt):
    """Random (upper triangle never read) with eigenvalues kept apart by diag(0, 2, 4, ..)."""
    return (_rand(shape, dt) + np.diag(np.arange(shape[-1]) * 2.0)).astype(dt)


for _dt, _shape in ((F32, (3, 3)), (F64, (2, 4, 4)), (F16, (3, 3)), (C128, (2, 3, 3))):
    CASES.append(OpCase("SelfAdjointEigV2", _eigh_views(True), [_spread(_shape, _dt)],
                        _eigh_ref(True), name=np.dtype(_dt).name, **_tol(_dt)))
CASES.append(OpCase("SelfAdjointEigV2", _eigh_views(False), [_spread((2, 3, 3), F64)],
                    _eigh_ref(False), name="values_only", **_tol(F64)))


# -- QR --------------------------------------------------------------------------------------------
def _qr_views(full):
    """q^2, r^2 (invariant to the sign of each q column / r row) and q r; for complex
    dtypes q r and q^H q."""
    def build(x):
        q, r = la.qr(x, full_matrices=full)
        qr = A("BatchMatMulV2", q, r)
        if q.dtype.is_complex:
            return [qr, A("BatchMatMulV2", q, q, adj_x=True)]
        return [A("Square", q), A("Square", r), qr]
    return build


def _qr_ref(full):
    def ref(x):
        q, r = np.linalg.qr(_wide(x), mode="complete" if full else "reduced")
        if x.dtype.kind == "c":
            return [x, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2)
                    .astype(x.dtype)]
        return [(q * q).astype(x.dtype), (r * r).astype(x.dtype), x]
    return ref


for _dt, _shape, _full in ((F32, (4, 3), False), (F64, (2, 3, 5), False), (F64, (4, 3), True),
                           (F32, (3, 5), True), (F16, (4, 3), False),
                           (C128, (2, 4, 3), False), (C64, (3, 4), True)):
    CASES.append(OpCase("Qr", _qr_views(_full), [_rand(_shape, _dt)], _qr_ref(_full),
                        name=f"{np.dtype(_dt).name}_{'x'.join(map(str, _shape))}"
                             f"{'_full' if _full else ''}", **_tol(_dt)))


# -- SVD -------------------------------------------------------------------------------------------
def _svd_views(full, compute_uv=True):
    """s; |u|^2, |v|^2 (sign/phase-invariant); u diag(s) v^H (reduced only)."""
    def build(x):
        s, u, v = A("Svd", x, compute_uv=compute_uv, full_matrices=full)
        if not compute_uv:
            return [s, u, v]
        if u.dtype.is_complex:
            mags = [A("ComplexAbs", t, Tout=t.dtype.real_dtype) for t in (u, v)]
        else:
            mags = [A("Square", u), A("Square", v)]
        if full:
            return [s] + mags
        us = u * A("ExpandDims", s, -2)
        return [s] + mags + [A("BatchMatMulV2", us, v, adj_y=True)]
    return build


def _svd_ref(full, compute_uv=True):
    def ref(x):
        u, s, vh = np.linalg.svd(_wide(x), full_matrices=full)
        s = s.astype(x.dtype)
        if not compute_uv:
            return [s, np.zeros([0], x.dtype), np.zeros([0], x.dtype)]
        v = _adj(vh)
        if x.dtype.kind == "c":
            real = np.finfo(x.dtype).dtype
            mags = [np.abs(u).astype(real), np.abs(v).astype(real)]
        else:
            mags = [(u * u).astype(x.dtype), (v * v).astype(x.dtype)]
        return [s] + mags + ([] if full else [x])
    return ref


for _dt, _shape, _full in ((F32, (4, 3), False), (F64, (2, 3, 5), False), (F64, (4, 3), True),
                           (F32, (2, 3), True), (F16, (3, 4), False),
                           (C128, (2, 4, 3), False)):
    CASES.append(OpCase("Svd", _svd_views(_full), [_rand(_shape, _dt)], _svd_ref(_full),
                        name=f"{np.dtype(_dt).name}_{'x'.join(map(str, _shape))}"
                             f"{'_full' if _full else ''}", **_tol(_dt)))
CASES.append(OpCase("Svd", _svd_views(False, compute_uv=False), [_rand((2, 5, 3), F64)],
                    _svd_ref(False, compute_uv=False), name="values_only", **_tol(F64)))
