"""Reductions (Sum, Mean, Max, ...), ArgMax/ArgMin, scans (Cumsum, Cumprod), segment ops and
Bincount, with TF1's wrappers (reduce_sum(input_tensor, axis, keepdims, name,
reduction_indices, keep_dims), argmax(input, axis, name, dimension, output_type), ...)."""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.common_shapes import reduction, unchanged
from tensorweave.ops.constant_op import constant
from tensorweave.ops.math_ops import _op, cast, op_scope, to_int64
from tensorweave.ops.registry import register_op
from tensorweave.ops.shape_inference import constant_value, register_constant_evaluator
from tensorweave.shapes import TensorShape

_TIDX = "Tidx: {int32, int64} = DT_INT32"
_REDUCTIONS = {
    "Sum": "numbertype", "Mean": "numbertype", "Prod": "numbertype",
    "EuclideanNorm": "numbertype", "Max": "realnumbertype", "Min": "realnumbertype",
}


# -- shape functions --------------------------------------------------------------------------
def _arg_shape(ctx) -> TensorShape:
    """Input shape without the `dimension` axis (unknown dims when the axis is not constant)."""
    dims, axis = ctx.input_dims(0), ctx.constant_value(1)
    if dims is None:
        return TensorShape(None)
    if axis is None:
        return TensorShape([None] * max(len(dims) - 1, 0))
    a, rank = int(np.reshape(axis, [-1])[0]), len(dims)
    if not -rank <= a < rank:
        raise ctx.fail(f"Expected dimension in the range [{-rank}, {rank}), but got {a}")
    a %= rank
    return TensorShape(dims[:a] + dims[a + 1:])


def _rank1(ctx, i: int):
    dims = ctx.input_dims(i)
    if dims is not None and len(dims) != 1:
        raise ctx.fail(f"Shape must be rank 1 but is rank {len(dims)}")


def _segment_shape(ctx) -> TensorShape:
    """[num segments (unknown)] + data.shape[1:]; segment_ids must be 1-D."""
    _rank1(ctx, 1)
    dims = ctx.input_dims(0)
    return TensorShape(None) if dims is None else TensorShape([None] + list(dims[1:]))


def _unsorted_segment_shape(ctx) -> TensorShape:
    """[num_segments] + data.shape[rank(segment_ids):]."""
    data, ids = ctx.input_dims(0), ctx.input_dims(1)
    num = ctx.constant_value(2)
    n = None if num is None else int(num)
    if data is None or ids is None:
        return TensorShape(None)
    prefix = data[:len(ids)]
    if len(prefix) < len(ids) or any(p is not None and q is not None and p != q
                                     for p, q in zip(prefix, ids)):
        raise ctx.fail(f"segment_ids.shape = {list(ids)} does not start with data.shape = "
                       f"{list(data)}")
    return TensorShape([n] + list(data[len(ids):]))


def _bincount_shape(ctx) -> TensorShape:
    size = ctx.constant_value(1)
    return TensorShape([None if size is None else int(size)])


# -- registration -----------------------------------------------------------------------------
for _name, _types in _REDUCTIONS.items():
    register_op(_name, inputs=["input: T", "reduction_indices: Tidx"], outputs=["output: T"],
                attrs=["keep_dims: bool = false", f"T: {_types}", _TIDX], shape_fn=reduction)
for _name in ("All", "Any"):
    register_op(_name, inputs=["input: bool", "reduction_indices: Tidx"],
                outputs=["output: bool"], attrs=["keep_dims: bool = false", _TIDX],
                shape_fn=reduction)
for _name in ("ArgMax", "ArgMin"):
    register_op(_name, inputs=["input: T", "dimension: Tidx"], outputs=["output: output_type"],
                attrs=["T: {numbertype, bool}", _TIDX,
                       "output_type: {int32, int64} = DT_INT64"], shape_fn=_arg_shape)
for _name in ("Cumsum", "Cumprod"):
    register_op(_name, inputs=["x: T", "axis: Tidx"], outputs=["out: T"],
                attrs=["exclusive: bool = false", "reverse: bool = false", "T: numbertype",
                       _TIDX], shape_fn=unchanged)
