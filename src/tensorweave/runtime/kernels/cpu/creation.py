"""CPU kernels for Fill, ZerosLike, OnesLike and Range (see ops/creation_ops.py)."""

from __future__ import annotations

import numpy as np

from tensorweave.ops.creation_ops import range_values
from tensorweave.runtime.kernels.cpu.array import fmt_shape, invalid, out_np
from tensorweave.runtime.kernels.registry import register_kernel


@register_kernel("Fill")
def _fill(node):
    dt = out_np(node)

    def run(dims, value):
        if np.ndim(dims) != 1:
            raise invalid(f"dims must be a vector, got shape {fmt_shape(np.shape(dims))}")
        if np.ndim(value) != 0:
            raise invalid(f"value must be a scalar, got shape {fmt_shape(np.shape(value))}")
        shape = dims.tolist()
        if any(d < 0 for d in shape):
            raise invalid("Fill dimensions must be >= 0")
        return np.full(shape, value, dtype=dt)

    return run


@register_kernel("ZerosLike")
def _zeros_like(node):
    dt = out_np(node)
    zero = b"" if dt.kind == "O" else 0

    def run(x):
        return np.full(np.shape(x), zero, dtype=dt)

    return run


@register_kernel("OnesLike")
def _ones_like(node):
    dt = out_np(node)

    def run(x):
        return np.ones(np.shape(x), dtype=dt)

    return run


@register_kernel("Range")
def _range(node):
    dt = out_np(node)

    def run(start, limit, delta):
        for name, v in (("start", start), ("limit", limit), ("delta", delta)):
            if np.ndim(v) != 0:
                raise invalid(f"{name} must be a scalar, not shape {fmt_shape(np.shape(v))}")
        try:
            return range_values(np.asarray(start).item(), np.asarray(limit).item(),
                                np.asarray(delta).item(), dt)
        except ValueError as e:
            raise invalid(str(e)) from None

    return run
