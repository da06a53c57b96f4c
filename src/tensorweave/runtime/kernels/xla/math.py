"""Lowerings of math ops: elementwise unary and binary ops, comparisons, Cast, MatMul, AddN,
and the reductions (Sum, Mean, Max, Min, Prod over a constant axis input)."""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.runtime.kernels.xla.backend import jax_modules
from tensorweave.runtime.kernels.xla.lower import register_lowering, register_simple_lowering

_UNARY = {
    "Neg": "negative", "Square": "square", "Sqrt": "sqrt", "Exp": "exp", "Expm1": "expm1",
    "Log": "log", "Log1p": "log1p", "Sin": "sin", "Cos": "cos", "Tanh": "tanh", "Abs": "abs",
    "Floor": "floor", "Ceil": "ceil", "IsNan": "isnan", "IsInf": "isinf", "IsFinite": "isfinite",
    "LogicalNot": "logical_not", "Rint": "rint",
}
_BINARY = {
    "Add": "add", "AddV2": "add", "Sub": "subtract", "Mul": "multiply",
    "Maximum": "maximum", "Minimum": "minimum", "Pow": "power",
    "FloorMod": "mod", "Less": "less",
    "LessEqual": "less_equal", "Greater": "greater", "GreaterEqual": "greater_equal",
    "LogicalAnd": "logical_and", "LogicalOr": "logical_or",
}


def _jnp_fn(name):
    return lambda jnp, lax: getattr(jnp, name)


for _op, _name in {**_UNARY, **_BINARY}.items():
    register_simple_lowering(_op, _jnp_fn(_name))
register_simple_lowering("Rsqrt", lambda jnp, lax: lax.rsqrt)
register_simple_lowering("SquaredDifference", lambda jnp, lax: lambda x, y: jnp.square(x - y))
register_simple_lowering("AddN", lambda jnp, lax: lambda *xs: sum(xs[1:], xs[0]))


def _is_int(dt) -> bool:
    return np.dtype(dtypes.as_dtype(dt).base_dtype.np_dtype).kind in "iub"


def _int_div(jnp, lax):
    """TF's integer Div/RealDiv: the quotient truncated toward zero."""
    def run(x, y):
        x, y = jnp.broadcast_arrays(x, y)
        return lax.div(x, y)

    return run


def _div_op(op: str) -> None:
    @register_lowering(op)
    def factory(node):
        _, jnp, lax = jax_modules()
        return _int_div(jnp, lax) if _is_int(node.input_dtypes[0]) else jnp.true_divide


_div_op("Div")
_div_op("RealDiv")


@register_lowering("FloorDiv")
def _floor_div(node):
    _, jnp, _ = jax_modules()
    if _is_int(node.input_dtypes[0]):
        return jnp.floor_divide
    return lambda x, y: jnp.floor(x / y)  # NOTE: TF floors the quotient (not Python's //)


def _reciprocal(node):
    _, jnp, lax = jax_modules()
    if _is_int(node.input_dtypes[0]):
        return lambda x: lax.div(jnp.ones_like(x), x)
    return jnp.reciprocal


register_lowering("Reciprocal")(_reciprocal)
register_lowering("Inv")(_reciprocal)
register_simple_lowering("Sign", lambda jnp, lax: lambda x: jnp.where(
    jnp.isnan(x), jnp.zeros_like(x), jnp.sign(x)) if jnp.issubdtype(x.dtype, jnp.floating)
    else jnp.sign(x))


def _comparison(op: str, name: str) -> None:
    @register_lowering(op)
    def factory(node):
        _, jnp, _ = jax_modules()
        strict = node.attr("incompatible_shape_error", True) is not False
        fn = getattr(jnp, name)

        def run(x, y):
            try:
                shape = np.broadcast_shapes(np.shape(x), np.shape(y))
            except ValueError:
                if strict:
                    raise
                return np.array(op == "NotEqual")  # NOTE: TF: all unequal, as a scalar
            del shape
            return fn(x, y)

        return run


_comparison("Equal", "equal")
_comparison("NotEqual", "not_equal")


@register_lowering("Cast")
def _cast(node):
    dst = np.dtype(dtypes.as_dtype(node.attr("DstT")).np_dtype)
    _, jnp, _ = jax_modules()

    def run(x):
        if jnp.iscomplexobj(x) and dst.kind != "c":
            x = jnp.real(x)  # NOTE: as TF, complex → real keeps the real part
        return x.astype(dst)

    return run


