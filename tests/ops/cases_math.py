"""Harness cases for the math family: elementwise, casts, matmul, reductions, scans, segments."""

from __future__ import annotations

import math

import numpy as np

from tensorweave.ops import math_matmul_ops as mm
from tensorweave.ops import math_ops as m
from tensorweave.ops import reduction_ops as r
from tensorweave.ops.math_ops import _op
from tensorweave.runtime.kernels.cpu import math as _math_kernels  # noqa: F401
from tensorweave.runtime.kernels.cpu import reduction as _reduction_kernels  # noqa: F401
from tests.ops.harness import OpCase

F16, F32, F64 = np.float16, np.float32, np.float64
I32, I64 = np.int32, np.int64
_RNG = np.random.default_rng(7)


def _arr(values, dt):
    return np.asarray(values, dtype=dt)


def _uniform(lo, hi, shape=(2, 3)):
    return _RNG.uniform(lo, hi, size=shape)


def _tol(dt) -> dict:
    return {"rtol": 2e-3, "atol": 2e-3} if dt == F16 else {"rtol": 1e-5, "atol": 1e-6}


def _vec(fn):
    """A numpy reference from a scalar `math` function, in the input's dtype."""
    return lambda x: np.vectorize(fn, otypes=[np.float64])(x.astype(np.float64)).astype(x.dtype)


# -- unary ------------------------------------------------------------------------------------
_SIGNED = (-2.5, 2.5)
_UNARY = [
    # op, build, reference, domain, dtypes
    ("Neg", m.negative, np.negative, _SIGNED, (F16, F32, F64, I32, I64)),
    ("Abs", m.abs, np.abs, _SIGNED, (F16, F32, F64, I32, I64)),
    ("Square", m.square, np.square, _SIGNED, (F16, F32, F64, I32, I64)),
    ("Sign", m.sign, np.sign, _SIGNED, (F32, F64, I32, I64)),
    ("Sqrt", m.sqrt, np.sqrt, (0.1, 4.0), (F16, F32, F64)),
    ("Rsqrt", m.rsqrt, lambda x: 1 / np.sqrt(x), (0.1, 4.0), (F16, F32, F64)),
    ("Exp", m.exp, np.exp, _SIGNED, (F16, F32, F64)),
    ("Expm1", m.expm1, np.expm1, _SIGNED, (F32, F64)),
    ("Log", m.log, np.log, (0.1, 4.0), (F16, F32, F64)),
    ("Log1p", m.log1p, np.log1p, (-0.5, 4.0), (F32, F64)),
    ("Sin", m.sin, np.sin, _SIGNED, (F16, F32, F64)),
    ("Cos", m.cos, np.cos, _SIGNED, (F32, F64)),
    ("Tan", m.tan, np.tan, (-1.2, 1.2), (F32, F64)),
    ("Asin", m.asin, np.arcsin, (-0.9, 0.9), (F32, F64)),
    ("Acos", m.acos, np.arccos, (-0.9, 0.9), (F32, F64)),
    ("Atan", m.atan, np.arctan, _SIGNED, (F32, F64)),
    ("Sinh", m.sinh, np.sinh, _SIGNED, (F32, F64)),
    ("Cosh", m.cosh, np.cosh, _SIGNED, (F32, F64)),
    ("Tanh", m.tanh, np.tanh, _SIGNED, (F16, F32, F64)),
    ("Asinh", m.asinh, np.arcsinh, _SIGNED, (F32, F64)),
    ("Acosh", m.acosh, np.arccosh, (1.0, 4.0), (F32, F64)),
    ("Atanh", m.atanh, np.arctanh, (-0.9, 0.9), (F32, F64)),
    ("Sigmoid", m.sigmoid, lambda x: 1 / (1 + np.exp(-x.astype(F64))), (-30, 30),
     (F16, F32, F64)),
    ("Floor", m.floor, np.floor, _SIGNED, (F16, F32, F64)),
    ("Ceil", m.ceil, np.ceil, _SIGNED, (F32, F64)),
    ("Rint", m.rint, np.rint, _SIGNED, (F32, F64)),
    ("Reciprocal", m.reciprocal, np.reciprocal, (0.5, 3.0), (F16, F32, F64)),
    ("Inv", m.inv, np.reciprocal, (0.5, 3.0), (F32, F64)),
    ("Erf", m.erf, _vec(math.erf), (-3.0, 3.0), (F16, F32, F64)),
    ("Erfc", m.erfc, _vec(math.erfc), (-3.0, 3.0), (F32, F64)),
    ("Lgamma", m.lgamma, _vec(math.lgamma), (0.1, 6.0), (F32, F64)),
    ("Digamma", m.digamma, None, (0.5, 6.0), (F32, F64)),
    ("IsNan", m.is_nan, np.isnan, _SIGNED, (F16, F32, F64)),
    ("IsInf", m.is_inf, np.isinf, _SIGNED, (F32, F64)),
    ("IsFinite", m.is_finite, np.isfinite, _SIGNED, (F32, F64)),
]


