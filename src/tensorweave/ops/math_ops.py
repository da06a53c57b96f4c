"""Math ops: elementwise unary and binary ops, comparisons, casts, and the Tensor operators.

Op types, inputs, attrs and allowed types are TensorFlow's (core/ops/math_ops.cc). The Python
wrappers follow TF1's signatures and default op names: `a + b` creates an op named "add" of
type AddV2 inside `name_scope(None, "add", [a, b])`, so a literal operand is a Const "add/y".
Matmul, add_n and friends live in `math_matmul_ops`, reductions in `reduction_ops`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import broadcast_binary, unchanged
from tensorweave.ops.registry import register_op
from tensorweave.ops.shape_inference import constant_value, register_constant_evaluator
from tensorweave.shapes import TensorShape, broadcast_shapes

# -- TF's type lists --------------------------------------------------------------------------
REAL_FLOAT = "{bfloat16, half, float, double}"
FLOAT_COMPLEX = "{bfloat16, half, float, double, complex64, complex128}"
UNARY_TYPES = "{bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}"
BINARY_MORE = ("{bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, "
               "complex64, complex128}")
BINARY_FEWER = "{bfloat16, half, float, double, int32, int64, complex64, complex128}"
_ADD_TYPES = ("{bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, int16, "
              "int32, int64, complex64, complex128")
_EQUAL_TYPES = ("{bfloat16, half, float, double, uint8, int8, int16, uint16, uint32, uint64, "
                "int32, int64, complex64, complex128, quint8, qint8, qint32, string, bool}")
_MINMAX = "{bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64}"
_MOD = "{int8, int16, int32, int64, uint8, uint16, bfloat16, half, float, double}"


# -- naming: TF's `with name_scope(name, default, values) as scope: op(..., name=scope)` --------
class _Scope(str):
    """An absolute op name chosen by `op_scope`; `_op` creates the op with exactly this name."""


def _graph_of(values):
    for v in values or ():
        g = getattr(v, "graph", None)
        if g is not None:
            return g
    return get_default_graph()


@contextlib.contextmanager
def op_scope(name, default_name: str, values=None) -> Iterator[_Scope]:
    """TF's `with name_scope(name, default_name, values) as scope:` for a wrapper whose last op
    is named after the scope: helper ops created inside land under `<scope>/`, and `_op(...,
    name=scope)` creates the op named `<scope>` itself (a nested `op_scope(scope, ...)`
    re-enters it). The name is reserved when the block exits, even if no op took it.
    """
    graph = _graph_of(values)
    with graph.as_default():
        if isinstance(name, _Scope):
            full = str(name)
        elif name and name.endswith("/"):
            full = name[:-1]
        else:
            full = graph.unique_name(name or default_name, mark_as_used=False)
        with graph.scopes.name_scope(full + "/"):
            yield _Scope(full)
        with graph.scopes.name_scope(None):
            if graph.unique_name(full, mark_as_used=False) == full:
                graph.unique_name(full)


def _op(op_type: str, *args, name=None, **attrs):
    """`apply_op`, honouring a `_Scope` name: the op is created in the scope's parent (where
    the wrapper was called, so converted literals land there too) with the exact name."""
    if isinstance(name, _Scope):
        parent, _, leaf = name.rpartition("/")
        with get_default_graph().scopes.name_scope(parent + "/" if parent else None):
            return apply_op(op_type, *args, name=leaf, **attrs)
    return apply_op(op_type, *args, name=name, **attrs)


# -- registration -----------------------------------------------------------------------------
def _unary(name: str, types: str) -> None:
    register_op(name, inputs=["x: T"], outputs=["y: T"], attrs=[f"T: {types}"],
                shape_fn=unchanged)


def _binary(name: str, types: str, commutative: bool = False) -> None:
    register_op(name, inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[f"T: {types}"],
                shape_fn=broadcast_binary, is_commutative=commutative)


def _equality_shape(ctx) -> TensorShape:
    """Broadcasting, unless `incompatible_shape_error` is false (then mismatches are allowed)."""
    if ctx.attr("incompatible_shape_error"):
        return broadcast_binary(ctx)
    try:
        return broadcast_shapes(ctx.input_shape(0), ctx.input_shape(1))
    except ValueError:
        return TensorShape([])


_UNARY_OPS = {
    UNARY_TYPES: ["Neg", "Inv", "Reciprocal", "Square", "Tan", "Asin", "Acos", "Atan", "Round"],
    FLOAT_COMPLEX: ["Sin", "Cos", "Sqrt", "Rsqrt", "Exp", "Expm1", "Log", "Log1p", "Sinh",
                    "Cosh", "Tanh", "Asinh", "Acosh", "Atanh", "Sigmoid"],
    REAL_FLOAT: ["Lgamma", "Digamma", "Erf", "Erfc", "Floor", "Ceil", "Rint"],
    "{bfloat16, half, float, double, int8, int16, int32, int64}": ["Abs"],
    "{bfloat16, half, float, double, int32, int64, complex64, complex128}": ["Sign"],
}
for _types, _names in _UNARY_OPS.items():
    for _name in _names:
        _unary(_name, _types)

for _name in ("IsNan", "IsInf", "IsFinite"):
    register_op(_name, inputs=["x: T"], outputs=["y: bool"], attrs=[f"T: {REAL_FLOAT}"],
                shape_fn=unchanged)
register_op("LogicalNot", inputs=["x: bool"], outputs=["y: bool"], shape_fn=unchanged)

_BINARY_OPS = {
    # name: (types, commutative)
    "Add": (_ADD_TYPES + ", string}", False),
    "AddV2": (_ADD_TYPES + "}", True),
    "Sub": (BINARY_MORE, False),
    "Mul": (BINARY_MORE, True),
    "Div": (BINARY_MORE, False),
    "RealDiv": (BINARY_MORE, False),
    "FloorDiv": (BINARY_MORE, False),
    "TruncateDiv": (BINARY_MORE, False),
    "FloorMod": (_MOD, False),
    "TruncateMod": (_MOD, False),
    "Mod": (_MOD, False),
    "Pow": (BINARY_FEWER, False),
    "Maximum": (_MINMAX, True),
    "Minimum": (_MINMAX, True),
    "SquaredDifference": (BINARY_FEWER, True),
    "Atan2": (REAL_FLOAT, False),
    "DivNoNan": (FLOAT_COMPLEX, False),
    "MulNoNan": (FLOAT_COMPLEX, False),
    "Xdivy": ("{half, float, double, complex64, complex128}", False),
    "Xlogy": ("{half, float, double, complex64, complex128}", False),
}
for _name, (_types, _comm) in _BINARY_OPS.items():
    _binary(_name, _types, _comm)

for _name in ("Less", "LessEqual", "Greater", "GreaterEqual"):
    register_op(_name, inputs=["x: T", "y: T"], outputs=["z: bool"], attrs=["T: realnumbertype"],
                shape_fn=broadcast_binary)
for _name in ("Equal", "NotEqual"):
    register_op(_name, inputs=["x: T", "y: T"], outputs=["z: bool"],
                attrs=[f"T: {_EQUAL_TYPES}", "incompatible_shape_error: bool = true"],
                shape_fn=_equality_shape, is_commutative=True)
for _name in ("LogicalAnd", "LogicalOr"):
    register_op(_name, inputs=["x: bool", "y: bool"], outputs=["z: bool"],
                shape_fn=broadcast_binary, is_commutative=True)

register_op("Cast", inputs=["x: SrcT"], outputs=["y: DstT"],
            attrs=["SrcT: type", "DstT: type", "Truncate: bool = false"], shape_fn=unchanged)

# complex numbers
for _name in ("Real", "Imag", "ComplexAbs", "Angle"):
    register_op(_name, inputs=["input: T" if _name != "ComplexAbs" else "x: T"],
                outputs=["output: Tout" if _name != "ComplexAbs" else "y: Tout"],
                attrs=["T: {complex64, complex128} = DT_COMPLEX64",
                       "Tout: {float, double} = DT_FLOAT"], shape_fn=unchanged)
register_op("Conj", inputs=["input: T"], outputs=["output: T"],
            attrs=["T: {complex64, complex128, variant} = DT_COMPLEX64"], shape_fn=unchanged)
register_op("Complex", inputs=["real: T", "imag: T"], outputs=["out: Tout"],
            attrs=["T: {float, double} = DT_FLOAT",
                   "Tout: {complex64, complex128} = DT_COMPLEX64"], shape_fn=broadcast_binary)


# -- static evaluation (lets shape functions see through integer arithmetic on constants) ----
_MAX_EVAL_ELEMENTS = 1000


def _const_inputs(op):
    values = [constant_value(t) for t in op.inputs]
    if any(v is None or np.size(v) > _MAX_EVAL_ELEMENTS for v in values):
        return None
    return [np.asarray(v) for v in values]


def _register_int_evaluator(op_type: str, fn) -> None:
    """Evaluates `op_type` statically when its output is an integer/bool and inputs are known."""

    def evaluate(op):
        out = op.outputs[0].dtype.base_dtype
        values = _const_inputs(op)
        if values is None or not (out.is_integer or out.is_bool):
            return None
        if op_type in ("FloorDiv", "FloorMod") and not np.all(values[1]):
            return None
        return np.asarray(fn(*values)).astype(out.np_dtype)

    register_constant_evaluator(op_type)(evaluate)


for _name, _fn in {"AddV2": np.add, "Add": np.add, "Sub": np.subtract, "Mul": np.multiply,
                   "FloorDiv": np.floor_divide, "FloorMod": np.mod, "Maximum": np.maximum,
                   "Minimum": np.minimum, "Neg": np.negative, "Abs": np.abs}.items():
    _register_int_evaluator(_name, _fn)


@register_constant_evaluator("Cast")
def _cast_value(op):
    values = _const_inputs(op)
    src, dst = op.inputs[0].dtype.base_dtype, op.outputs[0].dtype.base_dtype
    if values is None or dtypes.string in (src, dst):
        return None
    v = values[0].real if src.is_complex and not dst.is_complex else values[0]
    return v.astype(dst.np_dtype)


# -- unary wrappers ---------------------------------------------------------------------------
def _unary_fn(py_name: str, op_type: str):
    def fn(x, name=None):
        return _op(op_type, x, name=name)

    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = f"Elementwise `{op_type}` of `x` (TF's `tf.{py_name}`); the op is named " \
                 f"'{op_type}' unless `name` is given."
    return fn


square = _unary_fn("square", "Square")
sqrt = _unary_fn("sqrt", "Sqrt")
rsqrt = _unary_fn("rsqrt", "Rsqrt")
exp = _unary_fn("exp", "Exp")
expm1 = _unary_fn("expm1", "Expm1")
log = _unary_fn("log", "Log")
log1p = _unary_fn("log1p", "Log1p")
sign = _unary_fn("sign", "Sign")
reciprocal = _unary_fn("reciprocal", "Reciprocal")
inv = _unary_fn("inv", "Inv")
floor = _unary_fn("floor", "Floor")
ceil = _unary_fn("ceil", "Ceil")
rint = _unary_fn("rint", "Rint")
sigmoid = _unary_fn("sigmoid", "Sigmoid")
tanh = _unary_fn("tanh", "Tanh")
sin = _unary_fn("sin", "Sin")
cos = _unary_fn("cos", "Cos")
tan = _unary_fn("tan", "Tan")
asin = _unary_fn("asin", "Asin")
acos = _unary_fn("acos", "Acos")
atan = _unary_fn("atan", "Atan")
sinh = _unary_fn("sinh", "Sinh")
cosh = _unary_fn("cosh", "Cosh")
asinh = _unary_fn("asinh", "Asinh")
acosh = _unary_fn("acosh", "Acosh")
atanh = _unary_fn("atanh", "Atanh")
erf = _unary_fn("erf", "Erf")
erfc = _unary_fn("erfc", "Erfc")
lgamma = _unary_fn("lgamma", "Lgamma")
digamma = _unary_fn("digamma", "Digamma")
is_nan = _unary_fn("is_nan", "IsNan")
is_inf = _unary_fn("is_inf", "IsInf")
is_finite = _unary_fn("is_finite", "IsFinite")
logical_not = _unary_fn("logical_not", "LogicalNot")
negative = _unary_fn("negative", "Neg")


def abs(x, name=None):  # noqa: A001 - TF's name
    """|x|; for complex `x` a ComplexAbs of the real dtype. Op named "Abs" by default."""
    with op_scope(name, "Abs", [x]) as name:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex:
            return _op("ComplexAbs", x, Tout=x.dtype.real_dtype, name=name)
        return _op("Abs", x, name=name)


def round(x, name=None):  # noqa: A001 - TF's name
    """Banker's rounding (half to even); integer tensors are returned unchanged."""
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_integer:
        return x
    return _op("Round", x, name=name)


