"""CPU kernels for math ops: elementwise unary/binary ops, comparisons, casts, matmul, AddN.

Kernels that need no dtype-specific work are numpy ufuncs registered directly (the inputs of
a binary op share one dtype, so ufuncs keep it). Dtype-dependent choices (integer division,
integer rounding, float16 accumulation) are made once in the factory, from the node's dtype.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.runtime.kernels.cpu import math_special, parallel
from tensorweave.runtime.kernels.registry import register_kernel, register_simple_kernel


def _np_dtype(dt) -> np.dtype:
    return dtypes.as_dtype(dt).base_dtype.np_dtype


def _is_int(dt: np.dtype) -> bool:
    return dt.kind in "iu"


def _by_dtype(op: str, *, ints=None, floats=None, **flags) -> None:
    """Registers `op` with `ints(np_dtype)` or `floats(np_dtype)` returning the run function,
    chosen from the dtype of input 0 (floats also covers complex)."""

    def factory(node):
        dt = _np_dtype(node.input_dtypes[0])
        make = ints if _is_int(dt) or dt.kind == "b" else floats
        if make is None:
            raise errors.UnimplementedError(
                None, None, f"No '{op}' kernel for dtype {dtypes.as_dtype(dt).name}")
        return make(dt)

    register_kernel(op, **flags)(factory)


def _const(fn):
    """A maker ignoring the dtype."""
    return lambda dt: fn


def _cast_back(fn):
    """A maker that casts `fn`'s result back to the input dtype (e.g. np.tan on int32)."""
    return lambda dt: (lambda x: fn(x).astype(dt))


# -- unary ------------------------------------------------------------------------------------
for _op, _fn in {"Neg": np.negative, "Square": np.square, "Sin": np.sin, "Cos": np.cos,
                 "Sqrt": np.sqrt, "Exp": np.exp, "Expm1": np.expm1, "Log": np.log,
                 "Log1p": np.log1p, "Sinh": np.sinh, "Cosh": np.cosh, "Tanh": np.tanh,
                 "Asinh": np.arcsinh, "Acosh": np.arccosh, "Atanh": np.arctanh,
                 "Floor": np.floor, "Ceil": np.ceil, "Rint": np.rint, "IsNan": np.isnan,
                 "IsInf": np.isinf, "IsFinite": np.isfinite, "LogicalNot": np.logical_not,
                 "Conj": np.conjugate, "ComplexAbs": np.abs, "Angle": np.angle,
                 "Erf": math_special.erf, "Erfc": math_special.erfc,
                 "Lgamma": math_special.lgamma, "Digamma": math_special.digamma}.items():
    register_simple_kernel(_op, _fn)

for _op, _fn in {"Tan": np.tan, "Asin": np.arcsin, "Acos": np.arccos,
                 "Atan": np.arctan}.items():
    _by_dtype(_op, ints=_cast_back(_fn), floats=_const(_fn))

_by_dtype("Abs", ints=_const(np.abs), floats=_const(np.abs))
_by_dtype("Round", ints=_const(np.copy), floats=_const(np.round))


def _rsqrt(x):
    out = np.sqrt(x)
    return np.reciprocal(out, out=out) if isinstance(out, np.ndarray) else 1 / out


def _int_reciprocal(dt):
    """C++'s 1 / x on integers: 1 for 1, -1 for -1, 0 otherwise (x == 0 fails)."""
    def run(x):
        _check_nonzero(x)
        return np.where(np.abs(x) == 1, x, 0).astype(dt)

    return run


def _float_sign(dt):
    """sign(x), with 0 for nan as TF (numpy gives nan); complex: x / |x|."""
    if dt.kind == "c":
        return np.sign

    def run(x):
        out = np.sign(x)
        return np.where(out != out, out.dtype.type(0), out) if out.dtype.kind == "f" else out

    return run


def _sigmoid_real(x):
    """1 / (1 + exp(-x)): exp overflows to inf only where the result underflows to 0."""
    with np.errstate(over="ignore"):
        e = np.exp(np.negative(x))
    e += 1
    return np.reciprocal(e, out=e) if isinstance(e, np.ndarray) else 1 / e


def _sigmoid(dt):
    return (lambda x: 1 / (1 + np.exp(-x))) if dt.kind == "c" else _sigmoid_real


register_simple_kernel("Rsqrt", _rsqrt)
_by_dtype("Sign", ints=_const(np.sign), floats=_float_sign)
_by_dtype("Sigmoid", floats=_sigmoid)
for _op in ("Reciprocal", "Inv"):
    _by_dtype(_op, ints=_int_reciprocal, floats=_const(np.reciprocal))


