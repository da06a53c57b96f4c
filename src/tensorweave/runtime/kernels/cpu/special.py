"""CPU kernels for Zeta, Polygamma (ops/special_ops.py) and MirrorPadGrad, without scipy.

`zeta` is the Hurwitz zeta function as Eigen (Cephes' `zeta.c`) computes it for TensorFlow:
the first terms summed directly, then the Euler–Maclaurin tail (the integral and up to 12
Bernoulli correction terms), each phase stopping early once a term falls below machine epsilon
relative to the sum. Edge values are TF's: a pole (+inf) at x == 1; nan for x < 1; for q <= 0,
+inf at an integer q when x is an even integer, nan when q is an integer otherwise or x is not an
integer. `polygamma(n, x)` is digamma(x) for n == 0 and (-1)^(n+1) n! zeta(n+1, x) for integer
n >= 1 (nan for other n).

Both compute in float64 and round to the input dtype: for float32 this is more accurate than
TF's float32 kernel, which sums in float32, overflows n! for n >= 35 and stops its direct sum
after 9 terms (so its float32 zeta is wrong for q < -9); elsewhere the two agree to float32's
resolution (F32_TF_ARTIFACTS in tests/ops/cases_special.py lists where they do not). For
q < 0 the terms before the last nine skip Eigen's early-stop test (no value in TF's table moves).
"""

from __future__ import annotations

import math

import numpy as np

from tensorweave.runtime.kernels.cpu.array import fmt_shape, invalid, out_np
from tensorweave.runtime.kernels.cpu.math_special import digamma
from tensorweave.runtime.kernels.registry import register_kernel

_MACHEP = 1.11022302462515654042e-16  # Cephes' MACHEP: half of float64's epsilon
# (2k)! / B_2k: the Euler–Maclaurin coefficients of Cephes' zeta.c
_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
      7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
      -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
_DIRECT_TERMS = 9         # direct-sum terms after q (more when q < 0, until q + N > 9)
_LOCKSTEP_MAX = 64        # extra terms summed in lockstep; beyond, per element in chunks
_CHUNK = 1 << 16
_FACTORIALS = np.array([float(math.factorial(k)) for k in range(171)])  # 171! overflows


# -- Hurwitz zeta -----------------------------------------------------------------------------
def zeta(x, q) -> np.ndarray:
    """Hurwitz zeta(x, q) = sum_k (q + k)^-x, broadcast, in float64 (TF's edge values)."""
    shape = np.broadcast_shapes(np.shape(x), np.shape(q))
    x, q = (a.astype(np.float64).ravel() for a in np.broadcast_arrays(x, q))
    out = np.full(x.shape, np.nan)
    with np.errstate(all="ignore"):
        compute = _fill_edges(x, q, out)
        if compute.any():
            out[compute] = _euler_maclaurin(x[compute], q[compute])
    return out.reshape(shape)


def _fill_edges(x, q, out) -> np.ndarray:
    """Writes the pole and the q <= 0 poles into `out` (nan is preset); returns the mask of
    elements the series computes."""
    x_int = x == np.floor(x)
    x_even = np.rint(0.5 * x) == 0.5 * x
    q_nonpos, q_int = q <= 0, q == np.floor(q)
    out[x == 1.0] = np.inf
    out[(x > 1.0) & q_nonpos & q_int & x_even] = np.inf
    return (x > 1.0) & ~(q_nonpos & (q_int | ~x_int))