for _name, _types in {"SegmentSum": "numbertype", "SegmentMean": "numbertype",
                      "SegmentProd": "numbertype", "SegmentMax": "realnumbertype",
                      "SegmentMin": "realnumbertype"}.items():
    register_op(_name, inputs=["data: T", "segment_ids: Tindices"], outputs=["output: T"],
                attrs=[f"T: {_types}", "Tindices: {int32, int64}"], shape_fn=_segment_shape)
for _name, _types in {"UnsortedSegmentSum": "numbertype", "UnsortedSegmentProd": "numbertype",
                      "UnsortedSegmentMax": "realnumbertype",
                      "UnsortedSegmentMin": "realnumbertype"}.items():
    register_op(_name, inputs=["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
                outputs=["output: T"],
                attrs=[f"T: {_types}", "Tindices: {int32, int64}",
                       "Tnumsegments: {int32, int64} = DT_INT32"],
                shape_fn=_unsorted_segment_shape)
register_op("Bincount", inputs=["arr: int32", "size: int32", "weights: T"], outputs=["bins: T"],
            attrs=["T: {int32, int64, float, double}"], shape_fn=_bincount_shape)


def _register_reduce_evaluator(op_type: str, fn) -> None:
    """Integer Sum/Prod of constants (e.g. the element count from a Shape) are static."""

    def evaluate(op):
        x, axes = constant_value(op.inputs[0]), constant_value(op.inputs[1])
        out = op.outputs[0].dtype.base_dtype
        if x is None or axes is None or not out.is_integer or np.size(x) > 1000:
            return None
        x = np.asarray(x)
        axis = tuple(int(a) % max(x.ndim, 1) for a in np.reshape(axes, [-1]))
        return np.asarray(fn(x, axis=axis, keepdims=op.get_attr("keep_dims"))).astype(
            out.np_dtype)

    register_constant_evaluator(op_type)(evaluate)


_register_reduce_evaluator("Sum", np.sum)
_register_reduce_evaluator("Prod", np.prod)
_register_reduce_evaluator("Max", np.max)
_register_reduce_evaluator("Min", np.min)


# -- reductions -------------------------------------------------------------------------------
def _keepdims(keepdims, keep_dims) -> bool:
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    value = keepdims if keepdims is not None else keep_dims
    return bool(value) if value is not None else False


def _tf_range(limit: Tensor) -> Tensor:
    """TF's `range(0, limit)` (ops "range/start", "range/delta", "range")."""
    with op_scope(None, "range", [limit]) as name:
        start = convert_to_tensor(0, name="start")
        delta = convert_to_tensor(1, name="delta")
        return _op("Range", start, limit, delta, name=name)


def _reduction_dims(x: Tensor, axis, reduction_indices):
    """The axes input of a reduction: `axis`, or every axis (a Const when the rank is known,
    else Range(0, Rank(x)))."""
    if reduction_indices is not None:
        if axis is not None:
            raise ValueError("Can't specify both axis' and 'reduction_indices'.")
        axis = reduction_indices
    if isinstance(axis, (list, tuple)) and not axis:
        return np.zeros([0], np.int32)  # NOTE: a bare [] would convert to float32
    if axis is not None:
        return axis
    rank = x.shape.ndims
    if rank is not None:
        return constant(np.arange(rank, dtype=np.int32), dtype=dtypes.int32)
    return _tf_range(_op("Rank", x))


def _may_reduce_to_scalar(keepdims: bool, axis, reduction_indices, output: Tensor) -> Tensor:
    if not output.shape.is_fully_defined() and not keepdims and axis is None and \
            reduction_indices is None:
        output.set_shape(())
    return output


def _reducer(py_name: str, op_type: str, what: str):
    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
           keep_dims=None):
        keepdims = _keepdims(keepdims, keep_dims)
        x = convert_to_tensor(input_tensor)
        out = _op(op_type, x, _reduction_dims(x, axis, reduction_indices), keep_dims=keepdims,
                  name=name)
        return _may_reduce_to_scalar(keepdims, axis, reduction_indices, out)

    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = (f"Computes the {what} of elements across `axis` (all axes when None; "
                  f"negative axes count from the end), keeping reduced dims as 1 when "
                  f"`keepdims`. A {op_type} op named '{op_type}' unless `name` is given.\n\n"
                  f"Raises:\n  ValueError: both axis and reduction_indices (or keepdims and "
                  f"keep_dims) are given, or an axis is out of range.")
    return fn


