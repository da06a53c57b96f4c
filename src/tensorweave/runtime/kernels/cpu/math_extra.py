"""CPU kernels for Einsum, Roll, the bitwise ops and EditDistance (ops/math_extra_ops.py)."""

from __future__ import annotations

import numpy as np

from tensorweave.runtime.kernels.cpu.array import invalid
from tensorweave.runtime.kernels.registry import register_kernel


@register_kernel("Einsum")
def _einsum(node):
    equation = node.attr("equation").replace(" ", "")

    def run(*inputs):
        try:
            return np.asarray(np.einsum(equation, *[np.asarray(x) for x in inputs]))
        except ValueError as e:
            raise invalid(f"Einsum {equation}: {e}") from None

    return run


@register_kernel("Roll")
def _roll(node):
    def run(x, shift, axis):
        x, shift, axis = np.asarray(x), np.asarray(shift), np.asarray(axis)
        if shift.shape != axis.shape or shift.ndim > 1:
            raise invalid(f"shift and axis must have the same size and be scalars or vectors, "
                          f"got {list(shift.shape)} and {list(axis.shape)}")
        for a in axis.reshape(-1):
            if not -x.ndim <= a < x.ndim:
                raise invalid(f"axis {int(a)} is out of range")
        return np.roll(x, tuple(shift.reshape(-1).tolist()), tuple(axis.reshape(-1).tolist()))

    return run


def _binary(fn):
    return lambda node: (lambda x, y: fn(np.asarray(x), np.asarray(y)))


register_kernel("BitwiseAnd")(_binary(np.bitwise_and))
register_kernel("BitwiseOr")(_binary(np.bitwise_or))
register_kernel("BitwiseXor")(_binary(np.bitwise_xor))


def _shift(fn):
    def kernel(x, y):
        x, y = np.asarray(x), np.asarray(y)
        bits = x.dtype.itemsize * 8
        # NOTE: as TF, shifts outside [0, bits) are clamped rather than undefined
        return fn(x, np.clip(y, 0, bits - 1).astype(x.dtype))

    return lambda node: kernel


register_kernel("LeftShift")(_shift(np.left_shift))
register_kernel("RightShift")(_shift(np.right_shift))
register_kernel("Invert")(lambda node: lambda x: np.invert(np.asarray(x)))


@register_kernel("PopulationCount")
def _population_count(node):
    def run(x):
        x = np.asarray(x)
        bytes_ = x.view(np.uint8).reshape(x.shape + (x.dtype.itemsize,))
        return np.unpackbits(bytes_, axis=-1).sum(axis=-1).astype(np.uint8)

    return run


def _levenshtein(a: list, b: list) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def _sequences(indices, values) -> dict:
    groups: dict = {}
    for idx, v in zip(np.asarray(indices).tolist(), np.asarray(values).tolist()):
        groups.setdefault(tuple(idx[:-1]), []).append((idx[-1], v))
    return {k: [v for _, v in sorted(items)] for k, items in groups.items()}


@register_kernel("EditDistance")
def _edit_distance(node):
    normalize = bool(node.attr("normalize"))

    def run(h_idx, h_val, h_shape, t_idx, t_val, t_shape):
        h_shape, t_shape = np.asarray(h_shape), np.asarray(t_shape)
        if h_shape.size != t_shape.size:
            raise invalid(f"hypothesis and truth must have the same rank: "
                          f"{h_shape.size} vs. {t_shape.size}")
        out_shape = tuple(int(v) for v in np.maximum(h_shape[:-1], t_shape[:-1]))
        out = np.zeros(out_shape, np.float32)
        hyp, truth = _sequences(h_idx, h_val), _sequences(t_idx, t_val)
        for loc in set(hyp) | set(truth):
            h, t = hyp.get(loc, []), truth.get(loc, [])
            d = float(_levenshtein(h, t))
            if normalize:
                d = d / len(t) if t else (np.inf if h else 0.0)
            out[loc] = d
        return out

    return run