def _euler_maclaurin(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """zeta for 1-d x > 1 and q > 0 (or q < 0 non-integer with x an integer)."""
    s = np.power(q, -x)
    extra = np.where(q < 0, np.floor(-q) + 1.0, 0.0)  # terms until q + extra > 0
    s = _add_leading_terms(s, x, q, extra)
    a, done = q + extra, np.zeros(x.shape, bool)
    for _ in range(_DIRECT_TERMS):
        a = a + 1.0
        b = np.power(a, -x)
        s = np.where(done, s, s + b)
        done |= np.abs(b / s) < _MACHEP
    # NOTE: b == 0 makes the tail 0 (Eigen returns early: the tail's terms could reach inf * 0)
    done |= b == 0.0
    return np.where(done, s, _tail(s, x, a, b, ~done))


def _add_leading_terms(s, x, q, extra) -> np.ndarray:
    """`s` plus sum_{k=1..extra} (q + k)^-x (q < 0: the terms before the last nine)."""
    s = s.copy()
    small = extra <= _LOCKSTEP_MAX
    for k in range(1, int(extra[small].max(initial=0.0)) + 1):
        m = small & (extra >= k)
        s[m] += np.power(q[m] + k, -x[m])
    for i in np.flatnonzero(~small):
        s[i] = _power_sum(s[i], q[i], x[i], int(extra[i]))
    return s


def _power_sum(total: float, q: float, x: float, count: int) -> float:
    """total + (q + 1)^-x + ... + (q + count)^-x, added one by one as Eigen does (the terms
    may nearly cancel), in chunks: count may be large for very negative q."""
    for start in range(1, count + 1, _CHUNK):
        k = np.arange(start, min(start + _CHUNK, count + 1), dtype=np.float64)
        terms = np.concatenate(([total], np.power(q + k, -x)))
        total = float(np.add.accumulate(terms)[-1])
    return total


def _tail(s, x, w, b, active) -> np.ndarray:
    """The Euler–Maclaurin remainder after the direct sum ending at term b = w^-x."""
    s = s + b * w / (x - 1.0)
    s = s - 0.5 * b
    fa, k = np.ones_like(x), 0.0
    for coef in _A:
        fa = fa * (x + k)
        b = b / w
        t = fa * b / coef
        s = np.where(active, s + t, s)
        active = active & ~(np.abs(t / s) < _MACHEP)
        if not active.any():
            break
        fa = fa * (x + k + 1.0)
        b = b / w
        k += 2.0
    return s


# -- polygamma --------------------------------------------------------------------------------
def polygamma(n, x) -> np.ndarray:
    """psi^(n)(x), broadcast, in float64: nan unless n is a non-negative integer."""
    shape = np.broadcast_shapes(np.shape(n), np.shape(x))
    n, x = (a.astype(np.float64).ravel() for a in np.broadcast_arrays(n, x))
    out = np.full(x.shape, np.nan)
    with np.errstate(all="ignore"):
        valid = (n == np.floor(n)) & (n >= 0)
        psi = valid & (n == 0)
        out[psi] = digamma(x[psi])
        higher = valid & (n > 0)
        m = n[higher]
        out[higher] = np.power(-1.0, m + 1.0) * _factorial(m) * zeta(m + 1.0, x[higher])
    return out.reshape(shape)


def _factorial(n: np.ndarray) -> np.ndarray:
    """n! for non-negative integer-valued floats (+inf from 171 on, as exp(lgamma(n + 1)))."""
    return np.where(n <= 170, _FACTORIALS[np.minimum(n, 170).astype(np.int64)], np.inf)


def _binary_kernel(fn):
    def factory(node):
        dt = out_np(node)

        def run(a, b):
            out = fn(np.asarray(a), np.asarray(b))
            with np.errstate(over="ignore"):  # float32: beyond its range is +-inf, as in TF
                return out.astype(dt, copy=False)

        return run

    return factory


register_kernel("Zeta")(_binary_kernel(zeta))
register_kernel("Polygamma")(_binary_kernel(polygamma))


# -- MirrorPadGrad ----------------------------------------------------------------------------
@register_kernel("MirrorPadGrad", forwards_input=True)
def _mirror_pad_grad(node):
    """Folds the borders MirrorPad added back onto the interior: each padded element's value is
    added to the element it mirrors, one axis after another (TF's MirrorPadGradOp)."""
    offset = 0 if node.attr("mode") == "REFLECT" else 1

    def run(grad, paddings):
        grad = np.asarray(grad)
        out = grad
        for axis, (before, after) in enumerate(_fold_paddings(grad.shape, paddings, offset)):
            if before or after:
                out = _fold_axis(out, axis, before, after, offset)
        return out if out is grad else np.ascontiguousarray(out)

    return run


def _fold_paddings(shape, paddings, offset: int) -> list:
    """The (before, after) pairs, checked as TF's MirrorPadGradOp checks them."""
    p = np.asarray(paddings)
    if p.ndim != 2 or p.shape[1] != 2:
        raise invalid(f"paddings must be a matrix with 2 columns: {fmt_shape(p.shape)}")
    if p.shape[0] != len(shape):
        raise invalid(f"The first dimension of paddings must be the rank of inputs"
                      f"{fmt_shape(p.shape)} {fmt_shape(shape)}")
    pads = [(int(b), int(a)) for b, a in p.tolist()]
    for size, (before, after) in zip(shape, pads):
        _check_fold(size, before, after, offset)
    return pads


def _check_fold(size: int, before: int, after: int, offset: int) -> None:
    if before < 0 or after < 0:
        raise invalid(f"Paddings must be non-negative: {before}, {after}")
    total = before + after
    if not total < size:
        raise invalid(f"Total paddings must be less than the input dimension size: {total} "
                      f"was not less than {size}")
    n = size - total
    if offset == 0 and not (before < n and after < n):
        raise invalid(f"paddings must be less than the output dimension size: {before}, "
                      f"{after} not less than {n}")
    if offset == 1 and not (before <= n and after <= n):
        raise invalid(f"paddings must be no greater than the output dimension size: {before}, "
                      f"{after} greater than {n}")


def _fold_axis(g: np.ndarray, axis: int, before: int, after: int, offset: int) -> np.ndarray:
    """`g` with `before`/`after` border rows of `axis` added onto the rows they mirror
    (REFLECT: offset 0, the edge row is not repeated; SYMMETRIC: offset 1, it is)."""
    g = np.moveaxis(g, axis, 0)
    n = g.shape[0] - before - after
    core = g[before:before + n].copy()
    if before:
        core[1 - offset:before + 1 - offset] += g[before - 1::-1]
    if after:
        core[n - 1 - after + offset:n - 1 + offset] += g[:before + n - 1:-1]
    return np.moveaxis(core, 0, axis)