def _unary_input(domain, dt):
    x = _uniform(*domain)
    if dt in (I32, I64):
        x = np.round(x * 3)
    return x.astype(dt)


def _unary_cases() -> list[OpCase]:
    cases = []
    for op, build, ref, domain, types in _UNARY:
        for dt in types:
            cases.append(OpCase(op, build, [_unary_input(domain, dt)], ref,
                                name=np.dtype(dt).name, **_tol(dt)))
    special = np.array([[np.nan, np.inf, -np.inf], [0.0, -1.5, 2.0]], F32)
    cases += [
        OpCase("IsNan", m.is_nan, [special], np.isnan, name="special"),
        OpCase("IsInf", m.is_inf, [special], np.isinf, name="special"),
        OpCase("IsFinite", m.is_finite, [special], np.isfinite, name="special"),
        OpCase("Sign", m.sign, [special], lambda x: np.nan_to_num(np.sign(x), nan=0.0),
               name="nan_is_zero"),
        OpCase("Round", m.round, [_arr([[0.5, 1.5, 2.5], [-0.5, -1.5, 2.4]], F32)],
               np.round, name="half_to_even"),
        OpCase("Round", lambda x: _op("Round", x), [_arr([[1, -2, 3]], I32)], lambda x: x,
               name="int32"),
        OpCase("Digamma", m.digamma, [_arr([[1.0, 0.5, -0.5]], F64)],
               lambda x: _arr([[-0.5772156649015329, -1.9635100260214235,
                                0.03648997397857652]], F64), name="known"),
        OpCase("Lgamma", m.lgamma, [_arr([[-0.5, -2.5, 30.0]], F64)], _vec(math.lgamma),
               name="negative"),
        OpCase("Sigmoid", m.sigmoid, [_arr([[-80.0, -20.0, 0.0, 100.0]], F32)],
               lambda x: (1 / (1 + np.exp(-x.astype(F64)))).astype(F32), name="tails",
               atol=0.0),
        OpCase("LogicalNot", m.logical_not, [np.array([[True, False, True]])],
               np.logical_not),
        OpCase("Reciprocal", m.reciprocal, [_arr([[1, -1, 2, 5]], I32)],
               lambda x: _arr([[1, -1, 0, 0]], I32), name="int32"),
    ]
    return cases


# -- complex ----------------------------------------------------------------------------------
_C64 = (_uniform(-2, 2) + 1j * _uniform(-2, 2)).astype(np.complex64)
_COMPLEX_CASES = [
    OpCase("Real", m.real, [_C64], np.real),
    OpCase("Imag", m.imag, [_C64.astype(np.complex128)], np.imag),
    OpCase("Conj", m.conj, [_C64], np.conj),
    OpCase("ComplexAbs", m.abs, [_C64], np.abs),
    OpCase("Angle", lambda x: _op("Angle", x, Tout=np.float32), [_C64], np.angle),
    OpCase("Complex", m.complex, [_uniform(-1, 1).astype(F32), _uniform(-1, 1, (3,)).astype(F32)],
           lambda a, b: (a + 1j * b).astype(np.complex64)),
    OpCase("Exp", m.exp, [_C64], np.exp, name="complex64"),
]


# -- binary -----------------------------------------------------------------------------------
def _trunc_div(x, y):
    q = np.abs(x) // np.abs(y)
    return (q * np.sign(x) * np.sign(y)).astype(x.dtype)