@register_kernel("Real")
def _real(node):
    return lambda x: np.real(x).copy()


@register_kernel("Imag")
def _imag(node):
    return lambda x: np.imag(x).copy()


@register_kernel("Complex")
def _complex(node):
    dt = _np_dtype(node.output_dtypes[0])

    def run(re, im):
        out = np.empty(np.broadcast_shapes(np.shape(re), np.shape(im)), dt)
        out.real, out.imag = re, im
        return out

    return run


# -- binary -----------------------------------------------------------------------------------
for _op, _fn in {"AddV2": np.add, "Add": np.add, "Sub": np.subtract, "Mul": np.multiply,
                 "Maximum": np.maximum, "Minimum": np.minimum, "Atan2": np.arctan2,
                 "Less": np.less, "LessEqual": np.less_equal, "Greater": np.greater,
                 "GreaterEqual": np.greater_equal, "LogicalAnd": np.logical_and,
                 "LogicalOr": np.logical_or}.items():
    register_simple_kernel(_op, _fn)


def _check_nonzero(y) -> None:
    if not np.all(y):
        raise errors.InvalidArgumentError(None, None, "Integer division by zero")


def _int_floordiv(dt):
    def run(x, y):
        _check_nonzero(y)
        return np.floor_divide(x, y)

    return run


def _int_truncdiv(dt):
    """C++ integer division: truncation toward zero."""
    if dt.kind == "u":
        return _int_floordiv(dt)

    def run(x, y):
        _check_nonzero(y)
        q, r = np.divmod(x, y)
        return q + ((r != 0) & ((x < 0) != (y < 0))).astype(dt)

    return run


def _int_floormod(dt):
    def run(x, y):
        _check_nonzero(y)
        return np.mod(x, y)

    return run


def _int_truncmod(dt):
    def run(x, y):
        _check_nonzero(y)
        return np.fmod(x, y)

    return run


def _float_floordiv(dt):
    """floor(x / y), as TF (numpy's floor_divide corrects x / y's rounding: 1 // 0.1 = 9)."""
    return lambda x, y: np.floor(np.divide(x, y))


def _float_truncdiv(dt):
    return lambda x, y: np.trunc(np.divide(x, y))


for _op in ("Div", "RealDiv"):
    _by_dtype(_op, ints=_int_truncdiv, floats=_const(np.divide))
_by_dtype("FloorDiv", ints=_int_floordiv, floats=_float_floordiv)
_by_dtype("TruncateDiv", ints=_int_truncdiv, floats=_float_truncdiv)
_by_dtype("FloorMod", ints=_int_floormod, floats=_const(np.mod))
for _op in ("TruncateMod", "Mod"):
    _by_dtype(_op, ints=_int_truncmod, floats=_const(np.fmod))
register_simple_kernel("Pow", np.power)


def _squared_difference(dt):
    if dt.kind == "c":
        return lambda x, y: (lambda d: d * np.conj(d))(np.subtract(x, y))
    return lambda x, y: np.square(np.subtract(x, y))


_by_dtype("SquaredDifference", ints=_squared_difference, floats=_squared_difference)


def _where_zero(cond, value, dt):
    return np.where(cond, dt.type(0), value).astype(dt, copy=False)


def _div_no_nan(dt):
    def run(x, y):
        with np.errstate(divide="ignore", invalid="ignore"):
            return _where_zero(np.equal(y, 0), np.divide(x, y), dt)

    return run


def _mul_no_nan(dt):
    def run(x, y):
        with np.errstate(invalid="ignore", over="ignore"):
            return _where_zero(np.equal(y, 0), np.multiply(x, y), dt)

    return run


def _xdivy(dt):
    def run(x, y):
        with np.errstate(divide="ignore", invalid="ignore"):
            return _where_zero(np.equal(x, 0), np.divide(x, y), dt)

    return run


def _xlogy(dt):
    def run(x, y):
        with np.errstate(divide="ignore", invalid="ignore"):
            return _where_zero(np.equal(x, 0), np.multiply(x, np.log(y)), dt)

    return run


for _op, _make in {"DivNoNan": _div_no_nan, "MulNoNan": _mul_no_nan, "Xdivy": _xdivy,
                   "Xlogy": _xlogy}.items():
    _by_dtype(_op, floats=_make)


def _object_compare(ufunc):
    """Elementwise comparison of string (object) arrays, as a bool array."""
    return lambda x, y: np.asarray(ufunc(x, y), dtype=bool)


