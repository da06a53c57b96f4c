"""CPU kernels for the joining/reordering array ops (see ops/joining_ops.py)."""

from __future__ import annotations

import numpy as np

from tensorweave.ops.joining_ops import canonical_axes
from tensorweave.runtime.kernels.cpu.array import fmt_shape, invalid, out_np
from tensorweave.runtime.kernels.registry import register_kernel


# -- ConcatV2, Pack, Tile ---------------------------------------------------------------------
@register_kernel("ConcatV2")
def _concat(node):
    def run(*args):
        values, axis = args[:-1], int(args[-1])
        rank = np.ndim(values[0])
        if not -rank <= axis < rank:
            raise invalid(f"ConcatOp : Expected concatenating dimensions in the range "
                          f"[{-rank}, {rank}), but got {axis}")
        try:
            return np.concatenate(values, axis=axis)
        except ValueError:
            raise invalid(_concat_mismatch(values, axis % rank)) from None

    return run


def _concat_mismatch(values, axis) -> str:
    first = np.shape(values[0])
    for i, v in enumerate(values[1:], 1):
        s = np.shape(v)
        if len(s) != len(first):
            return (f"ConcatOp : Ranks of all input tensors should match: shape[0] = "
                    f"{fmt_shape(first)} vs. shape[{i}] = {fmt_shape(s)}")
        if any(a != b for j, (a, b) in enumerate(zip(first, s)) if j != axis):
            return (f"ConcatOp : Dimensions of inputs should match: shape[0] = "
                    f"{fmt_shape(first)} vs. shape[{i}] = {fmt_shape(s)}")
    return "ConcatOp : invalid inputs"


@register_kernel("Pack")
def _pack(node):
    axis = node.attr("axis")

    def run(*values):
        first = np.shape(values[0])
        for i, v in enumerate(values[1:], 1):
            if np.shape(v) != first:
                raise invalid(f"Shapes of all inputs must match: values[0].shape = "
                              f"{fmt_shape(first)} != values[{i}].shape = "
                              f"{fmt_shape(np.shape(v))}")
        rank = len(first) + 1
        if not -rank <= axis < rank:
            raise invalid(f"axis = {axis} not in [{-rank}, {rank})")
        return np.stack(values, axis=axis)

    return run


@register_kernel("Tile")
def _tile(node):
    def run(x, multiples):
        reps = multiples.tolist()
        if np.ndim(multiples) != 1 or len(reps) != np.ndim(x):
            raise invalid(f"Expected multiples argument to be a vector of length "
                          f"{np.ndim(x)} but got length {np.size(multiples)}")
        for i, m in enumerate(reps):
            if m < 0:
                raise invalid(f"Expected multiples[{i}] >= 0, but got {m}")
        return np.tile(x, reps) if reps else np.array(x, copy=True)

    return run


# -- Pad, PadV2, MirrorPad --------------------------------------------------------------------
def _check_paddings(x, paddings):
    p = np.asarray(paddings)
    if p.ndim != 2 or p.shape[1] != 2:
        raise invalid(f"paddings must be a matrix with 2 columns: {fmt_shape(p.shape)}")
    if p.shape[0] != np.ndim(x):
        raise invalid(f"The first dimension of paddings must be the rank of inputs"
                      f"{fmt_shape(p.shape)} {fmt_shape(np.shape(x))}")
    for before, after in p.tolist():
        if before < 0 or after < 0:
            raise invalid(f"Paddings must be non-negative: {before} {after}")
    return [tuple(r) for r in p.tolist()]


def _pad_constant(x, pads, value, dt):
    x = np.asarray(x)
    out = np.full([d + b + a for d, (b, a) in zip(x.shape, pads)], value, dtype=dt)
    out[tuple(slice(b, b + d) for d, (b, _) in zip(x.shape, pads))] = x
    return out


@register_kernel("Pad")
def _pad(node):
    dt = out_np(node)
    zero = b"" if dt.kind == "O" else 0

    def run(x, paddings):
        return _pad_constant(x, _check_paddings(x, paddings), zero, dt)

    return run


@register_kernel("PadV2")
def _pad_v2(node):
    dt = out_np(node)

    def run(x, paddings, value):
        pads = _check_paddings(x, paddings)
        if np.ndim(value) != 0:
            raise invalid(f"constant_values must be a scalar. Got: "
                          f"{fmt_shape(np.shape(value))}")
        return _pad_constant(x, pads, np.asarray(value).item() if dt.kind == "O" else value, dt)

    return run