_NONZERO_INTS = _arr([[-7, 7, 5], [-5, 9, -9]], I32)
_DIVISORS = _arr([2, -3, 4], I32)
_BINARY = [
    # op, build, reference, dtypes
    ("AddV2", m.add, np.add, (F16, F32, F64, I32, I64, np.uint8, np.complex64)),
    ("Sub", m.subtract, np.subtract, (F16, F32, F64, I32, I64, np.int8, np.int16)),
    ("Mul", m.multiply, np.multiply, (F16, F32, F64, I32, I64, np.uint16, np.complex128)),
    ("Maximum", m.maximum, np.maximum, (F16, F32, F64, I32, I64)),
    ("Minimum", m.minimum, np.minimum, (F16, F32, F64, I32, I64)),
    ("SquaredDifference", m.squared_difference, lambda x, y: np.square(x - y),
     (F32, F64, I32, I64)),
    ("Pow", m.pow, lambda x, y: np.power(np.abs(x), y), (F32, F64)),
    ("RealDiv", m.realdiv, np.divide, (F16, F32, F64)),
    ("Div", lambda x, y: _op("Div", x, y), np.divide, (F32, F64)),
    ("FloorDiv", m.floordiv, lambda x, y: np.floor(x / y), (F32, F64)),
    ("TruncateDiv", m.truncatediv, lambda x, y: np.trunc(x / y), (F32, F64)),
    ("FloorMod", m.floormod, np.mod, (F32, F64)),
    ("TruncateMod", m.truncatemod, np.fmod, (F32, F64)),
    ("Mod", lambda x, y: _op("Mod", x, y), np.fmod, (F32, F64)),
    ("Atan2", m.atan2, np.arctan2, (F32, F64)),
    ("Less", m.less, np.less, (F32, I32, I64)),
    ("LessEqual", m.less_equal, np.less_equal, (F32, I32)),
    ("Greater", m.greater, np.greater, (F32, I32)),
    ("GreaterEqual", m.greater_equal, np.greater_equal, (F64, I64)),
    ("Equal", m.equal, np.equal, (F32, I32, I64)),
    ("NotEqual", m.not_equal, np.not_equal, (F32, I32)),
]


def _binary_inputs(op, dt):
    x = np.round(_uniform(-3, 3) * 2) / 2
    y = np.round(_uniform(0.5, 3, (3,)) * 2) / 2
    if op == "Pow":
        x = np.abs(x)
    if dt in (np.uint8, np.uint16):
        x = np.abs(x)
    if np.dtype(dt).kind == "c":
        return [(x + 1j * x[::-1]).astype(dt), (y - 1j).astype(dt)]
    if np.dtype(dt).kind in "iu":
        x, y = np.round(x * 2), np.round(y * 2)
    return [x.astype(dt), y.astype(dt)]