@register_lowering("MatMul")
def _matmul(node):
    ta, tb = bool(node.attr("transpose_a")), bool(node.attr("transpose_b"))
    _, jnp, _ = jax_modules()

    def run(a, b):
        return jnp.matmul(a.T if ta else a, b.T if tb else b)

    return run


def _extreme(dtype, highest: bool):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return np.array(np.inf if highest else -np.inf, dt)
    info = np.iinfo(dt) if dt.kind in "iu" else None
    return np.array(info.max if highest else info.min, dt) if info else np.array(highest, dt)


def _axes(axis, rank: int) -> tuple[int, ...]:
    return tuple(sorted({int(a) % rank if rank else 0 for a in np.ravel(axis)}))


def _reduction(op: str, jnp_name: str) -> None:
    @register_lowering(op, const_inputs=(1,))
    def factory(node):
        keep = bool(node.attr("keep_dims"))
        _, jnp, lax = jax_modules()
        fn = getattr(jnp, jnp_name)
        int_mean = op == "Mean" and _is_int(node.input_dtypes[0])

        def run(x, axis):
            axes = _axes(axis, x.ndim)
            if int_mean:  # NOTE: TF's integer mean truncates toward zero
                count = int(np.prod([x.shape[a] for a in axes])) if axes else 1
                total = jnp.sum(x, axis=axes, keepdims=keep).astype(x.dtype)
                return lax.div(total, np.array(count, x.dtype))
            if op in ("Max", "Min") and 0 in x.shape:  # NOTE: TF: the lowest / highest value
                return fn(x, axis=axes, keepdims=keep, initial=_extreme(x.dtype, op == "Min"))
            return fn(x, axis=axes, keepdims=keep).astype(x.dtype)

        return run


for _op, _name in {"Sum": "sum", "Mean": "mean", "Max": "max", "Min": "min",
                   "Prod": "prod"}.items():
    _reduction(_op, _name)


for _op, _name in {"Round": "round", "Atan2": "arctan2", "Tan": "tan",
                   "Asin": "arcsin", "Acos": "arccos", "Atan": "arctan", "Sinh": "sinh",
                   "Cosh": "cosh", "Asinh": "arcsinh", "Acosh": "arccosh",
                   "Atanh": "arctanh", "LogicalXor": "logical_xor"}.items():
    register_simple_lowering(_op, _jnp_fn(_name))
register_simple_lowering("Erf", lambda jnp, lax: lax.erf)
register_simple_lowering("L2Loss", lambda jnp, lax: lambda x: (jnp.sum(x * x) / 2).astype(x.dtype))
register_simple_lowering("DivNoNan", lambda jnp, lax: lambda x, y: jnp.where(
    y == 0, jnp.zeros_like(x), x / jnp.where(y == 0, jnp.ones_like(y), y)))
register_simple_lowering("ClipByValue", lambda jnp, lax: lambda x, lo, hi: jnp.minimum(
    jnp.maximum(x, lo), hi))
register_simple_lowering("SqrtGrad", lambda jnp, lax: lambda y, dy: dy * 0.5 / y)
register_simple_lowering("RsqrtGrad", lambda jnp, lax: lambda y, dy: dy * (y * y * y) * -0.5)
register_simple_lowering("ReciprocalGrad", lambda jnp, lax: lambda y, dy: -dy * y * y)
register_simple_lowering("InvGrad", lambda jnp, lax: lambda y, dy: -dy * y * y)


@register_lowering("BatchMatMulV2")
def _batch_matmul(node):
    adj_x, adj_y = bool(node.attr("adj_x")), bool(node.attr("adj_y"))
    _, jnp, _ = jax_modules()

    def run(x, y):
        if adj_x:
            x = jnp.conj(jnp.swapaxes(x, -1, -2))
        if adj_y:
            y = jnp.conj(jnp.swapaxes(y, -1, -2))
        return jnp.matmul(x, y)

    return run


register_lowering("BatchMatMul")(_batch_matmul)

for _op, _name in {"Any": "any", "All": "all"}.items():
    _reduction(_op, _name)
