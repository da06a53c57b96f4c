"""Lowerings of random ops, counter-based: a node's bits come from XLA's Philox generator
(`lax.rng_bit_generator`, the family TF's kernels use) keyed by its `(seed, seed2)` attrs, with
the block counter starting at `step << 32` where `step` counts the node's runs in this session.

As on the CPU device (cpu/random.py): a seeded node replays its sequence in a new session
and continues it across the plans of one session; `(0, 0)` seeds from OS entropy once per
(session, node). Uniform floats take the top mantissa bits (TF's trick), normals are
Box-Muller, truncated normals the inverse CDF on [-2, 2], integers `minval + bits % range`
(TF's rule). The numbers differ from the CPU kernels' (numpy's PCG64) and from TF's (another
key and counter layout): only the distributions match.

NOTE: jax.random's threefry compiles ~5x slower on the CPU (an unrolled hash per draw): an
initializer graph with a few truncated normals took tens of seconds to compile.
"""

from __future__ import annotations

import secrets

import numpy as np

from tensorweave.runtime.kernels.xla.backend import jax_modules
from tensorweave.runtime.kernels.xla.lower import register_lowering

_CONTAINER = "__xla_random_keys"


def _seed_words(node) -> tuple[int, int]:
    """(seed, seed2) as uint32 words for the node's key; (0, 0) draws them once per
    session and node from OS entropy."""
    seed, seed2 = int(node.attr("seed") or 0), int(node.attr("seed2") or 0)

    def create():
        if seed == 0 and seed2 == 0:
            return secrets.randbits(32), secrets.randbits(32)
        return seed & 0xFFFFFFFF, seed2 & 0xFFFFFFFF

    if node.resources is None:
        return create()
    return node.resources.lookup_or_create(_CONTAINER, node.name, create)


def _bits(node):
    """fn(counter, shape, width) -> uint32 or uint64 random bits of `shape` for that step."""
    _, jnp, lax = jax_modules()
    seed, seed2 = _seed_words(node)
    key = np.uint64((seed << 32) | seed2)

    def bits(counter, shape, width=32):
        state = jnp.stack([jnp.asarray(key, jnp.uint64),
                           jnp.asarray(counter, jnp.uint64) << np.uint64(32)])
        dt = jnp.uint64 if width == 64 else jnp.uint32
        _, out = lax.rng_bit_generator(state, tuple(shape), dtype=dt,
                                       algorithm=lax.RandomAlgorithm.RNG_PHILOX)
        return out

    return bits


def _uniform(bits, counter, shape, dt):
    """Floats in [0, 1): random mantissa bits under the exponent of 1.0, minus 1."""
    _, jnp, lax = jax_modules()
    if dt == np.float64:
        b = (bits(counter, shape, 64) >> np.uint64(12)) | np.uint64(0x3FF0000000000000)
        return lax.bitcast_convert_type(b, jnp.float64) - 1.0
    b = (bits(counter, shape) >> np.uint32(9)) | np.uint32(0x3F800000)
    return lax.bitcast_convert_type(b, jnp.float32) - np.float32(1.0)


def _normal(bits, counter, shape, dt):
    """Box-Muller on two uniforms (the first moved to (0, 1] for the log)."""
    _, jnp, _ = jax_modules()
    u = _uniform(bits, counter, (2,) + tuple(shape), dt)
    r = jnp.sqrt(-2 * jnp.log(1 - u[0]))
    return r * jnp.cos(np.array(2 * np.pi, dt) * u[1])


def _truncated(bits, counter, shape, dt):
    """N(0, 1) conditioned on [-2, 2], by the inverse CDF: sqrt(2) erfinv(uniform in
    [erf(-sqrt 2), erf(sqrt 2)))."""
    _, jnp, lax = jax_modules()
    lo = np.array(-0.9544997361036416, dt)  # erf(-2 / sqrt(2))
    u = _uniform(bits, counter, shape, dt)
    return np.array(np.sqrt(2.0), dt) * lax.erf_inv(jnp.clip(lo - 2 * lo * u, lo, -lo))


def _dims(shape) -> tuple[int, ...]:
    return tuple(int(d) for d in np.ravel(shape))


def _float_dtype(node):
    return np.dtype(node.attr("dtype").np_dtype)


def _float_op(op: str, draw) -> None:
    @register_lowering(op, const_inputs=(0,), counter=True)
    def factory(node):
        bits, dt = _bits(node), _float_dtype(node)
        native = dt if dt in (np.float32, np.float64) else np.dtype(np.float32)

        def run(counter, shape):
            return draw(bits, counter, _dims(shape), native).astype(dt)

        return run


_float_op("RandomStandardNormal", _normal)
_float_op("TruncatedNormal", _truncated)
_float_op("RandomUniform", _uniform)


@register_lowering("RandomUniformInt", const_inputs=(0,), counter=True)
def _uniform_int(node):
    _, jnp, _ = jax_modules()
    bits = _bits(node)
    dt = np.dtype(node.attr("Tout").np_dtype)
    wide = dt.itemsize == 8
    unsigned = np.uint64 if wide else np.uint32

    def run(counter, shape, minval, maxval):
        span = (jnp.asarray(maxval, dt) - jnp.asarray(minval, dt)).astype(unsigned)
        b = bits(counter, _dims(shape), 64 if wide else 32)
        return (jnp.asarray(minval, dt) + (b % span).astype(dt)).astype(dt)

    return run