reduce_sum = _reducer("reduce_sum", "Sum", "sum")
reduce_mean = _reducer("reduce_mean", "Mean", "mean (integer division for integer types)")
reduce_prod = _reducer("reduce_prod", "Prod", "product")
reduce_max = _reducer("reduce_max", "Max", "maximum")
reduce_min = _reducer("reduce_min", "Min", "minimum")
reduce_all = _reducer("reduce_all", "All", "logical and")
reduce_any = _reducer("reduce_any", "Any", "logical or")
reduce_euclidean_norm = _reducer("reduce_euclidean_norm", "EuclideanNorm", "Euclidean norm")


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                     keep_dims=None):
    """log(sum(exp(x))) over `axis`, stable for large inputs (the max is subtracted first)."""
    keepdims = _keepdims(keepdims, keep_dims)
    input_tensor = convert_to_tensor(input_tensor)
    with op_scope(name, "ReduceLogSumExp", [input_tensor]):
        raw_max = reduce_max(input_tensor, axis=axis, reduction_indices=reduction_indices,
                             keepdims=True)
        finite = _op("Select", _op("IsFinite", raw_max), raw_max, _op("ZerosLike", raw_max))
        my_max = _op("StopGradient", finite)
        result = _op("Log", reduce_sum(_op("Exp", _op("Sub", input_tensor, my_max)), axis,
                                       keepdims=keepdims, reduction_indices=reduction_indices))
        if not keepdims:
            my_max = _op("Reshape", my_max, _op("Shape", result))
        result = _op("AddV2", result, my_max, name="Add")
        return _may_reduce_to_scalar(keepdims, axis, reduction_indices, result)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """mean((x - mean(x))**2) over `axis`, under the scope "reduce_variance"."""
    with op_scope(name, "reduce_variance", [input_tensor]):
        means = reduce_mean(input_tensor, axis=axis, keepdims=True)
        deviations = _op("Square", _op("Sub", input_tensor, means))
        return reduce_mean(deviations, axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(reduce_variance(x)) over `axis`, under the scope "reduce_std"."""
    with op_scope(name, "reduce_std", [input_tensor]):
        return _op("Sqrt", reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def _zero_of(dtype: dtypes.DType):
    if dtype == dtypes.string:
        return b""
    return False if dtype == dtypes.bool_ else 0


def count_nonzero(input_tensor, axis=None, keepdims=None, dtype=dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None):
    """The number of nonzero elements (non-empty strings) over `axis`, as `dtype`."""
    keepdims = _keepdims(keepdims, keep_dims)
    with op_scope(name, "count_nonzero", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        zero = constant(_zero_of(input_tensor.dtype.base_dtype), dtype=input_tensor.dtype,
                        name="zeros")
        nonzero = to_int64(_op("NotEqual", input_tensor, zero))
        total = reduce_sum(nonzero, axis=axis, keepdims=keepdims,
                           reduction_indices=reduction_indices)
        return cast(total, dtype)


# -- argmax / argmin --------------------------------------------------------------------------
def _arg_fn(py_name: str, op_type: str):
    def fn(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
        if axis is not None and dimension is not None:
            raise ValueError("Cannot specify both 'axis' and 'dimension'")
        axis = dimension if axis is None else axis
        return _op(op_type, input, 0 if axis is None else axis, output_type=output_type,
                   name=name)

    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = (f"Index of the {py_name[3:]} along `axis` (default 0), as `output_type` "
                  f"(int64 by default); ties give the first index. An {op_type} op.")
    return fn


argmax = _arg_fn("argmax", "ArgMax")
argmin = _arg_fn("argmin", "ArgMin")


def arg_max(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002
    """TF's generated `tf.arg_max(input, dimension, output_type, name)`."""
    return _op("ArgMax", input, dimension, output_type=output_type, name=name)


def arg_min(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002
    """TF's generated `tf.arg_min(input, dimension, output_type, name)`."""
    return _op("ArgMin", input, dimension, output_type=output_type, name=name)


# -- scans ------------------------------------------------------------------------------------
def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative sum along `axis`; `exclusive` starts from 0, `reverse` scans from the end."""
    with op_scope(name, "Cumsum", [x]) as name:
        x = convert_to_tensor(x, name="x")
        return _op("Cumsum", x, axis, exclusive=exclusive, reverse=reverse, name=name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative product along `axis`; `exclusive` starts from 1, `reverse` from the end."""
    with op_scope(name, "Cumprod", [x]) as name:
        x = convert_to_tensor(x, name="x")
        return _op("Cumprod", x, axis, exclusive=exclusive, reverse=reverse, name=name)


# -- segments ---------------------------------------------------------------------------------
def _segment_fn(py_name: str, op_type: str):
    def fn(data, segment_ids, name=None):
        return _op(op_type, data, segment_ids, name=name)

    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = (f"`{op_type}`: reduces rows of `data` whose sorted `segment_ids` are equal; "
                  f"the output has max(segment_ids) + 1 rows (empty segments are 0).")
    return fn


def _unsorted_segment_fn(py_name: str, op_type: str):
    def fn(data, segment_ids, num_segments, name=None):
        return _op(op_type, data, segment_ids, num_segments, name=name)

    fn.__name__ = fn.__qualname__ = py_name
    fn.__doc__ = (f"`{op_type}`: reduces the slices of `data` with equal `segment_ids` (any "
                  f"order; negative ids are dropped) into `num_segments` rows.")
    return fn


segment_sum = _segment_fn("segment_sum", "SegmentSum")
segment_mean = _segment_fn("segment_mean", "SegmentMean")
segment_prod = _segment_fn("segment_prod", "SegmentProd")
segment_max = _segment_fn("segment_max", "SegmentMax")
segment_min = _segment_fn("segment_min", "SegmentMin")
unsorted_segment_sum = _unsorted_segment_fn("unsorted_segment_sum", "UnsortedSegmentSum")
unsorted_segment_prod = _unsorted_segment_fn("unsorted_segment_prod", "UnsortedSegmentProd")
unsorted_segment_max = _unsorted_segment_fn("unsorted_segment_max", "UnsortedSegmentMax")
unsorted_segment_min = _unsorted_segment_fn("unsorted_segment_min", "UnsortedSegmentMin")


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32):
    """Counts (or sums `weights` of) each value of the non-negative int32 `arr`; the output has
    max(arr) + 1 bins, at least `minlength` and at most `maxlength`."""
    arr = convert_to_tensor(arr, name="arr", dtype=dtypes.int32)
    nonempty = _op("Greater", reduce_prod(_op("Shape", arr)), 0)
    output_size = _op("Mul", cast(nonempty, dtypes.int32),
                      _op("AddV2", reduce_max(arr), 1))
    if minlength is not None:
        minlength = convert_to_tensor(minlength, name="minlength", dtype=dtypes.int32)
        output_size = _op("Maximum", minlength, output_size)
    if maxlength is not None:
        maxlength = convert_to_tensor(maxlength, name="maxlength", dtype=dtypes.int32)
        output_size = _op("Minimum", maxlength, output_size)
    if weights is not None:
        weights = convert_to_tensor(weights, name="weights")
        return _op("UnsortedSegmentSum", weights, arr, output_size)
    return _op("Bincount", arr, output_size, constant([], dtype))


__all__ = [
    "arg_max", "arg_min", "argmax", "argmin", "bincount", "count_nonzero", "cumprod", "cumsum",
    "reduce_all", "reduce_any", "reduce_euclidean_norm", "reduce_logsumexp", "reduce_max",
    "reduce_mean", "reduce_min", "reduce_prod", "reduce_std", "reduce_sum", "reduce_variance",
    "segment_max", "segment_mean",
    "segment_min", "segment_prod", "segment_sum", "unsorted_segment_max",
    "unsorted_segment_min", "unsorted_segment_prod", "unsorted_segment_sum",
]