# -- complex ----------------------------------------------------------------------------------
def conj(x, name=None):
    """Complex conjugate; real and integer tensors are returned unchanged."""
    if isinstance(x, Tensor) and (x.dtype.is_floating or x.dtype.is_integer):
        return x
    with op_scope(name, "Conj", [x]) as name:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex or x.dtype == dtypes.variant:
            return _op("Conj", x, name=name)
        if x.dtype.is_floating or x.dtype.is_integer:
            return x
        raise TypeError(f"Expected numeric or variant tensor, got dtype {x.dtype!r}")


def real(input, name=None):  # noqa: A002 - TF's name
    """The real part of a complex tensor; a real tensor is returned unchanged."""
    with op_scope(name, "Real", [input]) as name:
        input = convert_to_tensor(input, name="input")  # noqa: A001
        if input.dtype.is_complex:
            return _op("Real", input, Tout=input.dtype.real_dtype, name=name)
        return input


def imag(input, name=None):  # noqa: A002 - TF's name
    """The imaginary part of a complex tensor (zeros for a real one)."""
    with op_scope(name, "Imag", [input]) as name:
        input = convert_to_tensor(input, name="input")  # noqa: A001
        if input.dtype.is_complex:
            return _op("Imag", input, Tout=input.dtype.real_dtype, name=name)
        return _op("ZerosLike", input, name=name)


