"""Assertions on tensors (TF's check_ops.py and numerics.py): `assert_equal` & co.,
`assert_rank*`, `assert_type`, `assert_integer`, `assert_scalar`, `assert_near`,
`verify_tensor_all_finite`, `add_check_numerics_ops`, `is_numeric_tensor`,
`is_non_decreasing`, `is_strictly_increasing`.

A comparison known at graph build (both sides constant) fails right there with
InvalidArgumentError carrying the data; otherwise the function returns an `Assert` op whose
failure at run time is an InvalidArgumentError naming the node and the data ("assertion
failed: [Condition x == y did not hold element-wise:] [x (Const:0) = ] [1 2] ..."). Rank,
type and integer checks that the static shape or dtype decide raise ValueError/TypeError at
build and return a NoOp, as TF does.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.shape_inference import constant_value


def _assert_op(condition, data, summarize):
    from tensorweave.ops.control_flow_ops import Assert

    return Assert(condition, data, summarize=summarize)


def _no_op(name):
    return apply_op("NoOp", name=name)


def _static_text(x) -> str:
    if not hasattr(x, "op"):
        return str(x)
    value = constant_value(x)
    return str(x) if value is None else str(value)


def _check_static(condition, data) -> None:
    if not condition:
        raise errors.InvalidArgumentError(None, None, "\n".join(_static_text(d) for d in data))


def _tf_repr(t) -> str:
    """TF's str() of a graph tensor: Tensor("name:0", shape=(), dtype=float32)."""
    return f'Tensor("{t.name}", shape={t.shape}, dtype={t.dtype.name})'


def _all_of(x):
    return apply_op("All", x, apply_op("Range", 0, apply_op("Rank", x), 1))


# -- element-wise comparisons ------------------------------------------------------------------
_BINARY = {
    "equal": ("Equal", np.equal, "==", "did not hold element-wise:"),
    "none_equal": ("NotEqual", np.not_equal, "!=", "did not hold element-wise:"),
    "less": ("Less", np.less, "<", "did not hold element-wise:"),
    "less_equal": ("LessEqual", np.less_equal, "<=", "did not hold element-wise:"),
    "greater": ("Greater", np.greater, ">", "did not hold element-wise:"),
    "greater_equal": ("GreaterEqual", np.greater_equal, ">=", "did not hold element-wise:"),
}


