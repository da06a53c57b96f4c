"""CPU kernels for the regularized incomplete gamma and beta functions (ops/special_ops.py):
Igamma, Igammac, IgammaGradA, RandomGammaGrad and Betainc, without scipy.

The numerics are Cephes' as Eigen carries them for TensorFlow, so edge values and the places
where the method itself is inexact (a capped iteration count) are TF's:
  - P(a, x) = igamma by its power series where x <= 1 or x <= a, else 1 - Q; Q(a, x) = igammac
    by Legendre's continued fraction where x >= 1 and x >= a, else 1 - P. The series runs at
    most 2000 terms (so for a ~ x above ~1e5 it stops short, as TF's does).
  - d/da P (IgammaGradA) and the implicit derivative of a Gamma(a) sample x in a
    (RandomGammaGrad, -(dP/da) / (dP/dx)) differentiate the same series / fraction term by term
    (forward mode), at most 500 terms, stopping on the derivative's convergence.
  - I_x(a, b) = betainc by Cephes' incbet: the power series where b x <= 1 and x <= 0.95 (of
    a, b or, past the mean, of b, a), else one of two continued fractions (300 terms), the
    prefactor x^a (1-x)^b / (a B(a, b)) in logarithms.
Every element iterates in lockstep with the others of its branch and leaves the loop once its
own convergence test holds. Everything computes in float64 and rounds to the input dtype
(float32 is so more accurate than TF's float32 kernels, which run the same loops in float32).
"""

from __future__ import annotations

import math

import numpy as np

from tensorweave.runtime.kernels.cpu.array import invalid, out_np
from tensorweave.runtime.kernels.cpu.math_special import digamma
from tensorweave.runtime.kernels.registry import register_kernel

_MACHEP = 1.11022302462515654042e-16       # Cephes' MACHEP: half of float64's epsilon
_BIG = 4.503599627370496e15                # 2^52: the continued fractions rescale beyond it
_BIGINV = 2.22044604925031308085e-16
_MAXLOG = math.log(np.finfo(np.float64).max)
_MINLOG = math.log(np.finfo(np.float64).tiny)
_VALUE_TERMS, _DERIVATIVE_TERMS, _BETA_TERMS = 2000, 500, 300
_PSERIES_TERMS = 1 << 20                   # a bound only: b x <= 1, x <= 0.95 converges
_LGAMMA = np.frompyfunc(math.lgamma, 1, 1)

VALUE, DERIVATIVE, SAMPLE_DERIVATIVE = "value", "derivative", "sample_derivative"


def _lgamma(x: np.ndarray) -> np.ndarray:
    """log Gamma(x) for x > 0 or inf/nan (the C library's: exact to an ulp or so)."""
    return np.asarray(_LGAMMA(x), dtype=np.float64)


def _lockstep(state: tuple, step, max_iter: int) -> tuple:
    """Runs `step(state) -> (state, done)` on 1-d arrays, elementwise, at most `max_iter`
    rounds; an element keeps the state of the round whose `done` holds for it."""
    final = tuple(s.copy() for s in state)
    idx = np.arange(state[0].shape[0])
    for _ in range(max_iter):
        if idx.size == 0:
            return final
        state, done = step(state)
        if done.any():
            for f, s in zip(final, state):
                f[idx[done]] = s[done]
            keep = ~done
            idx, state = idx[keep], tuple(s[keep] for s in state)
    for f, s in zip(final, state):
        f[idx] = s
    return final


# -- incomplete gamma -------------------------------------------------------------------------
def _log_main_term(a, x):
    """log(x^a e^-x / Gamma(a)), or None where that underflows (or is nan): the term is 0."""
    logax = a * np.log(x) - x - _lgamma(a)
    return np.where((logax < -_MAXLOG) | np.isnan(logax), -np.inf, logax)


