"""`tf.assert_*` (TF1's check_ops): comparisons that fail the step with
InvalidArgumentError("assertion failed: [...]") when they do not hold element-wise.

Each returns the `Assert` op (run it, or put it in `tf.control_dependencies`). The default
message lists the condition and the operands' names and values, as TF's.
"""

from __future__ import annotations

from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import math_ops, reduction_ops
from tensorweave.ops.control_flow_ops import Assert


def _binary_assert(op_name, symbol, compare, x, y, data, summarize, message, name):
    with name_scope(name, op_name, [x, y, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        if data is None:
            data = [message or "", f"Condition x {symbol} y did not hold element-wise:",
                    f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        elif message:
            data = [message, *data]
        condition = reduction_ops.reduce_all(compare(x, y))
        return Assert(condition, data, summarize=summarize)


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("assert_equal", "==", math_ops.equal, x, y, data, summarize,
                          message, name)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("assert_none_equal", "!=", math_ops.not_equal, x, y, data,
                          summarize, message, name)


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("assert_less", "<", math_ops.less, x, y, data, summarize, message,
                          name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("assert_less_equal", "<=", math_ops.less_equal, x, y, data,
                          summarize, message, name)


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("assert_greater", ">", math_ops.greater, x, y, data, summarize,
                          message, name)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("assert_greater_equal", ">=", math_ops.greater_equal, x, y, data,
                          summarize, message, name)


def _sign_assert(op_name, condition_text, compare_to_zero, x, data, summarize, message, name):
    with name_scope(name, op_name, [x, data]):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [message or "", f"Condition x {condition_text} did not hold element-wise:",
                    f"x ({x.name}) = ", x]
        elif message:
            data = [message, *data]
        zero = convert_to_tensor(0, dtype=x.dtype.base_dtype)
        condition = reduction_ops.reduce_all(compare_to_zero(x, zero))
        return Assert(condition, data, summarize=summarize)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert("assert_positive", "> 0", math_ops.greater, x, data, summarize,
                        message, name)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert("assert_negative", "< 0", math_ops.less, x, data, summarize, message,
                        name)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert("assert_non_negative", ">= 0", math_ops.greater_equal, x, data,
                        summarize, message, name)


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert("assert_non_positive", "<= 0", math_ops.less_equal, x, data,
                        summarize, message, name)


__all__ = [
    "assert_equal", "assert_greater", "assert_greater_equal", "assert_less",
    "assert_less_equal", "assert_negative", "assert_non_negative", "assert_non_positive",
    "assert_none_equal", "assert_positive",
]