def complex(real, imag, name=None):  # noqa: A001 - TF's name
    """real + imag * 1j; float32 pairs give complex64, float64 pairs complex128.

    Raises:
      TypeError: the parts are not both float32 or both float64.
    """
    real = convert_to_tensor(real, name="real")
    imag = convert_to_tensor(imag, name="imag")
    with op_scope(name, "Complex", [real, imag]) as name:
        kinds = (real.dtype.base_dtype, imag.dtype.base_dtype)
        tout = {(dtypes.float32,) * 2: dtypes.complex64,
                (dtypes.float64,) * 2: dtypes.complex128}.get(kinds)
        if tout is None:
            raise TypeError(f"real and imag have incorrect types: {kinds[0].name} "
                            f"{kinds[1].name}")
        return _op("Complex", real, imag, Tout=tout, name=name)


# -- binary wrappers --------------------------------------------------------------------------
def _binary_fn(py_name: str, op_type: str):
    def fn(x, y, name=None):
        return _op(op_type, x, y, name=name)

    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = f"Elementwise `{op_type}` with broadcasting (TF's `tf.{py_name}`)."
    return fn


subtract = _binary_fn("subtract", "Sub")
multiply = _binary_fn("multiply", "Mul")
realdiv = _binary_fn("realdiv", "RealDiv")
truncatediv = _binary_fn("truncatediv", "TruncateDiv")
truncatemod = _binary_fn("truncatemod", "TruncateMod")
floor_div = _binary_fn("floor_div", "FloorDiv")
floormod = mod = _binary_fn("floormod", "FloorMod")
maximum = _binary_fn("maximum", "Maximum")
minimum = _binary_fn("minimum", "Minimum")
squared_difference = _binary_fn("squared_difference", "SquaredDifference")
atan2 = _binary_fn("atan2", "Atan2")
xdivy = _binary_fn("xdivy", "Xdivy")
xlogy = _binary_fn("xlogy", "Xlogy")
less = _binary_fn("less", "Less")
less_equal = _binary_fn("less_equal", "LessEqual")
greater = _binary_fn("greater", "Greater")
greater_equal = _binary_fn("greater_equal", "GreaterEqual")
logical_and = _binary_fn("logical_and", "LogicalAnd")
logical_or = _binary_fn("logical_or", "LogicalOr")