def _series(a, x, mode: str) -> np.ndarray:
    """P(a, x) (or its derivative in a, or the sample derivative) by the power series."""
    logax = _log_main_term(a, x)
    ax = np.exp(logax) / a
    one, zero = np.ones_like(a), np.zeros_like(a)
    eps_on_value = mode == VALUE

    def step(s):
        r, c, ans, dc, dans, xs = s
        r = r + 1.0
        term = xs / r
        dc = term * dc - xs / (r * r) * c
        dans = dans + dc
        c = c * term
        ans = ans + c
        done = (c <= _MACHEP * ans) if eps_on_value else (np.abs(dc) <= _MACHEP * np.abs(dans))
        return (r, c, ans, dc, dans, xs), done

    terms = _VALUE_TERMS if eps_on_value else _DERIVATIVE_TERMS
    _, _, ans, _, dans, _ = _lockstep((a.copy(), one, one.copy(), zero, zero.copy(), x), step,
                                      terms)
    dlogax = np.log(x) - digamma(a + 1.0)
    # NOTE: here dP/dx = a ax / x (ax carries 1 / Gamma(a + 1)), hence x / a below
    out = _finish(mode, ans, dans, ax, dlogax, x / a)
    return np.where(ax == 0.0, 0.0, out)


def _finish(mode, ans, dans, ax, dlogax, x):
    if mode == VALUE:
        return ans * ax
    if mode == DERIVATIVE:
        return ans * ax * dlogax + dans * ax
    return -(dans + ans * dlogax) * x


def _continued_fraction(a, x, mode: str) -> np.ndarray:
    """Q(a, x) (or its derivative in a, or the sample derivative's share) by Legendre's
    continued fraction; 0 for x = inf."""
    finite = np.isfinite(x)
    xf = np.where(finite, x, 1.0)
    ax = np.where(finite, np.exp(_log_main_term(a, xf)), 0.0)
    y = 1.0 - a
    z = xf + y + 1.0
    qkm1 = z * xf
    ans = (xf + 1.0) / qkm1
    dqkm1 = -xf
    dans = -ans * dqkm1 / qkm1
    zero = np.zeros_like(a)
    state = (zero, y, z, np.ones_like(a), xf.copy(), xf + 1.0, qkm1, ans, zero.copy(),
             zero.copy(), zero.copy(), dqkm1, dans)
    terms = _VALUE_TERMS if mode == VALUE else _DERIVATIVE_TERMS
    final = _lockstep(state, lambda s: _cf_step(s, mode == VALUE), terms)
    ans, dans = final[7], final[12]
    out = _finish(mode, ans, dans, ax, np.log(xf) - digamma(a), xf)
    return np.where(ax == 0.0, 0.0, out)


def _cf_step(s, eps_on_value: bool):
    c, y, z, pkm2, qkm2, pkm1, qkm1, ans, dpkm2, dqkm2, dpkm1, dqkm1, dans = s
    c, y, z = c + 1.0, y + 1.0, z + 2.0
    yc = y * c
    pk, qk = pkm1 * z - pkm2 * yc, qkm1 * z - qkm2 * yc
    dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c
    dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
    nonzero = qk != 0.0
    safe_qk = np.where(nonzero, qk, 1.0)
    new_ans = np.where(nonzero, pk / safe_qk, ans)
    new_dans = np.where(nonzero, (dpk - new_ans * dqk) / safe_qk, dans)
    if eps_on_value:
        done = nonzero & (np.abs(ans - new_ans) <= _MACHEP * np.abs(new_ans))
    else:
        done = nonzero & (np.abs(new_dans - dans) <= _MACHEP)
    big = np.abs(pk) > _BIG
    scale = np.where(big, _BIGINV, 1.0)
    return (c, y, z, pkm1 * scale, qkm1 * scale, pk * scale, qk * scale, new_ans,
            dpkm1 * scale, dqkm1 * scale, dpk * scale, dqk * scale, new_dans), done


def _flat(*arrays):
    shape = np.broadcast_shapes(*(np.shape(v) for v in arrays))
    return shape, [np.asarray(v, np.float64).ravel() for v in np.broadcast_arrays(*arrays)]


def _igamma_generic(a, x, mode: str) -> np.ndarray:
    """P(a, x) or its derivatives: 0 at x == 0, nan for x < 0, a <= 0 or nan inputs."""
    shape, (a, x) = _flat(a, x)
    out = np.full(a.shape, np.nan)
    with np.errstate(all="ignore"):
        out[x == 0.0] = 0.0
        ok = (x != 0.0) & ~((x < 0.0) | (a <= 0.0) | np.isnan(a) | np.isnan(x))
        cf = ok & (x > 1.0) & (x > a)
        ser = ok & ~cf
        q = _continued_fraction(a[cf], x[cf], mode)
        out[cf] = 1.0 - q if mode == VALUE else -q
        out[ser] = _series(a[ser], x[ser], mode)
    return out.reshape(shape)


