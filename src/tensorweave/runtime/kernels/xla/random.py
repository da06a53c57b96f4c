"""Lowerings of random ops, counter-based: a node draws from `fold_in(key, step)` where `key`
comes from its `(seed, seed2)` attrs and `step` counts the node's runs in this session.

As on the CPU device (cpu/random.py): a seeded node replays its sequence in a new session
and continues it across the plans of one session; `(0, 0)` seeds from OS entropy once per
(session, node). The numbers differ from the CPU kernels' (numpy's PCG64) and from TF's
(Philox): jax's threefry generator, so only the distributions match.
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


def _key(node):
    """fn(counter) -> the node's jax key for that step."""
    jax = jax_modules()[0]
    words = _seed_words(node)

    def key(counter):
        base = jax.random.fold_in(jax.random.PRNGKey(words[0]), words[1])
        return jax.random.fold_in(base, counter)

    return key


def _dims(shape) -> tuple[int, ...]:
    return tuple(int(d) for d in np.ravel(shape))


def _float_dtype(node):
    return np.dtype(node.attr("dtype").np_dtype)


def _float_op(op: str, draw) -> None:
    @register_lowering(op, const_inputs=(0,), counter=True)
    def factory(node):
        jax = jax_modules()[0]
        key, dt = _key(node), _float_dtype(node)
        native = dt if dt in (np.float32, np.float64) else np.dtype(np.float32)

        def run(counter, shape):
            return draw(jax, key(counter), _dims(shape), native).astype(dt)

        return run


_float_op("RandomStandardNormal", lambda jax, k, dims, dt: jax.random.normal(k, dims, dt))
# NOTE: TF truncates at two standard deviations by redrawing; truncated_normal samples the
# same distribution (by inverse CDF).
_float_op("TruncatedNormal",
          lambda jax, k, dims, dt: jax.random.truncated_normal(k, -2.0, 2.0, dims, dt))
_float_op("RandomUniform", lambda jax, k, dims, dt: jax.random.uniform(k, dims, dt))


@register_lowering("RandomUniformInt", const_inputs=(0,), counter=True)
def _uniform_int(node):
    jax = jax_modules()[0]
    key = _key(node)
    dt = np.dtype(node.attr("Tout").np_dtype)

    def run(counter, shape, minval, maxval):
        return jax.random.randint(key(counter), _dims(shape), minval, maxval, dt)

    return run