@register_kernel("MirrorPad")
def _mirror_pad(node):
    mode = node.attr("mode")
    offset = 0 if mode == "REFLECT" else 1

    def run(x, paddings):
        pads = _check_paddings(x, paddings)
        for d, (before, after) in zip(np.shape(x), pads):
            if max(before, after) > d - 1 + offset:
                raise invalid(_mirror_message(mode, before, after, d))
        return np.pad(x, pads, mode=mode.lower()) if pads else np.array(x, copy=True)

    return run


def _mirror_message(mode, before, after, d) -> str:
    if mode == "REFLECT":
        return (f"paddings must be less than the dimension size: {before}, {after} not less "
                f"than {d}")
    return (f"paddings must be no greater than the dimension size: {before}, {after} greater "
            f"than {d}")


# -- ReverseV2, Transpose ---------------------------------------------------------------------
@register_kernel("ReverseV2", forwards_input=True)
def _reverse(node):
    def run(x, axis):
        axes = canonical_axes(axis, np.ndim(x), invalid)
        return np.flip(x, axis=axes) if axes else x

    return run


def _check_perm(perm, rank):
    p = np.reshape(perm, [-1]).tolist()
    if np.ndim(perm) != 1 or len(p) != rank:
        raise invalid(f"transpose expects a vector of size {rank}. But input(1) is a vector "
                      f"of size {len(p)}")
    for d in p:
        if not 0 <= d < rank:
            raise invalid(f"{d} is out of range [0 .. {rank})")
    for i in range(rank):
        if i not in p:
            raise invalid(f"{i} is missing from {{{','.join(map(str, p))}}}.")
    return p


@register_kernel("Transpose", forwards_input=True)
def _transpose(node):
    def run(x, perm):
        return np.transpose(x, _check_perm(perm, np.ndim(x)))

    return run


@register_kernel("ConjugateTranspose", forwards_input=True)
def _conjugate_transpose(node):
    is_complex = node.attr("T").is_complex

    def run(x, perm):
        y = np.transpose(x, _check_perm(perm, np.ndim(x)))
        return np.conj(y) if is_complex else y

    return run


# -- BroadcastTo, BroadcastArgs ---------------------------------------------------------------
@register_kernel("BroadcastTo", forwards_input=True)
def _broadcast_to(node):
    def run(x, shape):
        target = tuple(shape.tolist())
        if np.shape(x) == target:
            return x
        try:
            return np.array(np.broadcast_to(x, target))
        except ValueError:
            raise invalid(f"Unable to broadcast tensor of shape {fmt_shape(np.shape(x))} to "
                          f"tensor of shape {fmt_shape(target)}") from None

    return run


@register_kernel("BroadcastArgs")
def _broadcast_args(node):
    dt = out_np(node)

    def run(s0, s1):
        a, b = tuple(s0.tolist()), tuple(s1.tolist())
        try:
            return np.array(np.broadcast_shapes(a, b), dtype=dt)
        except ValueError:
            raise invalid(f"Incompatible shapes: {fmt_shape(a)} vs. {fmt_shape(b)}") from None

    return run


# -- SpaceToDepth, DepthToSpace ---------------------------------------------------------------
def _layout(node):
    fmt = node.attr("data_format")
    if fmt == "NCHW_VECT_C":
        raise invalid("NCHW_VECT_C is not supported on CPU")
    return fmt, node.attr("block_size")


@register_kernel("SpaceToDepth")
def _space_to_depth(node):
    fmt, bs = _layout(node)

    def run(x):
        a = x if fmt == "NHWC" else np.transpose(x, (0, 2, 3, 1))
        n, h, w, c = a.shape
        if h % bs or w % bs:
            raise invalid(f"Image width {w} and height {h} should be divisible by block_size: "
                          f"{bs}")
        y = a.reshape(n, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5)
        y = y.reshape(n, h // bs, w // bs, bs * bs * c)
        return y if fmt == "NHWC" else np.ascontiguousarray(np.transpose(y, (0, 3, 1, 2)))

    return run


@register_kernel("DepthToSpace")
def _depth_to_space(node):
    fmt, bs = _layout(node)

    def run(x):
        a = x if fmt == "NHWC" else np.transpose(x, (0, 2, 3, 1))
        n, h, w, c = a.shape
        if c % (bs * bs):
            raise invalid(f"Input depth dimension {c} should be divisible by: {bs * bs}")
        y = a.reshape(n, h, w, bs, bs, c // (bs * bs)).transpose(0, 1, 3, 2, 4, 5)
        y = y.reshape(n, h * bs, w * bs, c // (bs * bs))
        return y if fmt == "NHWC" else np.ascontiguousarray(np.transpose(y, (0, 3, 1, 2)))

    return run