def igamma(a, x) -> np.ndarray:
    """The lower regularized incomplete gamma function P(a, x), broadcast, in float64."""
    return _igamma_generic(a, x, VALUE)


def igamma_grad_a(a, x) -> np.ndarray:
    """d P(a, x) / da, broadcast, in float64."""
    return _igamma_generic(a, x, DERIVATIVE)


def random_gamma_grad(alpha, sample) -> np.ndarray:
    """d sample / d alpha for a Gamma(alpha, 1) sample: -(dP/dalpha) / (dP/dx) at x=sample."""
    return _igamma_generic(alpha, sample, SAMPLE_DERIVATIVE)


def igammac(a, x) -> np.ndarray:
    """The upper regularized incomplete gamma function Q(a, x) = 1 - P(a, x), broadcast:
    nan for x < 0, a <= 0 or nan inputs."""
    shape, (a, x) = _flat(a, x)
    out = np.full(a.shape, np.nan)
    with np.errstate(all="ignore"):
        ok = ~((x < 0.0) | (a <= 0.0) | np.isnan(a) | np.isnan(x))
        ser = ok & ((x < 1.0) | (x < a))
        cf = ok & ~ser
        out[ser] = 1.0 - _series(a[ser], x[ser], VALUE)
        out[cf] = _continued_fraction(a[cf], x[cf], VALUE)
    return out.reshape(shape)


# -- incomplete beta --------------------------------------------------------------------------
def _lbeta(a, b):
    return _lgamma(a) + _lgamma(b) - _lgamma(a + b)


def _beta_pseries(a, b, x) -> np.ndarray:
    """I_x(a, b) by the power series (b x small, x not near 1)."""
    ai = 1.0 / a
    u = (1.0 - b) * x
    v = u / (a + 1.0)
    lim = _MACHEP * ai

    def step(st):
        n, t, total, a_, b_, x_, lim_ = st
        t = t * ((n - b_) * x_ / n)
        v = t / (a_ + n)
        return (n + 1.0, t, total + v, a_, b_, x_, lim_), np.abs(v) <= lim_

    # NOTE: the loop tests |v| > lim before its first term (v = t1 may already be tiny)
    more = np.abs(v) > lim
    total = np.zeros_like(a)
    if more.any():
        start = (np.full_like(a, 2.0), u, np.zeros_like(a), a, b, x, lim)
        total[more] = _lockstep(tuple(st[more] for st in start), step, _PSERIES_TERMS)[2]
    s = total + v + ai
    return np.exp(_lgamma(a + b) - _lgamma(a) - _lgamma(b) + a * np.log(x) + np.log(s))


def _beta_cf(a, b, x, small: bool) -> np.ndarray:
    """Cephes' incbcf (`small`: x below the mean) or incbd continued fraction."""
    if small:
        k = (a, a + b, a, a + 1.0, np.ones_like(a), b - 1.0, a + 1.0, a + 2.0)
        step_k2 = 1.0
    else:
        k = (a, b - 1.0, a, a + 1.0, np.ones_like(a), a + b, a + 1.0, a + 2.0)
        step_k2 = -1.0
        x = x / (1.0 - x)
    one, zero = np.ones_like(a), np.zeros_like(a)

    def step(st):
        k1, k2, k3, k4, k5, k6, k7, k8, pkm2, qkm2, pkm1, qkm1, ans, xs = st
        xk = -(xs * k1 * k2) / (k3 * k4)
        pk, qk = pkm1 + pkm2 * xk, qkm1 + qkm2 * xk
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        xk = (xs * k5 * k6) / (k7 * k8)
        pk, qk = pkm1 + pkm2 * xk, qkm1 + qkm2 * xk
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        nonzero = qk != 0.0
        r = np.where(nonzero, pk / np.where(nonzero, qk, 1.0), ans)
        done = nonzero & (np.abs(ans - r) < np.abs(r) * 3.0 * _MACHEP)
        scale = np.where(np.abs(qk) + np.abs(pk) > _BIG, _BIGINV, 1.0)
        scale = np.where((np.abs(qk) < _BIGINV) | (np.abs(pk) < _BIGINV), scale * _BIG, scale)
        return (k1 + 1.0, k2 + step_k2, k3 + 2.0, k4 + 2.0, k5 + 1.0, k6 - step_k2,
                k7 + 2.0, k8 + 2.0, pkm2 * scale, qkm2 * scale, pkm1 * scale, qkm1 * scale, r,
                xs), done

    final = _lockstep(k + (zero, one, one.copy(), one.copy(), one.copy(), x), step,
                      _BETA_TERMS)
    return final[12]