def _binary_cases() -> list[OpCase]:
    cases = [OpCase(op, build, _binary_inputs(op, dt), ref, name=np.dtype(dt).name, **_tol(dt))
             for op, build, ref, types in _BINARY for dt in types]
    ints = [_NONZERO_INTS, _DIVISORS]
    cases += [
        OpCase("Div", lambda x, y: _op("Div", x, y), ints, _trunc_div, name="int32_trunc"),
        OpCase("RealDiv", m.realdiv, ints, _trunc_div, name="int32"),
        OpCase("FloorDiv", m.floordiv, ints, np.floor_divide, name="int32"),
        OpCase("FloorDiv", m.floordiv, [a.astype(I64) for a in ints], np.floor_divide,
               name="int64"),
        OpCase("TruncateDiv", m.truncatediv, ints, _trunc_div, name="int32"),
        OpCase("FloorMod", m.floormod, ints, np.mod, name="int32"),
        OpCase("TruncateMod", m.truncatemod, ints, np.fmod, name="int32"),
        OpCase("Mod", lambda x, y: _op("Mod", x, y), [a.astype(I64) for a in ints], np.fmod,
               name="int64"),
        OpCase("FloorDiv", m.floordiv, [_arr([1.0, -1.0], F64), _arr([0.1, 0.1], F64)],
               lambda x, y: np.floor(x / y), name="tf_floor_of_quotient"),
        OpCase("Pow", m.pow, [_arr([[2, 3, -2]], I32), _arr([3, 2, 3], I32)], np.power,
               name="int32"),
        OpCase("Add", lambda x, y: _op("Add", x, y), _binary_inputs("Add", F32), np.add),
        OpCase("Add", m.add, [np.array([b"ab", b"c"], object), np.array([b"x"], object)],
               lambda x, y: np.array([b"abx", b"cx"], object), name="string"),
        OpCase("Equal", m.equal, [np.array([b"a", b"b"], object), np.array([b"a"], object)],
               lambda x, y: np.array([True, False]), name="string"),
        OpCase("Equal", lambda x, y: _op("Equal", x, y, incompatible_shape_error=False),
               [_arr([1, 2, 3], I32), _arr([1, 2], I32)], lambda x, y: np.bool_(False),
               name="incompatible"),
        OpCase("NotEqual", lambda x, y: _op("NotEqual", x, y, incompatible_shape_error=False),
               [_arr([1, 2, 3], I32), _arr([1, 2], I32)], lambda x, y: np.bool_(True),
               name="incompatible"),
        OpCase("LogicalAnd", m.logical_and, [np.array([[True, False], [True, True]]),
                                             np.array([True, False])], np.logical_and),
        OpCase("LogicalOr", m.logical_or, [np.array([[True, False], [False, False]]),
                                           np.array([False, True])], np.logical_or),
        OpCase("DivNoNan", m.div_no_nan, [_arr([[1, 2, 0], [4, -5, 6]], F32),
                                          _arr([2, 0, 0], F32)],
               lambda x, y: np.where(y == 0, 0, x / np.where(y == 0, 1, y)).astype(F32)),
        OpCase("MulNoNan", m.multiply_no_nan, [_arr([[np.inf, 2, np.nan]], F64),
                                               _arr([0, 3, 0], F64)],
               lambda x, y: _arr([[0, 6, 0]], F64)),
        OpCase("Xdivy", m.xdivy, [_arr([[0, 2, 3]], F32), _arr([0, 4, 2], F32)],
               lambda x, y: _arr([[0, 0.5, 1.5]], F32)),
        OpCase("Xlogy", m.xlogy, [_arr([[0, 2, 3]], F64), _arr([0, 4, 2], F64)],
               lambda x, y: np.where(x == 0, 0, x * np.log(np.where(x == 0, 1, y)))),
    ]
    return cases


# -- cast -------------------------------------------------------------------------------------
_CAST = [
    (F32, I32, [[1.7, -1.7, 2.5], [-0.2, 3.9, -3.9]], lambda x: np.trunc(x).astype(I32)),
    (F64, I64, [[1e10, -2.5, 0.5]], lambda x: np.trunc(x).astype(I64)),
    (I32, F32, [[1, -2, 3], [4, 5, -6]], lambda x: x.astype(F32)),
    (I64, F16, [[1, 2, 2049]], lambda x: x.astype(F16)),
    (F32, np.bool_, [[0.0, -0.5, 2.0]], lambda x: x != 0),
    (np.bool_, F32, [[True, False, True]], lambda x: x.astype(F32)),
    (I32, np.uint8, [[1, 255, 256]], lambda x: x.astype(np.uint8)),
    (np.complex64, F32, [[1 + 2j, -3 - 1j]], lambda x: x.real.astype(F32)),
    (F32, F64, [[0.1, 0.2]], lambda x: x.astype(F64)),
]
_CAST_CASES = [
    OpCase("Cast", lambda x, d=dst: m.cast(x, d), [_arr(v, src)], ref,
           name=f"{np.dtype(src).name}_to_{np.dtype(dst).name}")
    for src, dst, v, ref in _CAST
]


# -- matrices ---------------------------------------------------------------------------------
def _mats(shape_a, shape_b, dt=F32):
    return [_uniform(-1, 1, shape_a).astype(dt), _uniform(-1, 1, shape_b).astype(dt)]


def _t(x):
    return np.swapaxes(x, -1, -2)


def _matmul_op(**attrs):
    return lambda a, b: _op("MatMul", a, b, **attrs)


