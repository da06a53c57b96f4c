"""Lowerings of array ops (Const, Identity, Reshape, Shape, ...) and the host-side ops a
partition runs around its compiled function (`_Arg`, `_Retval`, `_Send`, `_Recv`, `NoOp`).

Shape, Size and Rank give numpy values (shapes are static under jit), so whatever is computed
from them folds to a constant while the partition is traced.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.runtime.kernels.xla.backend import jax_modules
from tensorweave.runtime.kernels.xla.lower import (
    register_lowering,
    register_simple_lowering,
    share_cpu_kernel,
)

for _op in ("_Arg", "_Retval", "_Send", "_Recv", "_HostSend", "_HostRecv"):
    share_cpu_kernel(_op)


def _np(dt) -> np.dtype:
    return np.dtype(dtypes.as_dtype(dt).np_dtype)


@register_lowering("Const")
def _const(node):
    value = np.asarray(node.attr("value"))
    return lambda: value


register_lowering("NoOp")(lambda node: lambda *xs: None)
for _op in ("Identity", "StopGradient", "PreventGradient", "Snapshot"):
    register_simple_lowering(_op, lambda jnp, lax: lambda x: x)


@register_lowering("Shape")
def _shape(node):
    dt = _np(node.attr("out_type"))
    return lambda x: np.array(np.shape(x), dt)


@register_lowering("Size")
def _size(node):
    dt = _np(node.attr("out_type"))
    return lambda x: np.array(int(np.prod(np.shape(x))), dt)


register_lowering("Rank")(lambda node: lambda x: np.array(np.ndim(x), np.int32))


def _ints(v) -> tuple[int, ...]:
    return tuple(int(i) for i in np.ravel(v))


@register_lowering("Reshape", const_inputs=(1,))
def _reshape(node):
    _, jnp, _ = jax_modules()
    return lambda x, shape: jnp.reshape(x, _ints(shape))


@register_lowering("ExpandDims", const_inputs=(1,))
def _expand_dims(node):
    _, jnp, _ = jax_modules()
    return lambda x, axis: jnp.expand_dims(x, _ints(axis)[0])


@register_lowering("Squeeze")
def _squeeze(node):
    _, jnp, _ = jax_modules()
    dims = tuple(int(d) for d in node.attr("squeeze_dims") or ())

    def run(x):
        axes = dims or tuple(i for i, n in enumerate(x.shape) if n == 1)
        return jnp.squeeze(x, axis=axes)

    return run


@register_lowering("Transpose", const_inputs=(1,))
def _transpose(node):
    _, jnp, _ = jax_modules()
    return lambda x, perm: jnp.transpose(x, _ints(perm))


@register_lowering("Tile", const_inputs=(1,))
def _tile(node):
    _, jnp, _ = jax_modules()
    return lambda x, multiples: jnp.tile(x, _ints(multiples))


@register_lowering("Fill", const_inputs=(0,))
def _fill(node):
    _, jnp, _ = jax_modules()
    return lambda dims, value: jnp.full(_ints(dims), value)


register_simple_lowering("ZerosLike", lambda jnp, lax: jnp.zeros_like)
register_simple_lowering("OnesLike", lambda jnp, lax: jnp.ones_like)


@register_lowering("ConcatV2", const_inputs=())
def _concat(node):
    _, jnp, _ = jax_modules()

    def run(*xs):
        *values, axis = xs
        return jnp.concatenate(values, axis=int(np.asarray(axis)))

    return run


@register_lowering("Pack")
def _pack(node):
    _, jnp, _ = jax_modules()
    axis = int(node.attr("axis", 0))
    return lambda *xs: jnp.stack(xs, axis=axis)


@register_lowering("BroadcastTo", const_inputs=(1,))
def _broadcast_to(node):
    _, jnp, _ = jax_modules()
    return lambda x, shape: jnp.broadcast_to(x, _ints(shape))