def _binary_assert(kind, x, y, data, summarize, message, name):
    op_type, test, sym, tail = _BINARY[kind]
    with name_scope(name, f"assert_{kind}", [x, y, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        if data is None:
            data = [message, f"Condition x {sym} y {tail}", f"x ({x.name}) = ", x,
                    f"y ({y.name}) = ", y]
            data = [d for d in data if d is not None]
        xv, yv = constant_value(x), constant_value(y)
        if xv is not None and yv is not None:
            _check_static(bool(np.all(test(xv, yv))), data)
        return _assert_op(_all_of(apply_op(op_type, x, y)), data, summarize)


def _binary(kind):
    def fn(x, y, data=None, summarize=None, message=None, name=None):
        return _binary_assert(kind, x, y, data, summarize, message, name)

    fn.__name__ = f"assert_{kind}"
    fn.__doc__ = (f"An op asserting `x {_BINARY[kind][2]} y` element-wise (broadcasting); "
                  f"fails at build when both are constant and it does not hold.")
    return fn


assert_equal = _binary("equal")
assert_none_equal = _binary("none_equal")
assert_less = _binary("less")
assert_less_equal = _binary("less_equal")
assert_greater = _binary("greater")
assert_greater_equal = _binary("greater_equal")


def _sign(kind, sym, zero_first):
    def fn(x, data=None, summarize=None, message=None, name=None):
        with name_scope(name, f"assert_{kind}", [x, data]):
            x = convert_to_tensor(x, name="x")
            if data is None:
                data = [message or "", f"Condition x {sym} 0 did not hold element-wise:",
                        f"x ({x.name}) = ", x]
            zero = convert_to_tensor(0, dtype=x.dtype.base_dtype)
            check = assert_less if sym in ("<", ">") else assert_less_equal
            a, b = (zero, x) if zero_first else (x, zero)
            return check(a, b, data=data, summarize=summarize)

    fn.__name__ = f"assert_{kind}"
    fn.__doc__ = f"An op asserting `x {sym} 0` element-wise."
    return fn


assert_positive = _sign("positive", ">", True)
assert_non_negative = _sign("non_negative", ">=", True)
assert_negative = _sign("negative", "<", False)
assert_non_positive = _sign("non_positive", "<=", False)


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None,
                name=None):
    """An op asserting |x - y| <= atol + rtol * |y| element-wise (default tolerances: 10
    machine epsilons of the dtype)."""
    with name_scope(name, "assert_near", [x, y, rtol, atol, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        eps = np.finfo(x.dtype.base_dtype.np_dtype).eps
        rtol = 10 * eps if rtol is None else rtol
        atol = 10 * eps if atol is None else atol
        rtol_t = convert_to_tensor(rtol, name="rtol", dtype=x.dtype.base_dtype)
        atol_t = convert_to_tensor(atol, name="atol", dtype=x.dtype.base_dtype)
        if data is None:
            # NOTE: TF formats the converted tolerance tensors here, not their values
            data = [message or "", f"x and y not equal to tolerance rtol = {_tf_repr(rtol_t)}, "
                                   f"atol = {_tf_repr(atol_t)}", f"x ({x.name}) = ", x,
                    f"y ({y.name}) = ", y]
        tol = apply_op("AddV2", atol_t, apply_op("Mul", rtol_t, apply_op("Abs", y)))
        diff = apply_op("Abs", apply_op("Sub", x, y))
        return _assert_op(_all_of(apply_op("LessEqual", diff, tol)), data, summarize)


# -- ranks, types --------------------------------------------------------------------------
def _rank_check(x, rank, message, name, default, at_least):
    with name_scope(name, default, [x, rank]) as scope:
        x = convert_to_tensor(x, name="x")
        static_rank = rank if isinstance(rank, int) else constant_value(
            convert_to_tensor(rank))
        ndims = x.shape.ndims
        what = "rank at least" if at_least else "rank"
        if static_rank is not None and ndims is not None:
            ok = ndims >= int(static_rank) if at_least else ndims == int(static_rank)
            if not ok:
                raise ValueError(f"{message or ''}.  Tensor {x.name} must have {what} "
                                 f"{int(static_rank)}.  Received rank {ndims}, shape "
                                 f"{x.shape}")
            return _no_op("static_checks_determined_all_ok")
        rank_t = convert_to_tensor(rank, dtype=dtypes.int32, name="rank")
        data = [message or "", f"Tensor {x.name} must have {what}", rank_t,
                "Received shape: ", apply_op("Shape", x)]
        test = "GreaterEqual" if at_least else "Equal"
        del scope
        return _assert_op(apply_op(test, apply_op("Rank", x), rank_t), data, None)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """An op asserting rank(x) == rank (ValueError at build when the static rank decides)."""
    return _rank_check(x, rank, message, name, "assert_rank", at_least=False)


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    """An op asserting rank(x) >= rank (ValueError at build when the static rank decides)."""
    return _rank_check(x, rank, message, name, "assert_rank_at_least", at_least=True)


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """An op asserting rank(x) is one of `ranks`."""
    with name_scope(name, "assert_rank_in", [x, ranks]):
        x = convert_to_tensor(x, name="x")
        ranks = [int(r) for r in ranks]
        if x.shape.ndims is not None:
            if x.shape.ndims not in ranks:
                raise ValueError(f"{message or ''}.  Tensor {x.name} must have rank in "
                                 f"{ranks}.  Received rank {x.shape.ndims}, shape {x.shape}")
            return _no_op("static_checks_determined_all_ok")
        rank = apply_op("Rank", x)
        hits = apply_op("Equal", rank, convert_to_tensor(ranks, dtype=dtypes.int32))
        data = [message or "", f"Tensor {x.name} must have rank in", str(ranks),
                "Received shape: ", apply_op("Shape", x)]
        return _assert_op(apply_op("Any", hits, [0]), data, summarize)


def assert_type(tensor, tf_type, message=None, name=None):
    """A NoOp when `tensor` has dtype `tf_type`; TypeError otherwise."""
    with name_scope(name, "assert_type", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        tf_type = dtypes.as_dtype(tf_type)
        if tensor.dtype.base_dtype != tf_type.base_dtype:
            raise TypeError(f"{message or ''}  {getattr(tensor, 'name', 'tensor')} must be of "
                            f"type {tf_type}")
        return _no_op("statically_determined_correct_type")


def assert_integer(x, message=None, name=None):
    """A NoOp when `x` has an integer dtype; TypeError otherwise."""
    with name_scope(name, "assert_integer", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(f'{message or ""}Expected "x" to be integer type.  Found: '
                            f"{x.name} of dtype {x.dtype}")
        return _no_op("statically_determined_was_integer")


def assert_scalar(tensor, name=None, message=None):
    """`tensor` when its static shape is a scalar; ValueError otherwise."""
    with name_scope(name, "assert_scalar", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.shape.ndims != 0:
            raise ValueError(f"{message or ''}Expected scalar shape for {tensor.name}, saw "
                             f"shape: {tensor.shape}.")
        return tensor


def is_numeric_tensor(tensor) -> bool:
    """Whether `tensor` is a Tensor of a numeric dtype."""
    dt = getattr(tensor, "dtype", None)
    return hasattr(tensor, "op") and dt is not None and (
        dt.is_floating or dt.is_integer or dt.is_complex)


def _monotone(x, op_type, name, default):
    with name_scope(name, default, [x]):
        x = convert_to_tensor(x, name="x")
        flat = apply_op("Reshape", x, [-1])
        size = apply_op("Size", flat)
        left = apply_op("Slice", flat, [0], apply_op("ExpandDims", size - 1, 0))
        right = apply_op("Slice", flat, [1], [-1])
        return _all_of(apply_op(op_type, left, right))


def is_non_decreasing(x, name=None):
    """A bool scalar: whether the elements of x (row-major) never decrease."""
    return _monotone(x, "LessEqual", name, "is_non_decreasing")


def is_strictly_increasing(x, name=None):
    """A bool scalar: whether the elements of x (row-major) strictly increase."""
    return _monotone(x, "Less", name, "is_strictly_increasing")


# -- numerics ------------------------------------------------------------------------------
def verify_tensor_all_finite(t, msg, name=None):
    """`t`, after a CheckNumerics with message `msg` (TF1 `tf.verify_tensor_all_finite`)."""
    with name_scope(name, "VerifyFinite", [t]):
        t = convert_to_tensor(t, name="t")
        graph = get_default_graph()
        with graph.colocate_with(t.op):
            check = apply_op("CheckNumerics", t, message=msg)
        with graph.control_dependencies([check]):
            return apply_op("Identity", t)


def add_check_numerics_ops():
    """A group of CheckNumerics over every floating output in the default graph, each with
    message "<op name>:<output index>" (TF1 `tf.add_check_numerics_ops`)."""
    graph = get_default_graph()
    floats = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
    checks = []
    for op in graph.get_operations():
        if op.type in ("Switch", "Merge", "Enter", "Exit", "NextIteration", "RefSwitch"):
            continue
        for i, out in enumerate(op.outputs):
            if out.dtype.base_dtype in floats:
                with graph.control_dependencies(checks[-1:]), graph.colocate_with(op):
                    checks.append(apply_op("CheckNumerics", out, message=f"{op.name}:{i}"))
    return apply_op("NoOp", name="CheckNumerics") if not checks else _group(checks)


def _group(checks):
    from tensorweave.ops.control_flow_ops import group

    return group(*[c.op for c in checks], name="CheckNumerics")


__all__ = ["assert_equal", "assert_none_equal", "assert_less", "assert_less_equal",
           "assert_greater", "assert_greater_equal", "assert_positive", "assert_non_negative",
           "assert_negative", "assert_non_positive", "assert_near", "assert_rank",
           "assert_rank_at_least", "assert_rank_in", "assert_type", "assert_integer",
           "assert_scalar", "is_numeric_tensor", "is_non_decreasing", "is_strictly_increasing",
           "verify_tensor_all_finite", "add_check_numerics_ops"]
