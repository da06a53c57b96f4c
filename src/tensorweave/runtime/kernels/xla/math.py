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
    "Sign": "sign", "Floor": "floor", "Ceil": "ceil", "Reciprocal": "reciprocal",
    "Inv": "reciprocal", "IsNan": "isnan", "IsInf": "isinf", "IsFinite": "isfinite",
    "LogicalNot": "logical_not", "Rint": "rint",
}
_BINARY = {
    "Add": "add", "AddV2": "add", "Sub": "subtract", "Mul": "multiply", "RealDiv": "true_divide",
    "Maximum": "maximum", "Minimum": "minimum", "Pow": "power", "FloorDiv": "floor_divide",
    "FloorMod": "mod", "Equal": "equal", "NotEqual": "not_equal", "Less": "less",
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


@register_lowering("Div")
def _div(node):
    _, jnp, lax = jax_modules()
    return lax.div if _is_int(node.input_dtypes[0]) else jnp.true_divide


@register_lowering("Cast")
def _cast(node):
    dst = np.dtype(dtypes.as_dtype(node.attr("DstT")).np_dtype)
    return lambda x: x.astype(dst)


@register_lowering("MatMul")
def _matmul(node):
    ta, tb = bool(node.attr("transpose_a")), bool(node.attr("transpose_b"))
    _, jnp, _ = jax_modules()

    def run(a, b):
        return jnp.matmul(a.T if ta else a, b.T if tb else b)

    return run


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
                return lax.div(jnp.sum(x, axis=axes, keepdims=keep), np.array(count, x.dtype))
            return fn(x, axis=axes, keepdims=keep).astype(x.dtype)

        return run


for _op, _name in {"Sum": "sum", "Mean": "mean", "Max": "max", "Min": "min",
                   "Prod": "prod"}.items():
    _reduction(_op, _name)