def _equality(op: str, ufunc, mismatch: bool):
    """Equal/NotEqual: broadcasting; with `incompatible_shape_error=False` shapes that cannot
    broadcast give the scalar `mismatch` instead of an error."""

    @register_kernel(op)
    def factory(node):
        strict = node.attr("incompatible_shape_error", True)
        strings = dtypes.as_dtype(node.attr("T")) == dtypes.string
        compare = _object_compare(ufunc) if strings else ufunc
        if strict and not strings:
            return compare

        def run(x, y):
            try:
                return compare(x, y)
            except ValueError:
                if strict:
                    raise errors.InvalidArgumentError(
                        None, None, f"Incompatible shapes: {list(np.shape(x))} vs. "
                                    f"{list(np.shape(y))}") from None
                return np.bool_(mismatch)

        return run


_equality("Equal", np.equal, False)
_equality("NotEqual", np.not_equal, True)


# -- cast -------------------------------------------------------------------------------------
@register_kernel("Cast")
def _cast(node):
    src, dst = dtypes.as_dtype(node.attr("SrcT")), dtypes.as_dtype(node.attr("DstT"))
    if dtypes.string in (src, dst) and src != dst:
        raise errors.UnimplementedError(None, None,
                                        f"Cast {src.name} to {dst.name} is not supported")
    target = dst.np_dtype
    if src.is_complex and not dst.is_complex:
        return lambda x: np.real(x).astype(target)
    return lambda x: np.array(x, dtype=target)


# -- matrices ---------------------------------------------------------------------------------
def _matmul_fn(dt: np.dtype):
    """np.matmul (2-D float GEMMs split over the kernel threads: `parallel.matmul`); half
    precision goes through float32 (accuracy, and numpy has no fast half matmul), as TF
    accumulates half products in float."""
    if dt.kind == "f" and dt.itemsize >= 4:
        return _float_matmul
    if dt.kind in "fc" and dt.itemsize >= 4 or dt.kind in "iu":
        return np.matmul
    return lambda a, b: np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(dt)


def _float_matmul(a, b):
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.ndim == b.ndim == 2:
        return parallel.matmul(a, b)
    return np.matmul(a, b)


@register_kernel("MatMul")
def _matmul(node):
    ta, tb = node.attr("transpose_a"), node.attr("transpose_b")
    mm = _matmul_fn(_np_dtype(node.attr("T")))
    if not ta and not tb:
        return mm
    return lambda a, b: mm(a.T if ta else a, b.T if tb else b)


def _adjoint(x):
    return np.conj(np.swapaxes(x, -1, -2)) if x.dtype.kind == "c" else np.swapaxes(x, -1, -2)


def _batch_matmul(strict: bool):
    def factory(node):
        adj_x, adj_y = node.attr("adj_x"), node.attr("adj_y")
        mm = _matmul_fn(_np_dtype(node.attr("T")))

        def run(x, y):
            if strict and x.shape[:-2] != y.shape[:-2]:
                raise errors.InvalidArgumentError(
                    None, None, f"In[0] and In[1] must have compatible batch dimensions: "
                                f"{list(x.shape)} vs. {list(y.shape)}")
            return mm(_adjoint(x) if adj_x else x, _adjoint(y) if adj_y else y)

        return run

    return factory


register_kernel("BatchMatMul")(_batch_matmul(strict=True))
register_kernel("BatchMatMulV2")(_batch_matmul(strict=False))


def _add_n(node):
    def run(*xs):
        shape = np.shape(xs[0])
        for i, x in enumerate(xs[1:], start=1):
            if np.shape(x) != shape:
                raise errors.InvalidArgumentError(
                    None, None, f"Inputs to operation {node.name} of type {node.op} must have "
                                f"the same size and shape.  Input 0: {list(shape)} != input "
                                f"{i}: {list(np.shape(x))}")
        if len(xs) == 1:
            return np.array(xs[0], copy=True)
        out = np.add(xs[0], xs[1])
        for x in xs[2:]:
            out = np.add(out, x, out=out) if isinstance(out, np.ndarray) else out + x
        return out

    return run


register_kernel("AddN")(_add_n)
register_kernel("AccumulateNV2")(_add_n)


@register_kernel("ClipByValue")
def _clip_by_value(node):
    return lambda t, lo, hi: np.maximum(np.minimum(t, hi), lo)


@register_kernel("LinSpace")
def _lin_space(node):
    dt = _np_dtype(node.attr("T"))

    def run(start, stop, num):
        n = int(num)
        if n <= 0:
            raise errors.InvalidArgumentError(None, None, f"Requires num > 0: {n}")
        return np.linspace(start, stop, n).astype(dt)

    return run
