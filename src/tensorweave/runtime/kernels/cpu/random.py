"""CPU kernels for random ops.

Each random node owns a numpy `Generator` seeded from its `(seed, seed2)` attrs, created once
per session (kept in the device's resource container, as TF keeps stateful kernels in the
session's OpSegment), so every plan of a session continues one sequence and a new session
replays a seeded node's sequence from the start. `(0, 0)` seeds from OS entropy. Outputs have
the op's declared dtype; half and bfloat16 are drawn in float32 and cast.
Thread-safety: numpy generators lock per call, so concurrent steps may share one.
"""

from __future__ import annotations

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.registry import register_kernel

_CONTAINER = "__random_ops"
_NATIVE = (np.dtype(np.float32), np.dtype(np.float64))


def _invalid(message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, message)


def _rng(node) -> np.random.Generator:
    """The node's generator: one per (session, node), seeded from (seed, seed2)."""
    seed, seed2 = int(node.attr("seed") or 0), int(node.attr("seed2") or 0)

    def create():
        if seed == 0 and seed2 == 0:
            return np.random.default_rng()
        return np.random.default_rng([seed & 0xFFFFFFFFFFFFFFFF, seed2 & 0xFFFFFFFFFFFFFFFF])

    if node.resources is None:
        return create()
    return node.resources.lookup_or_create(_CONTAINER, node.name, create)


def _dims(shape) -> tuple:
    """A shape tensor's value as a tuple of non-negative ints."""
    arr = np.asarray(shape)
    if arr.ndim != 1:
        raise _invalid(f"shape must be a vector of {{int32,int64}}, got shape "
                       f"[{','.join(map(str, arr.shape))}]")
    dims = tuple(int(d) for d in arr)
    if any(d < 0 for d in dims):
        raise _invalid(f"Dimension {min(dims)} must be >= 0")
    return dims


def _float_kernel(draw):
    """A kernel factory for ops `shape -> floats` drawing with `draw(rng, dims, dtype)`."""

    def factory(node):
        rng = _rng(node)
        want = node.attr("dtype").np_dtype
        native = want if want in _NATIVE else np.dtype(np.float32)

        def run(shape):
            out = draw(rng, _dims(shape), native)
            return out if native == want else out.astype(want)

        return run

    return factory


def _standard_normal(rng, dims, dtype):
    return rng.standard_normal(dims, dtype=dtype)


def _truncated_normal(rng, dims, dtype):
    """Standard normal samples; those with |x| >= 2 are drawn again."""
    out = rng.standard_normal(dims, dtype=dtype)
    bad = np.abs(out) >= 2
    while bad.any():
        out[bad] = rng.standard_normal(int(bad.sum()), dtype=dtype)
        bad = np.abs(out) >= 2
    return out


register_kernel("RandomStandardNormal")(_float_kernel(_standard_normal))
register_kernel("TruncatedNormal")(_float_kernel(_truncated_normal))


@register_kernel("RandomUniform")
def _random_uniform(node):
    rng = _rng(node)
    want = node.attr("dtype").np_dtype
    native = want if want in _NATIVE else np.dtype(np.float32)
    below_one = np.nextafter(want.type(1), want.type(0))

    def run(shape):
        out = rng.random(_dims(shape), dtype=native)
        if native == want:
            return out
        return np.minimum(out.astype(want), below_one)  # NOTE: rounding may reach 1.0

    return run


@register_kernel("RandomUniformInt")
def _random_uniform_int(node):
    rng = _rng(node)
    dtype = node.attr("Tout").np_dtype

    def run(shape, minval, maxval):
        lo, hi = int(minval), int(maxval)
        if lo >= hi:
            raise _invalid(f"Need minval < maxval: {lo} >= {hi}")
        return rng.integers(lo, hi, size=_dims(shape), dtype=dtype)

    return run


@register_kernel("Multinomial")
def _multinomial(node):
    rng = _rng(node)
    dtype = node.attr("output_dtype").np_dtype

    def run(logits, num_samples):
        n = int(num_samples)
        logits = np.asarray(logits, np.float64)
        _check_multinomial(logits, n)
        batch, classes = logits.shape
        if n == 0 or batch == 0:
            return np.zeros((batch, n), dtype)
        cdf = _row_cdfs(logits)
        offsets = np.arange(batch)[:, None]
        u = rng.random((batch, n)) + offsets
        idx = np.searchsorted((cdf + offsets).ravel(), u.ravel(), side="right")
        out = idx.reshape(batch, n) - offsets * classes
        return np.clip(out, 0, classes - 1).astype(dtype)

    return run


def _check_multinomial(logits, n: int) -> None:
    if logits.ndim != 2:
        raise _invalid(f"logits should be a matrix, got shape "
                       f"[{','.join(map(str, logits.shape))}]")
    if n < 0:
        raise _invalid(f"num_samples should be nonnegative, got {n}")
    if logits.shape[1] == 0 and n > 0:
        raise _invalid("num_classes should be positive, got 0")


def _row_cdfs(logits):
    """Per-row cumulative softmax probabilities, each row ending at exactly 1."""
    top = np.max(logits, axis=1, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    p = np.exp(logits - top)
    cdf = np.cumsum(p, axis=1)
    total = cdf[:, -1:]
    total[total == 0] = 1.0
    cdf /= total
    cdf[:, -1] = 1.0
    return cdf


@register_kernel("RandomShuffle")
def _random_shuffle(node):
    rng = _rng(node)

    def run(value):
        value = np.asarray(value)
        if value.ndim == 0 or value.shape[0] <= 1:
            return value.copy()
        return value[rng.permutation(value.shape[0])]

    return run


@register_kernel("RandomGamma")
def _random_gamma(node):
    rng = _rng(node)
    want = node.attr("T").np_dtype
    native = want if want in _NATIVE else np.dtype(np.float32)

    def run(shape, alpha):
        alpha = np.asarray(alpha, native)
        out = rng.standard_gamma(alpha, size=_dims(shape) + alpha.shape, dtype=native)
        return out.astype(want, copy=False)

    return run


def _poisson(node):
    rng = _rng(node)
    want = node.attr("dtype").np_dtype

    def run(shape, rate):
        rate = np.asarray(rate, np.float64)
        if np.any(rate < 0):
            raise _invalid("rate must be non-negative")
        return rng.poisson(rate, size=_dims(shape) + rate.shape).astype(want)

    return run


register_kernel("RandomPoisson")(_poisson)
register_kernel("RandomPoissonV2")(_poisson)
