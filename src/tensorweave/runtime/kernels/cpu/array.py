"""CPU kernels for array ops, part 1 (see ops/array_ops.py): identities, shapes, reshaping,
CheckNumerics and Print. Error messages are TensorFlow's."""

from __future__ import annotations

import codecs
import math
import sys
import threading

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.runtime.kernels.registry import register_kernel, register_simple_kernel


def invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def fmt_shape(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def out_np(node, i: int = 0):
    return node.output_dtypes[i].base_dtype.np_dtype


# -- placeholders and identities --------------------------------------------------------------
@register_kernel("Placeholder")
def _placeholder(node):
    dt, shape = node.attr("dtype"), node.attr("shape")

    def run():
        raise errors.InvalidArgumentError(
            None, None, f"You must feed a value for placeholder tensor '{node.name}' with dtype "
                        f"{dt.name} and shape {shape}")

    return run


def _same(x):
    return x


for _op in ("PlaceholderWithDefault", "Identity", "StopGradient", "PreventGradient"):
    register_simple_kernel(_op, _same, forwards_input=True)
register_simple_kernel("IdentityN", lambda *xs: tuple(xs), forwards_input=True)
register_simple_kernel("Snapshot", lambda x: np.array(x, copy=True))


@register_kernel("GuaranteeConst", forwards_input=True)
def _guarantee_const(node):
    if node.attr("T") == dtypes.resource:
        raise invalid("Input tensor cannot be a resource variable handle.")
    return _same


@register_kernel("CheckNumerics", forwards_input=True)
def _check_numerics(node):
    message = node.attr("message")

    def run(x):
        if np.isfinite(x).all():
            return x
        nan, inf = bool(np.isnan(x).any()), bool(np.isinf(x).any())
        status = "Inf and NaN" if nan and inf else "NaN" if nan else "Inf"
        raise invalid(f"{message} : Tensor had {status} values")

    return run


# -- Print ------------------------------------------------------------------------------------
@register_kernel("Print", forwards_input=True)
def _print(node):
    message, first_n = node.attr("message"), node.attr("first_n")
    summarize = node.attr("summarize")
    lock, calls = threading.Lock(), [0]

    def run(x, *data):
        if first_n >= 0:
            with lock:
                if calls[0] >= first_n:
                    return x
                calls[0] += 1
        parts = [message] + [f"[{summarize_value(np.asarray(d), summarize)}]" for d in data]
        sys.stderr.write("".join(parts) + "\n")
        return x

    return run


def summarize_value(a: np.ndarray, max_entries: int) -> str:
    """TF1's `Tensor::SummarizeValue`: the first `max_entries` elements, nested in brackets
    per dimension, with '...' where elements were left out."""
    n = a.size
    limit = n if max_entries < 0 else min(max_entries, n)
    flat = a.reshape(-1)
    if a.ndim == 0:
        return " ".join(_element(v) for v in flat[:limit]) + ("..." if n > limit else "")
    out: list[str] = []
    _print_dim(0, a.shape, limit, flat, [0], out)
    if n > limit:
        out.append("...")
    return "".join(out)


def _print_dim(dim, shape, limit, flat, pos, out) -> None:
    if pos[0] >= limit:
        return
    count = shape[dim]
    if dim == len(shape) - 1:
        for i in range(count):
            if pos[0] >= limit:
                if dim != 0:
                    out.append("...")
                return
            if i > 0:
                out.append(" ")
            out.append(_element(flat[pos[0]]))
            pos[0] += 1
        return
    for _ in range(count):
        opened = pos[0] < limit
        if opened:
            out.append("[")
        _print_dim(dim + 1, shape, limit, flat, pos, out)
        if pos[0] < limit or opened:
            out.append("]")


def _element(v) -> str:
    if isinstance(v, bytes):
        return codecs.escape_encode(v)[0].decode("ascii")
    if isinstance(v, (np.bool_, bool)):
        return "1" if v else "0"
    if isinstance(v, np.floating):
        return _float_str(v)
    if isinstance(v, np.complexfloating):
        return f"({_float_str(v.real)},{_float_str(v.imag)})"
    return str(v)


def _float_str(v) -> str:
    """Shortest of C's %.{DIG}g / %.{DIG+3}g that round-trips, as TF's StrCat does."""
    digits = 15 if v.dtype == np.float64 else 6
    s = f"{float(v):.{digits}g}"
    if v.dtype.type(s) != v and not np.isnan(v):
        s = f"{float(v):.{digits + (2 if digits == 15 else 3)}g}"
    return {"inf": "inf", "-inf": "-inf", "nan": "nan"}.get(s, s)


# -- Shape, ShapeN, Size, Rank ----------------------------------------------------------------
@register_kernel("Shape")
def _shape(node):
    dt = out_np(node)

    def run(x):
        return np.array(np.shape(x), dtype=dt)

    return run


@register_kernel("ShapeN")
def _shape_n(node):
    dt = out_np(node)

    def run(*xs):
        return tuple(np.array(np.shape(x), dtype=dt) for x in xs)

    return run


@register_kernel("Size")
def _size(node):
    dt = out_np(node)

    def run(x):
        return np.array(np.size(x), dtype=dt)

    return run


register_simple_kernel("Rank", lambda x: np.array(np.ndim(x), dtype=np.int32))


# -- Reshape, Squeeze, ExpandDims -------------------------------------------------------------
@register_kernel("Reshape", forwards_input=True)
def _reshape(node):
    def run(x, shape):
        if np.ndim(shape) != 1:
            raise invalid(f"sizes input must be 1-D, not {fmt_shape(np.shape(shape))}")
        dims = shape.tolist()
        if dims and min(dims) < 0:
            _check_unknown(dims, np.size(x))
        try:
            return np.reshape(x, dims)
        except ValueError:
            raise invalid(_reshape_mismatch(np.size(x), dims)) from None

    return run


def _check_unknown(dims, n) -> None:
    """Validates a shape holding negative entries (one -1 is the only valid case)."""
    if dims.count(-1) == 1 and min(dims) == -1:
        if n and not math.prod(dims):
            raise invalid("Reshape cannot infer the missing input size for an empty tensor "
                          "unless all specified input sizes are non-zero")
        return
    for i, d in enumerate(dims):
        if d < -1:
            raise invalid(f"Size {i} must be non-negative, not {d}")
    unknown = [i for i, d in enumerate(dims) if d == -1]
    raise invalid(f"Only one input size may be -1, not both {unknown[0]} and {unknown[1]}")


def _reshape_mismatch(n, dims) -> str:
    known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
    if -1 in dims:
        return (f"Input to reshape is a tensor with {n} values, but the requested shape "
                f"requires a multiple of {known}")
    return f"Input to reshape is a tensor with {n} values, but the requested shape has {known}"


@register_kernel("Squeeze", forwards_input=True)
def _squeeze(node):
    axes = list(node.attr("squeeze_dims") or [])

    def run(x):
        if not axes:
            return np.squeeze(x)
        shape, rank = np.shape(x), np.ndim(x)
        drop = set()
        for a in axes:
            if not -rank <= a < rank:
                raise invalid(f"Tried to squeeze dim index {a} for tensor with {rank} "
                              f"dimensions.")
            a %= rank
            if shape[a] != 1:
                raise invalid(f"Can not squeeze dim[{a}], expected a dimension of 1, got "
                              f"{shape[a]}")
            drop.add(a)
        return np.reshape(x, [d for i, d in enumerate(shape) if i not in drop])

    return run


@register_kernel("ExpandDims", forwards_input=True)
def _expand_dims(node):
    def run(x, dim):
        if np.size(dim) != 1:
            raise invalid(f"'dim' must be a tensor with a single value, got shape "
                          f"{fmt_shape(np.shape(dim))}")
        d, rank = int(np.reshape(dim, [-1])[0]), np.ndim(x)
        if not -1 - rank <= d <= rank:
            raise invalid(f"Tried to expand dim index {d} for tensor with {rank} dimensions.")
        return np.expand_dims(x, d if d >= 0 else d + rank + 1)

    return run


# -- Bitcast ----------------------------------------------------------------------------------
@register_kernel("Bitcast", forwards_input=True)
def _bitcast(node):
    src, dst = node.attr("T").np_dtype, node.attr("type").np_dtype
    if src is None or dst is None:
        raise errors.UnimplementedError(None, None, "Bitcast of quantized types is not "
                                                    "supported on CPU")
    n_in, n_out = src.itemsize, dst.itemsize

    def run(x):
        a = np.ascontiguousarray(x)
        if n_in == n_out:
            return a.view(dst)
        if n_in > n_out:
            return a[..., None].view(dst)
        if a.ndim == 0 or a.shape[-1] != n_out // n_in:
            raise invalid(f"Cannot bitcast from {node.attr('T').as_datatype_enum} to "
                          f"{node.attr('type').as_datatype_enum}: shape {fmt_shape(a.shape)}")
        return a.view(dst).reshape(a.shape[:-1])

    return run