def _beta_cf_branch(a, b, x) -> np.ndarray:
    """I_x(a, b) by a continued fraction times the prefactor, in logarithms; x below the
    mean of the (possibly swapped) pair."""
    xc = 1.0 - x
    small = x * (a + b - 2.0) - (a - 1.0) < 0.0
    w = np.empty_like(a)
    for branch in (True, False):
        m = small == branch
        if m.any():
            w[m] = _beta_cf(a[m], b[m], x[m], branch) / (1.0 if branch else xc[m])
    y = a * np.log(x) + b * np.log(xc) - _lbeta(a, b) + np.log(w / a)
    return np.where(y < _MINLOG, 0.0, np.exp(y))


def betainc(a, b, x) -> np.ndarray:
    """The regularized incomplete beta function I_x(a, b), elementwise on float64 arrays of
    one shape: 0 at x == 0, 1 at x == 1, nan for a <= 0, b <= 0 or x outside [0, 1]."""
    shape, (a, b, x) = _flat(a, b, x)
    out = np.full(a.shape, np.nan)
    with np.errstate(all="ignore"):
        valid = ~((a <= 0.0) | (b <= 0.0))   # NOTE: nan parameters go on, to give nan
        out[valid & (x == 0.0)] = 0.0
        out[valid & (x == 1.0)] = 1.0
        inside = valid & ~((x <= 0.0) | (x >= 1.0))
        direct = inside & (b * x <= 1.0) & (x <= 0.95)
        out[direct] = _beta_pseries(a[direct], b[direct], x[direct])
        rest = inside & ~direct
        out[rest] = _swapped_or_not(a[rest], b[rest], x[rest])
    return out.reshape(shape)


def _swapped_or_not(a, b, x) -> np.ndarray:
    """Past the mean a / (a + b), 1 - I_{1-x}(b, a) (its small results clamped to 1 - eps)."""
    swap = x > a / (a + b)
    aa, bb, xx = np.where(swap, b, a), np.where(swap, a, b), np.where(swap, 1.0 - x, x)
    series = swap & (bb * xx <= 1.0) & (xx <= 0.95)
    t = np.empty_like(a)
    if series.any():
        t[series] = _beta_pseries(aa[series], bb[series], xx[series])
    cf = ~series
    if cf.any():
        t[cf] = _beta_cf_branch(aa[cf], bb[cf], xx[cf])
    flipped = np.where(t <= _MACHEP, 1.0 - _MACHEP, 1.0 - t)
    return np.where(swap, flipped, t)


# -- kernels ----------------------------------------------------------------------------------
def _kernel(fn):
    def factory(node):
        dt = out_np(node)

        def run(*arrays):
            out = fn(*(np.asarray(v) for v in arrays))
            with np.errstate(over="ignore"):  # float32: beyond its range is +-inf, as in TF
                return out.astype(dt, copy=False)

        return run

    return factory


def _check_betainc_shapes(a, b, x) -> None:
    """TF's BetaincOp: the non-scalar inputs must share one shape."""
    shapes = [np.shape(v) for v in (a, b, x)]
    full = [s for s in shapes if s != ()]
    if any(s != full[0] for s in full):
        raise invalid("Shapes of a, b, and x are inconsistent: "
                      + " vs. ".join("[" + ",".join(map(str, s)) + "]" for s in shapes))


def _betainc_checked(a, b, x) -> np.ndarray:
    _check_betainc_shapes(a, b, x)
    return betainc(a, b, x)


register_kernel("Igamma")(_kernel(igamma))
register_kernel("Igammac")(_kernel(igammac))
register_kernel("IgammaGradA")(_kernel(igamma_grad_a))
register_kernel("RandomGammaGrad")(_kernel(random_gamma_grad))
register_kernel("Betainc")(_kernel(_betainc_checked))