_MATRIX_CASES = [
    OpCase("MatMul", mm.matmul, _mats((2, 3), (3, 4)), np.matmul, name="wrapper",
           placeholders=False),
    OpCase("MatMul", _matmul_op(), _mats((2, 3), (3, 4), F64), np.matmul, name="float64"),
    OpCase("MatMul", _matmul_op(), _mats((2, 3), (3, 4), F16), np.matmul, name="float16",
           rtol=5e-3, atol=5e-3),
    OpCase("MatMul", _matmul_op(), [_arr([[1, 2, 3], [4, 5, 6]], I32),
                                    _arr([[1], [0], [-1]], I32)], np.matmul, name="int32"),
    OpCase("MatMul", _matmul_op(transpose_a=True), _mats((3, 2), (3, 4)),
           lambda a, b: a.T @ b, name="transpose_a"),
    OpCase("MatMul", _matmul_op(transpose_b=True), _mats((2, 3), (4, 3)),
           lambda a, b: a @ b.T, name="transpose_b"),
    OpCase("MatMul", lambda a, b: mm.matmul(a, b, adjoint_a=True, transpose_b=True),
           _mats((3, 2), (4, 3), np.complex64), lambda a, b: a.conj().T @ b.T,
           name="adjoint_a_complex", placeholders=False),
    OpCase("BatchMatMul", lambda x, y: _op("BatchMatMul", x, y, adj_x=True),
           _mats((2, 3, 2), (2, 3, 4)), lambda x, y: _t(x) @ y),
    OpCase("BatchMatMulV2", mm.matmul, _mats((2, 1, 2, 3), (3, 3, 4)), np.matmul),
    OpCase("BatchMatMulV2", lambda a, b: mm.matmul(a, b, transpose_b=True),
           _mats((2, 2, 3), (5, 3)), lambda a, b: a @ b.T, name="adj_y_rank2_rhs"),
    OpCase("AddN", lambda *xs: mm.add_n(list(xs)),
           [_uniform(-1, 1).astype(F32) for _ in range(3)], lambda *xs: sum(xs)),
    OpCase("AddN", lambda *xs: mm.add_n(list(xs)), [_arr([[1, 2]], I64), _arr([[3, 4]], I64)],
           lambda *xs: sum(xs), name="int64"),
    OpCase("AccumulateNV2", lambda *xs: mm.accumulate_n(list(xs)),
           [_uniform(-1, 1).astype(F64) for _ in range(3)], lambda *xs: sum(xs)),
    OpCase("ClipByValue", lambda t, lo, hi: _op("ClipByValue", t, lo, hi),
           [_arr([[-3, 0.5, 4], [1, 2, 9]], F32), _arr(0.0, F32), _arr(2.0, F32)],
           lambda t, lo, hi: np.clip(t, lo, hi)),
    OpCase("Maximum", lambda t: mm.clip_by_value(t, 0.0, 2.0),
           [_arr([[-3, 0.5, 4], [1, 2, 9]], F32)], lambda t: np.clip(t, 0, 2),
           name="clip_by_value"),
    OpCase("LinSpace", mm.linspace, [_arr(1.0, F32), _arr(3.0, F32), _arr(5, I32)],
           lambda a, b, n: np.linspace(a, b, n).astype(F32)),
    OpCase("LinSpace", mm.linspace, [_arr(-1.0, F64), _arr(1.0, F64), _arr(1, I64)],
           lambda a, b, n: np.array([-1.0]), name="single"),
]


# -- reductions -------------------------------------------------------------------------------
_X23 = _uniform(-2, 2).astype(F32)
_X234 = _uniform(-2, 2, (2, 3, 4))
_I23 = _arr([[1, -2, 3], [4, 5, -7]], I32)
_B23 = np.array([[True, False, True], [True, True, True]])