def equal(x, y, name=None):
    """Elementwise x == y (bool) with broadcasting."""
    return _op("Equal", x, y, name=name)


def not_equal(x, y, name=None):
    """Elementwise x != y (bool) with broadcasting."""
    return _op("NotEqual", x, y, name=name)


def add(x, y, name=None):
    """x + y: an AddV2 op (an Add op for strings) named "Add" unless `name` is given."""
    with op_scope(name, "Add", [x]) as name:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", preferred_dtype=x.dtype.base_dtype)
        if x.dtype.base_dtype == dtypes.string:
            return _op("Add", x, y, name=name)
        return _op("AddV2", x, y, name=name)


def _add_dispatch(x, y, name=None):
    if x.dtype.base_dtype == dtypes.string:
        return _op("Add", x, y, name=name)
    return _op("AddV2", x, y, name=name)


def pow(x, y, name=None):  # noqa: A001 - TF's name
    """x ** y elementwise (a Pow op named "Pow")."""
    with op_scope(name, "Pow", [x]) as name:
        return _op("Pow", x, y, name=name)


def _same_dtype(x: Tensor, y: Tensor) -> dtypes.DType:
    x_dtype, y_dtype = x.dtype.base_dtype, y.dtype.base_dtype
    if x_dtype != y_dtype:
        raise TypeError(f"x and y must have the same dtype, got {x_dtype!r} != {y_dtype!r}")
    return x_dtype


