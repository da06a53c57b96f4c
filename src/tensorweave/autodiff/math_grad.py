"""Gradient functions for the math family (TF's math_grad.py): elementwise, matmul, casts,
scans, reductions and segment ops. The helper ops the gradients use (SigmoidGrad, ...,
BroadcastGradientArgs) are declared in ops/grad_ops.py.

Broadcasting binary ops sum their input gradients over the broadcast axes; those axes are
computed statically whenever the static shapes decide them (no BroadcastGradientArgs then,
and nothing at all when both shapes are equal), as TF's SmartBroadcastGradientArgs.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.autodiff.gradients import (
    conj,
    reduce_for_broadcast,
    reshape,
    shape_tensor,
    shapes_equal_and_known,
    static_dims,
    zeros_like,
)
from tensorweave.autodiff.registry import NotDifferentiable, RegisterGradient
from tensorweave.ops.apply import apply_op
from tensorweave.ops.constant_op import constant
from tensorweave.ops.shape_inference import constant_value

_op = apply_op


NotDifferentiable("BroadcastGradientArgs")


# == unary ====================================================================================
def _one(like):
    return constant(1, dtype=like.dtype.base_dtype)


def _rsqrt_one_minus_square(x, g):
    return _op("Reciprocal", _op("Sqrt", _one(g) - _op("Square", x)))


# op -> d(x, y, grad): the derivative dy/dx, from conj(input) x and conj(output) y; the
# gradient is `grad * d` (TF's math_grad formulas, one line each).
_DERIVATIVES = {
    "Abs": lambda x, y, g: _op("Sign", x),
    "Exp": lambda x, y, g: y,
    "Expm1": lambda x, y, g: _op("Exp", x),
    "Log": lambda x, y, g: _op("Reciprocal", x),
    "Log1p": lambda x, y, g: _op("Reciprocal", 1 + x),
    "Sinh": lambda x, y, g: _op("Cosh", x),
    "Cosh": lambda x, y, g: _op("Sinh", x),
    "Atanh": lambda x, y, g: _op("Reciprocal", _one(g) - _op("Square", x)),
    "Erf": lambda x, y, g: constant(2 / np.sqrt(np.pi), dtype=g.dtype.base_dtype)
    * _op("Exp", -_op("Square", x)),
    "Erfc": lambda x, y, g: constant(-2 / np.sqrt(np.pi), dtype=g.dtype.base_dtype)
    * _op("Exp", -_op("Square", x)),
    "Lgamma": lambda x, y, g: _op("Digamma", x),
    # Digamma needs the Polygamma op (trigamma = polygamma(1, x)).
    "Digamma": lambda x, y, g: _op("Polygamma", constant(1, dtype=x.dtype.base_dtype), x),
    "Sin": lambda x, y, g: _op("Cos", x),
    "Cos": lambda x, y, g: -_op("Sin", x),
    "Tan": lambda x, y, g: _op("Square", _op("Reciprocal", _op("Cos", x))),
    "Asin": lambda x, y, g: _rsqrt_one_minus_square(x, g),
    "Acos": lambda x, y, g: -_rsqrt_one_minus_square(x, g),
    "Atan": lambda x, y, g: _op("Reciprocal", _one(g) + _op("Square", x)),
    "Square": lambda x, y, g: x * constant(2.0, dtype=x.dtype.base_dtype),
}


def _derivative_grad(derivative):
    def grad_fn(op, grad):
        return grad * derivative(conj(op.inputs[0]), conj(op.outputs[0]), grad)

    return grad_fn


for _name, _d in _DERIVATIVES.items():
    RegisterGradient(_name)(_derivative_grad(_d))

# op -> the fused *Grad op computing grad * dy/dx from the op's output.
_FUSED = {"Inv": "ReciprocalGrad", "Reciprocal": "ReciprocalGrad", "Sqrt": "SqrtGrad",
          "Rsqrt": "RsqrtGrad", "Tanh": "TanhGrad", "Sigmoid": "SigmoidGrad"}


def _fused_grad(grad_op: str):
    def grad_fn(op, grad):
        return _op(grad_op, conj(op.outputs[0]), grad)

    return grad_fn


for _name, _g in _FUSED.items():
    RegisterGradient(_name)(_fused_grad(_g))


@RegisterGradient("Neg")
def _neg_grad(op, grad):
    return -grad


@RegisterGradient("Asinh")
def _asinh_grad(op, grad):
    return grad / _op("Cosh", conj(op.outputs[0]))


@RegisterGradient("Acosh")
def _acosh_grad(op, grad):
    return grad / _op("Sinh", conj(op.outputs[0]))


@RegisterGradient("Sign")
def _sign_grad(op, grad):
    return zeros_like(op.inputs[0])


@RegisterGradient("Floor")
@RegisterGradient("Ceil")
@RegisterGradient("Round")
@RegisterGradient("Rint")
def _step_grad(op, grad):
    return [None]


# -- second order: gradients of the fused *Grad ops (inputs: y, dy) --------------------------
@RegisterGradient("InvGrad")
@RegisterGradient("ReciprocalGrad")
def _reciprocal_grad_grad(op, grad):
    ca, b = conj(op.inputs[0]), op.inputs[1]
    return conj(grad) * -2.0 * b * ca, _op("ReciprocalGrad", ca, grad)


@RegisterGradient("SqrtGrad")
def _sqrt_grad_grad(op, grad):
    a, y = op.inputs[0], op.outputs[0]
    ga = grad / a
    return -conj(ga) * y, 0.5 * ga


@RegisterGradient("RsqrtGrad")
def _rsqrt_grad_grad(op, grad):
    ca, b = conj(op.inputs[0]), op.inputs[1]
    return -1.5 * conj(grad) * b * _op("Square", ca), _op("RsqrtGrad", ca, grad)


@RegisterGradient("TanhGrad")
def _tanh_grad_grad(op, grad):
    a, b = conj(op.inputs[0]), conj(op.inputs[1])
    return grad * -2.0 * b * a, _op("TanhGrad", a, grad)


@RegisterGradient("SigmoidGrad")
def _sigmoid_grad_grad(op, grad):
    a, b = conj(op.inputs[0]), conj(op.inputs[1])
    gb = grad * b
    return gb - 2.0 * gb * a, _op("SigmoidGrad", a, grad)


# == binary ===================================================================================
@RegisterGradient("Atan2")
def _atan2_grad(op, grad):
    y, x = op.inputs
    grad_inv = grad / (_op("Square", y) + _op("Square", x))
    return reduce_for_broadcast(y, x, x * grad_inv, -y * grad_inv)


@RegisterGradient("AddN")
@RegisterGradient("AccumulateNV2")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


@RegisterGradient("Add")
@RegisterGradient("AddV2")
def _add_grad(op, grad):
    x, y = op.inputs
    if shapes_equal_and_known(x, y, grad):
        return grad, grad
    return reduce_for_broadcast(x, y, grad, grad)


@RegisterGradient("Sub")
def _sub_grad(op, grad):
    x, y = op.inputs
    if shapes_equal_and_known(x, y, grad):
        return grad, -grad
    return reduce_for_broadcast(x, y, grad, -grad)


@RegisterGradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    gx, gy = _op("Mul", grad, conj(y)), _op("Mul", conj(x), grad)
    if shapes_equal_and_known(x, y, grad):
        return gx, gy
    return reduce_for_broadcast(x, y, gx, gy)


@RegisterGradient("MulNoNan")
def _mul_no_nan_grad(op, grad):
    x, y = op.inputs
    return reduce_for_broadcast(x, y, _op("MulNoNan", grad, y), _op("MulNoNan", x, grad))


@RegisterGradient("Div")
@RegisterGradient("RealDiv")
def _div_grad(op, grad):
    x, y = op.inputs
    cx, cy = conj(x), conj(y)
    div = "RealDiv" if op.type == "RealDiv" or not x.dtype.is_integer else "Div"
    gx = _op(div, grad, cy)
    gy = grad * _op(div, _op(div, -cx, cy), cy)
    return reduce_for_broadcast(x, y, gx, gy)


@RegisterGradient("DivNoNan")
def _div_no_nan_grad(op, grad):
    x, y = conj(op.inputs[0]), conj(op.inputs[1])
    gx = _op("DivNoNan", grad, y)
    gy = grad * _op("DivNoNan", _op("DivNoNan", -x, y), y)
    return reduce_for_broadcast(op.inputs[0], op.inputs[1], gx, gy)


@RegisterGradient("FloorDiv")
@RegisterGradient("TruncateDiv")
def _int_div_grad(op, grad):
    return None, None


@RegisterGradient("FloorMod")
def _floor_mod_grad(op, grad):
    x, y = conj(op.inputs[0]), conj(op.inputs[1])
    gy = grad * -_op("FloorDiv", x, y)
    return reduce_for_broadcast(op.inputs[0], op.inputs[1], grad, gy)


@RegisterGradient("Pow")
def _pow_grad(op, grad):
    x, y = op.inputs
    cx, cy = conj(x), conj(y)
    gx = grad * cy * _op("Pow", cx, cy - 1)
    mask = _op("NotEqual", cx, 0) if x.dtype.is_complex else cx > 0
    safe_x = _op("SelectV2", mask, cx, _op("OnesLike", x))
    log_x = _op("SelectV2", mask, _op("Log", safe_x), zeros_like(x))
    gy = grad * conj(op.outputs[0]) * log_x
    return reduce_for_broadcast(x, y, gx, gy)


def _max_min_grad(op, grad, selector: str):
    x, y = op.inputs
    zeros = zeros_like(grad)
    xmask = _op(selector, x, y)
    gx = _op("SelectV2", xmask, grad, zeros)
    gy = _op("SelectV2", xmask, zeros, grad)
    return reduce_for_broadcast(x, y, gx, gy)


@RegisterGradient("Maximum")
def _maximum_grad(op, grad):
    return _max_min_grad(op, grad, "GreaterEqual")


@RegisterGradient("Minimum")
def _minimum_grad(op, grad):
    return _max_min_grad(op, grad, "LessEqual")


@RegisterGradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    x_grad = (2.0 * grad) * (x - y)
    if shapes_equal_and_known(x, y, grad):
        return x_grad, -x_grad
    return reduce_for_broadcast(x, y, x_grad, -x_grad)


def _xy_partials(op, grad, partial_x, partial_y):
    x, y = op.inputs
    return reduce_for_broadcast(x, y, partial_x * grad, partial_y * grad)


def _not_zero(x):
    return _op("Cast", _op("NotEqual", x, constant(0, dtype=x.dtype.base_dtype)),
               DstT=x.dtype.base_dtype)


@RegisterGradient("Xlogy")
def _xlogy_grad(op, grad):
    x, y = op.inputs
    return _xy_partials(op, grad, _op("Xlogy", _not_zero(x), y), _op("Xdivy", x, y))


@RegisterGradient("Xdivy")
def _xdivy_grad(op, grad):
    x, y = op.inputs
    return _xy_partials(op, grad, _op("Xdivy", _not_zero(x), y),
                        _op("Xdivy", -x, _op("Square", y)))


for _name in ("Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "ApproximateEqual",
              "NotEqual", "LogicalAnd", "LogicalOr", "LogicalNot", "Range", "LinSpace",
              "IsNan", "IsInf", "IsFinite", "Bincount"):
    NotDifferentiable(_name)


@RegisterGradient("Select")
def _select_grad(op, grad):
    c, x = op.inputs[0], op.inputs[1]
    zeros = zeros_like(x)
    return None, _op("Select", c, grad, zeros), _op("Select", c, zeros, grad)


@RegisterGradient("SelectV2")
def _select_v2_grad(op, grad):
    c, x, y = op.inputs
    z = op.outputs[0]
    zeros = constant(0, dtype=grad.dtype.base_dtype)
    gx, _ = reduce_for_broadcast(x, z, _op("SelectV2", c, grad, zeros), None)
    gy, _ = reduce_for_broadcast(y, z, _op("SelectV2", c, zeros, grad), None)
    return None, gx, gy


@RegisterGradient("ClipByValue")
def _clip_by_value_grad(op, grad):
    x, lo, hi = op.inputs
    zeros = zeros_like(grad)
    below, above = _op("Less", x, lo), _op("Greater", x, hi)
    gx = _op("SelectV2", _op("LogicalOr", below, above), zeros, grad)
    _, glo = reduce_for_broadcast(x, lo, None, _op("SelectV2", below, grad, zeros))
    _, ghi = reduce_for_broadcast(x, hi, None, _op("SelectV2", above, grad, zeros))
    return gx, glo, ghi


# == matmul ===================================================================================
@RegisterGradient("MatMul")
def _matmul_grad(op, grad):
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    a, b = conj(op.inputs[0]), conj(op.inputs[1])

    def mm(p, q, tp, tq, **flag):
        return _op("MatMul", p, q, transpose_a=tp, transpose_b=tq, **flag)

    if not ta and not tb:
        return mm(grad, b, False, True, grad_a=True), mm(a, grad, True, False, grad_b=True)
    if not ta and tb:
        return mm(grad, b, False, False, grad_a=True), mm(grad, a, True, False, grad_b=True)
    if ta and not tb:
        return mm(b, grad, False, True, grad_a=True), mm(a, grad, False, False, grad_b=True)
    return mm(b, grad, True, True, grad_a=True), mm(grad, a, True, True, grad_b=True)


@RegisterGradient("BatchMatMul")
@RegisterGradient("BatchMatMulV2")
@RegisterGradient("BatchMatMulV3")
def _batch_matmul_grad(op, grad):
    x, y = op.inputs
    adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
    kind = "BatchMatMul" if op.type == "BatchMatMul" else "BatchMatMulV2"

    def mm(p, q, ap, aq):
        return _op(kind, p, q, adj_x=ap, adj_y=aq)

    if not adj_x:
        gx = mm(grad, y, False, not adj_y)
        gy = mm(x, grad, True, False) if not adj_y else mm(grad, x, True, False)
    else:
        gx = mm(y, grad, adj_y, True)
        gy = mm(x, grad, False, False) if not adj_y else mm(grad, x, True, True)
    if op.type == "BatchMatMul":
        return gx, gy
    return _reduce_batch_dims(x, y, gx, gy)


def _reduce_batch_dims(x, y, gx, gy):
    """BatchMatMulV2 broadcasts batch dims: sum each gradient back over them."""
    xb, yb = x.shape.ndims, y.shape.ndims
    if xb is not None and yb is not None and x.shape.as_tuple()[:-2] == y.shape.as_tuple()[:-2] \
            and None not in x.shape.as_tuple()[:-2]:
        return gx, gy
    if xb is not None and yb is not None and xb <= 2 and yb <= 2:
        return gx, gy
    sx, sy = _op("Shape", x), _op("Shape", y)
    bx = _op("StridedSlice", sx, [0], [-2], [1])
    by = _op("StridedSlice", sy, [0], [-2], [1])
    rx, ry = _op("BroadcastGradientArgs", bx, by)
    gx = _op("Reshape", _op("Sum", gx, rx), sx)
    gy = _op("Reshape", _op("Sum", gy, ry), sy)
    return gx, gy


# == complex ==================================================================================
@RegisterGradient("Complex")
def _complex_grad(op, grad):
    x, y = op.inputs
    gx = _op("Real", grad, Tout=x.dtype.base_dtype)
    gy = _op("Imag", grad, Tout=y.dtype.base_dtype)
    return reduce_for_broadcast(x, y, gx, gy)


def _complex(re, im, like):
    return _op("Complex", re, im, Tout=like.dtype.base_dtype)


@RegisterGradient("Real")
def _real_grad(op, grad):
    return _complex(grad, constant(0, dtype=grad.dtype.base_dtype), op.inputs[0])


@RegisterGradient("Imag")
def _imag_grad(op, grad):
    return _complex(constant(0, dtype=grad.dtype.base_dtype), grad, op.inputs[0])


@RegisterGradient("Angle")
def _angle_grad(op, grad):
    x = op.inputs[0]
    rdt = grad.dtype.base_dtype
    re, im = _op("Real", x, Tout=rdt), _op("Imag", x, Tout=rdt)
    z = _op("Reciprocal", _complex(im, re, x))
    return -_complex(grad, constant(0, dtype=rdt), x) * z


@RegisterGradient("Conj")
def _conj_grad(op, grad):
    return _op("Conj", grad)


@RegisterGradient("ComplexAbs")
def _complex_abs_grad(op, grad):
    x = op.inputs[0]
    return _op("DivNoNan", _complex(grad, zeros_like(grad), x) * x,
               _complex(op.outputs[0], zeros_like(op.outputs[0]), x))


_FLOATING = frozenset([dtypes.float16, dtypes.float32, dtypes.float64, dtypes.bfloat16,
                       dtypes.complex64, dtypes.complex128])


@RegisterGradient("Cast")
def _cast_grad(op, grad):
    src, dst = op.inputs[0].dtype.base_dtype, grad.dtype.base_dtype
    if src in _FLOATING and dst in _FLOATING:
        return _op("Cast", grad, DstT=src)
    return None


# == scans ====================================================================================
@RegisterGradient("Cumsum")
def _cumsum_grad(op, grad):
    return [_op("Cumsum", grad, op.inputs[1], exclusive=op.get_attr("exclusive"),
                reverse=not op.get_attr("reverse")), None]


@RegisterGradient("Cumprod")
def _cumprod_grad(op, grad):
    x, axis = op.inputs
    exclusive, rev = op.get_attr("exclusive"), op.get_attr("reverse")
    prod = _op("Cumprod", x, axis, exclusive=exclusive, reverse=rev)
    out = _op("Cumsum", prod * grad, axis, exclusive=exclusive, reverse=not rev)
    return [_op("DivNoNan", out, x), None]


# == reductions ===============================================================================
@RegisterGradient("ArgMax")
@RegisterGradient("ArgMin")
def _arg_grad(op, grad):
    return [None, None]


def _static_axes(op):
    """The sorted non-negative reduction axes of reduction `op`, or None when not static."""
    rank = op.inputs[0].shape.ndims
    axes = constant_value(op.inputs[1])
    if rank is None or axes is None:
        return None
    return sorted({int(a) % rank for a in np.reshape(axes, [-1])}) if rank else []


def reduced_shape(input_shape, axes):
    """TF's `math_ops.reduced_shape` on tensors: `input_shape` with 1 at each of `axes`
    (built from Range/Equal/Any/SelectV2, as DynamicStitch may not be registered)."""
    rank = _op("Size", input_shape)
    axes = _op("Reshape", _op("Cast", axes, DstT=dtypes.int32), [-1])
    axes = _op("FloorMod", _op("AddV2", axes, rank), rank)
    hits = _op("Equal", _op("ExpandDims", _op("Range", 0, rank, 1), 1),
               _op("ExpandDims", axes, 0))
    return _op("SelectV2", _op("Any", hits, 1), constant(1, dtype=input_shape.dtype),
               input_shape)


def to_kept_dims(t, op):
    """`t` (shaped like reduction `op`'s output) in keep_dims form: the reduced axes as 1s."""
    if op.get_attr("keep_dims"):
        return t
    x = op.inputs[0]
    axes = _static_axes(op)
    if axes is None:
        return _op("Reshape", t, reduced_shape(shape_tensor(x), op.inputs[1]))
    dims = x.shape.as_tuple()
    kept = [1 if i in axes else d for i, d in enumerate(dims)]
    if None not in kept:
        return reshape(t, kept)
    for a in axes:
        t = _op("ExpandDims", t, a)
    return t


def broadcast_to_input(t, x):
    """`t` (keep_dims form) broadcast to `x`'s shape: a static Tile, else a BroadcastTo."""
    x_dims, t_dims = static_dims(x), static_dims(t)
    if x_dims is not None and t_dims is not None:
        multiples = [xd // max(td, 1) for xd, td in zip(x_dims, t_dims)]
        if all(m == 1 for m in multiples):
            return t
        return _op("Tile", t, multiples)
    return _op("BroadcastTo", t, shape_tensor(x))


@RegisterGradient("Sum")
def _sum_grad(op, grad):
    return [broadcast_to_input(to_kept_dims(grad, op), op.inputs[0]), None]


def _mean_factor(op, like):
    x, y = op.inputs[0], op.outputs[0]
    xd, yd = static_dims(x), static_dims(y)
    if xd is not None and yd is not None:
        factor = int(np.prod(xd, dtype=np.int64)) // max(int(np.prod(yd, dtype=np.int64)), 1)
        return constant(factor, dtype=like.dtype.base_dtype)
    ratio = _op("FloorDiv", _op("Size", x), _op("Maximum", _op("Size", y), 1))
    return _op("Cast", ratio, DstT=like.dtype.base_dtype)


@RegisterGradient("Mean")
def _mean_grad(op, grad):
    sum_grad = _sum_grad(op, grad)[0]
    return _op("RealDiv", sum_grad, _mean_factor(op, sum_grad), name="truediv"), None


@RegisterGradient("Max")
@RegisterGradient("Min")
def _min_max_grad(op, grad):
    x = op.inputs[0]
    y, grad = to_kept_dims(op.outputs[0], op), to_kept_dims(grad, op)
    indicators = _op("Cast", _op("Equal", y, x), DstT=grad.dtype.base_dtype)
    num_selected = _op("Sum", indicators, op.inputs[1], keep_dims=True)
    return [_op("RealDiv", indicators, num_selected) * grad, None]


@RegisterGradient("EuclideanNorm")
def _euclidean_norm_grad(op, grad):
    out, grad = to_kept_dims(op.outputs[0], op), to_kept_dims(grad, op)
    return _op("RealDiv", op.inputs[0], out / grad), None


@RegisterGradient("Prod")
def _prod_grad(op, grad):
    """Each entry's gradient is the product of the others: exclusive cumprods from both sides
    over the reduced axes (moved to the front and flattened), which handles zeros."""
    x = op.inputs[0]
    grad = broadcast_to_input(to_kept_dims(grad, op), x)
    axes, dims = _static_axes(op), static_dims(x)
    if axes is not None and dims is not None:
        other = [i for i in range(len(dims)) if i not in axes]
        perm = axes + other
        sizes = [int(np.prod([dims[i] for i in part], dtype=np.int64)) for part in (axes, other)]
        permuted_shape = [dims[i] for i in perm]
        inverse = [int(i) for i in np.argsort(perm)]
    else:
        perm, sizes, permuted_shape, inverse = _dynamic_prod_layout(op)
    permuted = _transpose(x, perm)
    reshaped = _op("Reshape", permuted, sizes)
    left = _op("Cumprod", reshaped, 0, exclusive=True)
    right = _op("Cumprod", reshaped, 0, exclusive=True, reverse=True)
    y = _op("Reshape", conj(left) * conj(right), permuted_shape)
    return _op("Reshape", grad * _transpose(y, inverse), shape_tensor(x)), None


def _transpose(t, perm):
    """Transpose `t` by `perm` (a tensor, or a list: skipped when the identity)."""
    if isinstance(perm, list) and perm == sorted(perm):
        return t
    return _op("Transpose", t, perm)


def _dynamic_prod_layout(op):
    x = op.inputs[0]
    input_shape = _op("Shape", x)
    rank = _op("Rank", x)
    reduced = _op("Cast", _op("Reshape", op.inputs[1], [-1]), DstT=dtypes.int32)
    reduced = _op("FloorMod", _op("AddV2", reduced, rank), rank)
    other, _ = _op("ListDiff", _op("Range", 0, rank, 1), reduced, out_idx=dtypes.int32)
    perm = _op("ConcatV2", [reduced, other], 0)
    nums = [_op("Prod", _op("GatherV2", input_shape, part, 0), [0]) for part in (reduced, other)]
    permuted_shape = _op("GatherV2", input_shape, perm, 0)
    return perm, _op("Pack", nums), permuted_shape, _op("InvertPermutation", perm)