def _mean_trunc(x, axis):
    s = x.sum(axis=axis, dtype=np.int64)
    n = x.size // s.size
    return (np.sign(s) * (np.abs(s) // n)).astype(x.dtype)


_REDUCTION_CASES = [
    OpCase("Sum", lambda x: r.reduce_sum(x, 1), [_X23], lambda x: x.sum(1)),
    OpCase("Sum", lambda x, a: r.reduce_sum(x, a), [_X234, _arr([0, -1], I32)],
           lambda x, a: x.sum(axis=(0, 2)), name="axes_input"),
    OpCase("Sum", lambda x: r.reduce_sum(x, [0, 1], keepdims=True), [_I23],
           lambda x: x.sum(axis=(0, 1), keepdims=True).astype(I32), name="int32_keepdims"),
    OpCase("Sum", lambda x: r.reduce_sum(x, -1), [_X23.astype(F16)],
           lambda x: x.astype(F32).sum(-1).astype(F16), name="float16", rtol=2e-3),
    OpCase("Sum", lambda x: r.reduce_sum(x, []), [_X23], lambda x: x, name="no_axes"),
    OpCase("Sum", lambda x: r.reduce_sum(x, 0), [np.zeros((0, 3), F32)],
           lambda x: np.zeros(3, F32), name="empty"),
    OpCase("Mean", lambda x: r.reduce_mean(x, 0), [_X23.astype(F64)], lambda x: x.mean(0)),
    OpCase("Mean", lambda x: r.reduce_mean(x, 1), [_I23], lambda x: _mean_trunc(x, 1),
           name="int32_truncates"),
    OpCase("Mean", lambda x: r.reduce_mean(x, [0, 1]), [_X23.astype(F16)],
           lambda x: np.float16(x.astype(F32).mean()), name="float16", rtol=2e-3),
    OpCase("Prod", lambda x: r.reduce_prod(x, 1, keepdims=True), [_I23],
           lambda x: x.prod(1, keepdims=True).astype(I32)),
    OpCase("Max", lambda x: r.reduce_max(x, 0), [_X23], lambda x: x.max(0)),
    OpCase("Max", lambda x: r.reduce_max(x, 1), [_I23.astype(I64)], lambda x: x.max(1),
           name="int64"),
    OpCase("Max", lambda x: r.reduce_max(x, 0), [np.zeros((0, 2), F32)],
           lambda x: np.full(2, -np.inf, F32), name="empty_is_lowest"),
    OpCase("Min", lambda x: r.reduce_min(x, [1, 2]), [_X234], lambda x: x.min(axis=(1, 2))),
    OpCase("Min", lambda x: r.reduce_min(x, 0), [_I23], lambda x: x.min(0), name="int32"),
    OpCase("EuclideanNorm", lambda x: r.reduce_euclidean_norm(x, 1), [_X23],
           lambda x: np.sqrt((x.astype(F64) ** 2).sum(1)).astype(F32)),
    OpCase("All", lambda x: r.reduce_all(x, 1), [_B23], lambda x: x.all(1)),
    OpCase("Any", lambda x: r.reduce_any(x, 0, keepdims=True), [~_B23],
           lambda x: x.any(0, keepdims=True)),
    OpCase("ArgMax", lambda x: r.argmax(x, 1), [_X23], lambda x: x.argmax(1)),
    OpCase("ArgMax", lambda x: r.argmax(x, 0, output_type=np.int32), [_I23],
           lambda x: x.argmax(0).astype(I32), name="int32_output"),
    OpCase("ArgMin", lambda x: r.argmin(x, -1), [_X234], lambda x: x.argmin(-1)),
    OpCase("ArgMin", lambda x: r.argmin(x), [_arr([[1, 0, 1], [0, 2, 0]], I64)],
           lambda x: x.argmin(0), name="ties_first"),
]


# -- scans and segments -----------------------------------------------------------------------
def _exclusive(fn, identity):
    def ref(x):
        shifted = np.concatenate([np.full((1, x.shape[1]), identity, x.dtype), x[:-1]], 0)
        return fn(shifted, axis=0).astype(x.dtype)

    return ref


def _unsorted_ref(ufunc, identity, rows):
    def ref(data, ids):
        out = np.full((rows,) + data.shape[ids.ndim:], identity, data.dtype)
        flat_ids = ids.reshape(-1)
        flat = data.reshape((flat_ids.size,) + data.shape[ids.ndim:])
        for i, row in zip(flat_ids, flat):
            if i >= 0:
                out[i] = ufunc(out[i], row)
        return out

    return ref


def _sorted_ref(fn, data, ids, rows):
    out = np.zeros((rows,) + data.shape[1:], data.dtype)
    for k in range(rows):
        sel = data[ids == k]
        if len(sel):
            out[k] = fn(sel, axis=0)
    return out


_SEG_DATA = _uniform(-2, 2, (5, 3)).astype(F32)
_SEG_IDS = _arr([0, 0, 2, 2, 2], I32)
_UNSORTED_IDS = _arr([2, -1, 0, 2, 3], I64)

_SCAN_SEGMENT_CASES = [
    OpCase("Cumsum", lambda x: r.cumsum(x, 1), [_X23], lambda x: np.cumsum(x, 1)),
    OpCase("Cumsum", lambda x: r.cumsum(x, 0, exclusive=True), [_I23],
           _exclusive(np.cumsum, 0), name="exclusive_int32"),
    OpCase("Cumsum", lambda x: r.cumsum(x, -1, reverse=True), [_X23.astype(F64)],
           lambda x: np.flip(np.cumsum(np.flip(x, 1), 1), 1), name="reverse"),
    OpCase("Cumsum", lambda x: r.cumsum(x, 1, exclusive=True, reverse=True), [_X23],
           lambda x: np.flip(np.cumsum(np.flip(x, 1), 1), 1) - x, name="exclusive_reverse"),
    OpCase("Cumprod", lambda x: r.cumprod(x, 0), [_X23], lambda x: np.cumprod(x, 0)),
    OpCase("Cumprod", lambda x: r.cumprod(x, 0, exclusive=True), [_I23],
           _exclusive(np.cumprod, 1), name="exclusive_int32"),
    OpCase("SegmentSum", r.segment_sum, [_SEG_DATA, _SEG_IDS],
           lambda d, i: _sorted_ref(np.sum, d, i, 3), exact_static_shape=False),
    OpCase("SegmentMean", r.segment_mean, [_SEG_DATA, _SEG_IDS],
           lambda d, i: _sorted_ref(np.mean, d, i, 3), exact_static_shape=False),
    OpCase("SegmentProd", r.segment_prod, [_SEG_DATA, _SEG_IDS.astype(I64)],
           lambda d, i: _sorted_ref(np.prod, d, i, 3), exact_static_shape=False),
    OpCase("SegmentMax", r.segment_max, [_SEG_DATA, _SEG_IDS],
           lambda d, i: _sorted_ref(np.max, d, i, 3), exact_static_shape=False),
    OpCase("SegmentMin", r.segment_min, [_arr([[1, 5], [3, 2], [4, 4]], I32),
                                         _arr([1, 1, 3], I32)],
           lambda d, i: _sorted_ref(np.min, d, i, 4), name="int32_empty_rows_zero",
           exact_static_shape=False),
    OpCase("UnsortedSegmentSum", lambda d, i: r.unsorted_segment_sum(d, i, 4),
           [_SEG_DATA, _UNSORTED_IDS], _unsorted_ref(np.add, 0, 4)),
    OpCase("UnsortedSegmentSum", lambda d, i: r.unsorted_segment_sum(d, i, 3),
           [_arr([[1, 2], [3, 4]], I32), _arr([[0, 2], [2, 0]], I32)],
           _unsorted_ref(np.add, 0, 3), name="int32_2d_ids"),
    OpCase("UnsortedSegmentProd", lambda d, i: r.unsorted_segment_prod(d, i, 4),
           [_SEG_DATA, _UNSORTED_IDS], _unsorted_ref(np.multiply, 1, 4)),
    OpCase("UnsortedSegmentMax", lambda d, i: r.unsorted_segment_max(d, i, 4),
           [_SEG_DATA, _UNSORTED_IDS], _unsorted_ref(np.maximum, -np.inf, 4)),
    OpCase("UnsortedSegmentMin", lambda d, i: r.unsorted_segment_min(d, i, 4),
           [_SEG_DATA.astype(F64), _UNSORTED_IDS], _unsorted_ref(np.minimum, np.inf, 4)),
    OpCase("Bincount", lambda a, s, w: _op("Bincount", a, s, w),
           [_arr([1, 1, 3, 0, 7], I32), _arr(5, I32), _arr([], F32)],
           lambda a, s, w: _arr([1, 2, 0, 1, 0], F32)),
    OpCase("Bincount", lambda a, s, w: _op("Bincount", a, s, w),
           [_arr([[1, 1], [3, 0]], I32), _arr(4, I32), _arr([[0.5, 1], [2, 3]], F64)],
           lambda a, s, w: _arr([3, 1.5, 0, 2], F64), name="weights"),
]

CASES = (_unary_cases() + _COMPLEX_CASES + _binary_cases() + _CAST_CASES + _MATRIX_CASES
         + _REDUCTION_CASES + _SCAN_SEGMENT_CASES)