# TF's conversion table for `/` on integers (matches numpy's true division).
_TRUEDIV_TABLE = {
    dtypes.uint8: dtypes.float32, dtypes.int8: dtypes.float32,
    dtypes.uint16: dtypes.float32, dtypes.int16: dtypes.float32,
    dtypes.int32: dtypes.float64, dtypes.int64: dtypes.float64,
    dtypes.bfloat16: None, dtypes.float16: None, dtypes.float32: None, dtypes.float64: None,
    dtypes.complex64: None, dtypes.complex128: None,
}


def truediv(x, y, name=None):
    """Python 3 division: integers are cast to float first (int8/16 → float32, int32/64 →
    float64), then a RealDiv op named "truediv".

    Raises:
      TypeError: x and y have different dtypes, or a dtype `/` does not support.
    """
    with op_scope(name, "truediv", [x, y]) as name:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y")
        x_dtype = _same_dtype(x, y)
        if x_dtype not in _TRUEDIV_TABLE:
            raise TypeError(f"Invalid dtype {x_dtype!r} in __truediv__")
        dtype = _TRUEDIV_TABLE[x_dtype]
        if dtype is not None:
            x, y = cast(x, dtype), cast(y, dtype)
        return _op("RealDiv", x, y, name=name)


def div(x, y, name=None):
    """TF1 `tf.div`: Python 2 division — RealDiv for floats, FloorDiv for integers."""
    with op_scope(name, "div", [x, y]) as name:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        x_dtype = _same_dtype(x, y)
        if x_dtype.is_floating or x_dtype.is_complex:
            return _op("RealDiv", x, y, name=name)
        return _op("FloorDiv", x, y, name=name)


def divide(x, y, name=None):
    """Python-style division `x / y` (truediv)."""
    if name is not None:
        return truediv(x, y, name=name)
    return x / y


def floordiv(x, y, name=None):
    """x // y rounding toward -inf (a FloorDiv op named "floordiv")."""
    with op_scope(name, "floordiv", [x, y]) as name:
        return _op("FloorDiv", x, y, name=name)


def div_no_nan(x, y, name=None):
    """x / y, or 0 where y is 0 (a DivNoNan op named "div_no_nan")."""
    with op_scope(name, "div_no_nan", [x, y]) as name:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        _same_dtype(x, y)
        return _op("DivNoNan", x, y, name=name)


def multiply_no_nan(x, y, name=None):
    """x * y, or 0 where y is 0 even if x is nan or inf (MulNoNan named "multiply_no_nan")."""
    with op_scope(name, "multiply_no_nan", [x, y]) as name:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        _same_dtype(x, y)
        return _op("MulNoNan", x, y, name=name)


def logical_xor(x, y, name="LogicalXor"):
    """x ^ y = (x | y) & ~(x & y); the last op (LogicalAnd) is named `name`."""
    return _op("LogicalAnd", _op("LogicalOr", x, y),
               _op("LogicalNot", _op("LogicalAnd", x, y)), name=name)


# -- casts ------------------------------------------------------------------------------------
def cast(x, dtype, name=None):
    """Casts `x` to `dtype` (a Cast op named "Cast"); returns `x` when already of `dtype`.

    Float → int truncates toward zero, bool → number gives 0/1, number → bool is `x != 0`,
    complex → real keeps the real part.
    """
    base_type = dtypes.as_dtype(dtype).base_dtype
    if isinstance(x, Tensor) and x.dtype.base_dtype == base_type:
        return x
    with op_scope(name, "Cast", [x]) as name:
        x = convert_to_tensor(x, name="x")
        if x.dtype.base_dtype != base_type:
            x = _op("Cast", x, DstT=base_type, name=name)
        return x


