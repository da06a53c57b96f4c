"""Array ops that create tensors: Fill, ZerosLike, OnesLike and Range, with the TF1 wrappers
`fill`, `zeros`, `ones`, `zeros_like`, `ones_like`, `range`, `sequence_mask` and `meshgrid`.

As in TF1, `zeros`/`ones` of a small static shape become a Const, larger or dynamic shapes a
Fill; `zeros_like` of a fully known shape needs no ZerosLike op at all.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.array_ops import as_shape_input, reshape, shape
from tensorweave.ops.common_shapes import unchanged
from tensorweave.ops.constant_op import constant
from tensorweave.ops.joining_ops import stack, with_rank
from tensorweave.ops.op_scope import OpScope
from tensorweave.ops.registry import register_op
from tensorweave.ops.shape_inference import constant_value, register_constant_evaluator
from tensorweave.ops.shape_tensors import input_tensor, partial_shape, small_enough
from tensorweave.shapes import TensorShape


# -- Fill -------------------------------------------------------------------------------------
def _fill_shape(ctx):
    with_rank(ctx, ctx.input_dims(0), 1)
    with_rank(ctx, ctx.input_dims(1), 0)
    dims = ctx.constant_value(0)
    if dims is not None and (np.asarray(dims) < 0).any():
        raise ctx.fail("Fill dimensions must be >= 0")
    return partial_shape(input_tensor(ctx, 0))


register_op("Fill", inputs=["dims: index_type", "value: T"], outputs=["output: T"],
            attrs=["T: type", "index_type: {int32, int64} = DT_INT32"], shape_fn=_fill_shape)


@register_constant_evaluator("Fill")
def _fill_value(op):
    dims, value = (constant_value(t) for t in op.inputs)
    if dims is None or value is None or not small_enough(np.prod(dims)):
        return None
    return np.full([int(d) for d in dims], value, dtype=np.asarray(value).dtype)


# -- ZerosLike, OnesLike ----------------------------------------------------------------------
register_op("ZerosLike", inputs=["x: T"], outputs=["y: T"], attrs=["T: type"],
            shape_fn=unchanged)
register_op("OnesLike", inputs=["x: T"], outputs=["y: T"],
            attrs=["T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, "
                   "int64, complex64, complex128, bool}"],
            shape_fn=unchanged)


def _like_value(fill):
    def evaluate(op):
        x = op.inputs[0]
        if not x.shape.is_fully_defined() or not small_enough(x.shape.num_elements()):
            return None
        dt = x.dtype.base_dtype
        value = (b"" if fill == 0 else None) if dt == dtypes.string else fill
        if value is None:
            return None
        return np.full(x.shape.as_list(), value, dtype=dt.np_dtype)

    return evaluate


register_constant_evaluator("ZerosLike")(_like_value(0))
register_constant_evaluator("OnesLike")(_like_value(1))


# -- Range ------------------------------------------------------------------------------------
def range_size(start, limit, delta) -> int:
    """Number of elements of Range(start, limit, delta). Raises ValueError (TF's messages)."""
    if delta == 0:
        raise ValueError("Requires delta != 0")
    if delta > 0 and start > limit:
        raise ValueError(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise ValueError(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if isinstance(start, (int, np.integer)) and isinstance(delta, (int, np.integer)):
        return (abs(int(limit) - int(start)) + abs(int(delta)) - 1) // abs(int(delta))
    return int(math.ceil(abs((float(limit) - float(start)) / float(delta))))


def _range_shape(ctx):
    for i, what in enumerate(("start", "limit", "delta")):
        dims = ctx.input_dims(i)
        if dims is not None and len(dims) != 0:
            raise ctx.fail(f"Shape must be rank 0 but is rank {len(dims)} for '{what}'")
    values = [ctx.constant_value(i) for i in builtins.range(3)]
    if any(v is None for v in values):
        return TensorShape([None])
    try:
        return TensorShape([range_size(*[v.item() for v in values])])
    except ValueError as e:
        raise ctx.fail(str(e)) from None


register_op("Range", inputs=["start: Tidx", "limit: Tidx", "delta: Tidx"],
            outputs=["output: Tidx"],
            attrs=["Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, uint16, "
                   "uint32} = DT_INT32"],
            shape_fn=_range_shape)


def range_values(start, limit, delta, np_dtype) -> np.ndarray:
    """Range's output: start + i * delta, computed in the output dtype."""
    n = range_size(start, limit, delta)
    return (np.arange(n, dtype=np_dtype) * np_dtype.type(delta) + np_dtype.type(start)).astype(
        np_dtype, copy=False)


@register_constant_evaluator("Range")
def _range_value(op):
    values = [constant_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return None
    scalars = [v.item() for v in values]
    if not small_enough(range_size(*scalars)):
        return None
    return range_values(*scalars, op.outputs[0].dtype.np_dtype)


# -- Python API -------------------------------------------------------------------------------
def fill(dims, value, name=None):
    """A tensor of shape `dims` filled with `value` (Fill)."""
    return apply_op("Fill", as_shape_input(dims), value, name=name)


def _zero_of(dtype):
    if dtype == dtypes.bool_:
        return False
    return "" if dtype == dtypes.string else 0


def _filled(shape_, value, dtype, scope: OpScope):
    """TF1 zeros/ones: a Const when small and static, else Fill(shape, Const(value))."""
    if not isinstance(shape_, Tensor):
        static = as_shape_input(shape_)
        if isinstance(static, (int, np.integer)):
            static = [static]
        if all(isinstance(d, (int, np.integer)) for d in static):
            if int(np.prod(static, dtype=np.int64)) < 1000:
                return scope.named(constant, value, dtype=dtype, shape=static)
            shape_ = _shape_as_tensor(static)
        else:
            shape_ = convert_to_tensor(static, dtype=dtypes.int32)
    if shape_.shape.ndims == 0:
        shape_ = reshape(shape_, [-1])
    return scope.apply("Fill", shape_, constant(value, dtype=dtype))


def _shape_as_tensor(dims):
    dims = [int(d) for d in np.reshape(np.asarray(dims, dtype=np.int64), [-1])]
    dt = dtypes.int64 if any(d >= 2**31 for d in dims) else dtypes.int32
    return constant(dims, dtype=dt, name="shape_as_tensor")


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of zeros (a Const for small static shapes, else Fill)."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    with OpScope(name, "zeros", [shape]) as s:
        return _filled(shape, _zero_of(dtype), dtype, s)


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of ones (True for bool)."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    with OpScope(name, "ones", [shape]) as s:
        return _filled(shape, True if dtype == dtypes.bool_ else 1, dtype, s)


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """Zeros shaped like `tensor` (no op reads `tensor` when its shape is static)."""
    with OpScope(name, "zeros_like", [tensor]) as s:
        tensor = convert_to_tensor(tensor, name="tensor")
        dtype = dtypes.as_dtype(dtype).base_dtype if dtype is not None else None
        if optimize and tensor.shape.is_fully_defined() and tensor.dtype != dtypes.variant:
            return zeros(tensor.shape, dtype=dtype or tensor.dtype.base_dtype, name=s.name)
        if dtype is not None and dtype != tensor.dtype.base_dtype:
            return zeros(shape(tensor), dtype=dtype, name=s.name)
        return s.apply("ZerosLike", tensor)


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """Ones shaped like `tensor`."""
    with OpScope(name, "ones_like", [tensor]) as s:
        tensor = convert_to_tensor(tensor, name="tensor")
        dims = tensor.shape
        ones_shape = shape(tensor) if optimize else apply_op("Shape", tensor)
        dtype = dtypes.as_dtype(dtype).base_dtype if dtype is not None else \
            tensor.dtype.base_dtype
        out = ones(ones_shape, dtype=dtype, name=s.name)
        out.set_shape(dims)
        return out


_RANGE_HIERARCHY = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TF's name
    """TF1 `tf.range`: like Python's range, over int or float tensors (Range op)."""
    if limit is None:
        start, limit = 0, start
    args = (start, limit, delta)
    with OpScope(name, "Range", list(args)) as s:
        if dtype is None:
            dtype = builtins.max((_arg_dtype(a) for a in args), key=_RANGE_HIERARCHY.index)
        dtype = dtypes.as_dtype(dtype).base_dtype
        tensors = [_range_arg(a, dtype, n) for a, n in zip(args, ("start", "limit", "delta"))]
        return s.apply("Range", *tensors)


def _arg_dtype(value):
    if isinstance(value, Tensor):
        return value.dtype.base_dtype
    dt = dtypes.dtype_of_value(value)
    if dt not in _RANGE_HIERARCHY:
        raise TypeError(f"Range arguments must be int32, int64, float32 or float64, got {dt}")
    return dt


def _range_arg(value, dtype, name):
    if not isinstance(value, Tensor):
        return convert_to_tensor(value, dtype=dtype, name=name)
    if value.dtype.base_dtype == dtype:
        return value
    return apply_op("Cast", value, DstT=dtype, name="Cast")


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool_, name=None):
    """mask[i, j] = j < lengths[i], for j < maxlen (default: max(lengths))."""
    with name_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = convert_to_tensor(lengths)
        if maxlen is None:
            axes = range(0, apply_op("Rank", lengths), 1)
            maxlen = apply_op("Max", lengths, axes)
            maxlen = apply_op("Maximum", constant(0, dtype=maxlen.dtype), maxlen)
        else:
            maxlen = convert_to_tensor(maxlen)
        if maxlen.shape.ndims not in (None, 0):
            raise ValueError("maxlen must be scalar for sequence_mask")
        row = apply_op("Range", constant(0, dtype=maxlen.dtype), maxlen,
                       constant(1, dtype=maxlen.dtype))
        matrix = apply_op("ExpandDims", lengths, -1)
        if matrix.dtype.base_dtype != maxlen.dtype.base_dtype:
            matrix = apply_op("Cast", matrix, DstT=maxlen.dtype.base_dtype)
        result = apply_op("Less", row, matrix)
        dtype = dtypes.as_dtype(dtype).base_dtype
        if result.dtype.base_dtype == dtype:
            return result
        return apply_op("Cast", result, DstT=dtype)


def meshgrid(*args, **kwargs):
    """N-D coordinate arrays from 1-D `args` (`indexing`: 'xy' (default) or 'ij')."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        key = next(iter(kwargs))
        raise TypeError(f"'{key}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError("indexing parameter must be either 'xy' or 'ij'")
    with name_scope(name, "meshgrid", args):
        ndim = len(args)
        ones_ = (1,) * ndim
        outputs = [reshape(stack(x), ones_[:i] + (-1,) + ones_[i + 1:])
                   for i, x in enumerate(args)]
        sizes = [apply_op("Size", convert_to_tensor(x)) for x in args]
        if indexing == "xy" and ndim > 1:
            outputs[0] = reshape(outputs[0], (1, -1) + (1,) * (ndim - 2))
            outputs[1] = reshape(outputs[1], (-1, 1) + (1,) * (ndim - 2))
            sizes[0], sizes[1] = sizes[1], sizes[0]
        full = stack(sizes)
        return [apply_op("BroadcastTo", x, full) for x in outputs]


__all__ = ["fill", "zeros", "ones", "zeros_like", "ones_like", "range", "sequence_mask",
           "meshgrid"]
