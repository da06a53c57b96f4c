"""Shape functions shared by many ops. Each takes an `InferenceContext`."""

from __future__ import annotations

from tensorweave.shapes import TensorShape, broadcast_shapes


def unchanged(ctx) -> TensorShape:
    """Output 0 has input 0's shape (elementwise unary ops)."""
    return ctx.input_shape(0)


def scalar(ctx) -> TensorShape:
    return TensorShape([])


def unknown(ctx):
    return None


def broadcast_binary(ctx) -> TensorShape:
    """Numpy broadcasting of inputs 0 and 1 (TF's BroadcastBinaryOpShapeFn)."""
    try:
        return broadcast_shapes(ctx.input_shape(0), ctx.input_shape(1))
    except ValueError:
        a, b = ctx.input_dims(0), ctx.input_dims(1)
        raise ctx.fail(f"Dimensions must be equal, but are {_mismatch(a, b)}") from None


def _mismatch(a, b) -> str:
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    for p, q in zip(a, b):
        if p not in (1, None) and q not in (1, None) and p != q:
            return f"{p} and {q}"
    return "?"


def merge_all_inputs(ctx) -> TensorShape:
    """All inputs must share a shape (AddN, Pack inputs, ...); output has it."""
    out = TensorShape(None)
    for i in range(ctx.num_inputs):
        try:
            out = out.merge_with(ctx.input_shape(i))
        except ValueError:
            raise ctx.fail(f"Shapes must be equal, but are {out} and {ctx.input_shape(i)}") \
                from None
    return out


def reduction(ctx, keep_dims_attr: str = "keep_dims") -> TensorShape:
    """Inputs (x, axes): the reduced shape when the axes are constant, else rank-only info."""
    shape = ctx.input_shape(0)
    keep = bool(ctx.attr(keep_dims_attr))
    axes = ctx.constant_value(1)
    dims = shape.as_tuple()
    if axes is None:
        if dims is not None and keep:
            return TensorShape([None] * len(dims))
        return TensorShape(None)
    if dims is None:
        return TensorShape(None)
    rank = len(dims)
    norm = set()
    for a in axes.reshape(-1).tolist():
        if not -rank <= a < max(rank, 1):
            raise ctx.fail(f"Invalid reduction dimension {a} for input with {rank} dimensions")
        norm.add(a % rank if rank else 0)
    if keep:
        return TensorShape([1 if i in norm else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in norm])