def saturate_cast(value, dtype, name=None):
    """Casts to `dtype`, clamping first to the range `dtype` can represent."""
    with op_scope(name, "saturate_cast", [value]) as name:
        value = convert_to_tensor(value, name="value")
        dtype = dtypes.as_dtype(dtype).base_dtype
        if value.dtype.min < dtype.min:
            value = _op("Maximum", value,
                        convert_to_tensor(dtype.min, dtype=value.dtype, name="min"))
        if value.dtype.max > dtype.max:
            value = _op("Minimum", value,
                        convert_to_tensor(dtype.max, dtype=value.dtype, name="max"))
        return cast(value, dtype, name=name)


def _cast_fn(py_name: str, dtype: dtypes.DType, default_name: str):
    def fn(x, name=default_name):
        return cast(x, dtype, name=name)

    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = f"Casts `x` to {dtype.name} (a Cast op named '{default_name}')."
    return fn


to_float = _cast_fn("to_float", dtypes.float32, "ToFloat")
to_double = _cast_fn("to_double", dtypes.float64, "ToDouble")
to_int32 = _cast_fn("to_int32", dtypes.int32, "ToInt32")
to_int64 = _cast_fn("to_int64", dtypes.int64, "ToInt64")
to_bfloat16 = _cast_fn("to_bfloat16", dtypes.bfloat16, "ToBFloat16")
to_complex64 = _cast_fn("to_complex64", dtypes.complex64, "ToComplex64")
to_complex128 = _cast_fn("to_complex128", dtypes.complex128, "ToComplex128")


# -- operators --------------------------------------------------------------------------------
def _binary_operator(op_name: str, fn) -> None:
    """Installs `__<op>__` and `__r<op>__` on Tensor, as TF's _OverrideBinaryOperatorHelper:
    the op is named `op_name` and a literal operand becomes the Const `<op_name>/y` (or `/x`)."""

    def forward(x, y):
        with op_scope(None, op_name, [x, y]) as name:
            if not isinstance(y, Tensor):
                try:
                    y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
                except TypeError:
                    if hasattr(type(y), f"__r{op_name}__"):
                        return NotImplemented
                    raise
            return fn(x, y, name=name)

    def reverse(y, x):
        with op_scope(None, op_name, [x, y]) as name:
            x = convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x")
            return fn(x, y, name=name)

    Tensor._override_operator(f"__{op_name}__", forward)
    Tensor._override_operator(f"__r{op_name}__", reverse)


def _mod(x, y, name=None):
    return _op("FloorMod", x, y, name=name)


_binary_operator("add", _add_dispatch)
_binary_operator("sub", subtract)
_binary_operator("mul", multiply)
_binary_operator("truediv", truediv)
_binary_operator("floordiv", floordiv)
_binary_operator("mod", _mod)
_binary_operator("pow", pow)
_binary_operator("and", logical_and)
_binary_operator("or", logical_or)
_binary_operator("xor", logical_xor)
Tensor._override_operator("__neg__", lambda x: _op("Neg", x))
Tensor._override_operator("__abs__", abs)
Tensor._override_operator("__invert__", lambda x: _op("LogicalNot", x))
Tensor._override_operator("__lt__", less)
Tensor._override_operator("__le__", less_equal)
Tensor._override_operator("__gt__", greater)
Tensor._override_operator("__ge__", greater_equal)

__all__ = [
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "cast", "ceil",
    "complex", "conj", "cos", "cosh", "digamma", "div", "div_no_nan", "divide", "equal", "erf",
    "erfc", "exp", "expm1", "floor", "floor_div", "floordiv", "floormod", "greater",
    "greater_equal", "imag", "inv", "is_finite", "is_inf", "is_nan", "less", "less_equal",
    "lgamma", "log", "log1p", "logical_and", "logical_not", "logical_or", "logical_xor",
    "maximum", "minimum", "mod", "multiply", "multiply_no_nan", "negative", "not_equal", "pow",
    "real", "realdiv", "reciprocal", "rint", "round", "rsqrt", "saturate_cast", "sigmoid",
    "sign", "sin", "sinh", "sqrt", "square", "squared_difference", "subtract", "tan", "tanh",
    "to_bfloat16", "to_complex64", "to_complex128", "to_double", "to_float", "to_int32",
    "to_int64", "truediv", "truncatediv", "truncatemod", "xdivy", "xlogy",
]
