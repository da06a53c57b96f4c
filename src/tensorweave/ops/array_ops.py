"""Array ops, part 1: placeholders, identities, shapes, reshaping and list autopacking.

The other array families live beside this module: `slicing_ops` (Slice, StridedSlice,
`Tensor.__getitem__`, Split, Unpack), `joining_ops` (ConcatV2, Pack, Tile, Pad, Transpose,
...), `gather_ops` (Gather*, ScatterNd, OneHot, Where, Select, Unique, ...), `creation_ops`
(Fill, zeros/ones, Range, ...) and `diag_ops`. Each op's shape function and constant
evaluator sit next to its registration.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import scalar, unchanged
from tensorweave.ops.constant_op import constant
from tensorweave.ops.op_scope import OpScope
from tensorweave.ops.registry import register_op
from tensorweave.ops.shape_inference import constant_value, register_constant_evaluator
from tensorweave.ops.shape_tensors import Dim, input_tensor, partial_vector
from tensorweave.shapes import Dimension, TensorShape

newaxis = None
_INT_OUT = "out_type: {int32, int64} = DT_INT32"


# -- placeholders and identities --------------------------------------------------------------
def _placeholder_shape(ctx):
    return ctx.attr("shape")


def _placeholder_with_default_shape(ctx):
    shape = ctx.attr("shape")
    if not ctx.input_shape(0).is_compatible_with(shape):
        raise ctx.fail(f"Shapes must be equal rank, but are {ctx.input_shape(0)} and {shape}"
                       if ctx.input_shape(0).ndims != shape.ndims else
                       f"Dimensions of {ctx.input_shape(0)} and {shape} are not compatible")
    return shape


def _identity_n_shape(ctx):
    return [ctx.input_shape(i) for i in range(ctx.num_inputs)]


def _print_shape(ctx):
    return ctx.input_shape(0)


register_op("Placeholder", outputs=["output: dtype"],
            attrs=["dtype: type", "shape: shape = { unknown_rank: true }"],
            shape_fn=_placeholder_shape)
register_op("PlaceholderWithDefault", inputs=["input: dtype"], outputs=["output: dtype"],
            attrs=["dtype: type", "shape: shape"], shape_fn=_placeholder_with_default_shape)
register_op("Identity", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"],
            shape_fn=unchanged)
register_op("IdentityN", inputs=["input: T"], outputs=["output: T"],
            attrs=["T: list(type) >= 1"], shape_fn=_identity_n_shape)
register_op("StopGradient", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"],
            shape_fn=unchanged)
register_op("PreventGradient", inputs=["input: T"], outputs=["output: T"],
            attrs=["T: type", "message: string = ''"], shape_fn=unchanged)
register_op("Snapshot", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"],
            shape_fn=unchanged)
register_op("GuaranteeConst", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"],
            shape_fn=unchanged, stateful=True)  # NOTE: stateful as in TF: never folded away
register_op("CheckNumerics", inputs=["tensor: T"], outputs=["output: T"],
            attrs=["T: {bfloat16, half, float, double}", "message: string"],
            shape_fn=unchanged, stateful=True)  # NOTE: stateful as in TF: never pruned or CSE'd
register_op("Print", inputs=["input: T", "data: U"], outputs=["output: T"],
            attrs=["T: type", "U: list(type) >= 0", "message: string = ''",
                   "first_n: int = -1", "summarize: int = 3"],
            shape_fn=_print_shape, stateful=True)


def _forward_value(op):
    return constant_value(op.inputs[0])


for _t in ("Identity", "StopGradient", "PreventGradient", "Snapshot"):
    register_constant_evaluator(_t)(_forward_value)


# -- Shape, ShapeN, Size, Rank ----------------------------------------------------------------
def _shape_shape(ctx):
    return [TensorShape([ctx.input_shape(i).ndims]) for i in range(ctx.num_inputs)]


register_op("Shape", inputs=["input: T"], outputs=["output: out_type"],
            attrs=["T: type", _INT_OUT], shape_fn=_shape_shape)
register_op("ShapeN", inputs=["input: N * T"], outputs=["output: N * out_type"],
            attrs=["N: int", "T: type", _INT_OUT], shape_fn=_shape_shape)
register_op("Size", inputs=["input: T"], outputs=["output: out_type"],
            attrs=["T: type", _INT_OUT], shape_fn=scalar)
register_op("Rank", inputs=["input: T"], outputs=["output: int32"], attrs=["T: type"],
            shape_fn=scalar)


def _static_shape(tensor, out_type):
    shape = tensor.shape
    if not shape.is_fully_defined():
        return None
    return np.array(shape.as_list(), dtype=dtypes.as_dtype(out_type).np_dtype)


@register_constant_evaluator("Shape")
def _shape_value(op):
    return _static_shape(op.inputs[0], op.get_attr("out_type"))


@register_constant_evaluator("ShapeN")
def _shape_n_value(op):
    return _static_shape(op.inputs[0], op.get_attr("out_type"))


@register_constant_evaluator("Size")
def _size_value(op):
    dims = op.inputs[0].shape.as_tuple()
    if dims is None or (None in dims and 0 not in dims):
        return None
    n = 0 if 0 in dims else int(np.prod(dims, dtype=np.int64))
    return np.array(n, dtype=dtypes.as_dtype(op.get_attr("out_type")).np_dtype)


@register_constant_evaluator("Rank")
def _rank_value(op):
    ndims = op.inputs[0].shape.ndims
    return None if ndims is None else np.array(ndims, dtype=np.int32)


# -- Reshape ----------------------------------------------------------------------------------
def _reshape_shape(ctx):
    """TF's SetOutputShapeForReshape, plus matching `tf.shape(x)[i]` entries with x's dims."""
    entries = partial_vector(input_tensor(ctx, 1))
    if entries is None:
        return TensorShape(None)
    for e in entries:
        if isinstance(e, int) and e < -1:
            raise ctx.fail(f"Invalid value in tensor used for shape: {e}")
    out = [e if isinstance(e, int) and e >= 0 else None for e in entries]
    in_dims = ctx.input_dims(0)
    if in_dims is None:
        return TensorShape(out)
    x = input_tensor(ctx, 0)
    matched = _match_symbolic(entries, in_dims, x)
    in_unknown = [i for i, d in enumerate(in_dims) if d is None and i not in matched.values()]
    out_unknown = [j for j, e in enumerate(entries) if out[j] is None and j not in matched]
    known_in = _prod(d for i, d in enumerate(in_dims) if d is not None)
    known_out = _prod(d for j, d in enumerate(out) if d is not None)
    if len(in_unknown) > 1 or len(out_unknown) > 1:
        return TensorShape(out)
    if not in_unknown and not out_unknown:
        if known_in != known_out and not matched:
            raise ctx.fail(f"Cannot reshape a tensor with {known_in} elements to shape "
                           f"{_fmt(out)} ({known_out} elements)")
    elif not in_unknown and known_out > 0:
        if known_in % known_out and not matched:
            raise ctx.fail(f"Cannot reshape a tensor with {known_in} elements to shape "
                           f"{_fmt(out)} ({known_out} elements)")
        if not known_in % known_out:
            out[out_unknown[0]] = known_in // known_out
    return TensorShape(out)


def _match_symbolic(entries, in_dims, x) -> dict:
    """{output position: input dim} for entries that are `tf.shape(x)[i]` of an unknown dim."""
    matched: dict = {}
    for j, e in enumerate(entries):
        if isinstance(e, Dim) and e.tensor is x and in_dims[e.index] is None and \
                e.index not in matched.values():
            matched[j] = e.index
    return matched


def _prod(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _fmt(dims) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


register_op("Reshape", inputs=["tensor: T", "shape: Tshape"], outputs=["output: T"],
            attrs=["T: type", "Tshape: {int32, int64} = DT_INT32"], shape_fn=_reshape_shape)


@register_constant_evaluator("Reshape")
def _reshape_value(op):
    value, shape = (constant_value(t) for t in op.inputs)
    if value is None or shape is None:
        return None
    return np.reshape(value, [int(d) for d in np.reshape(shape, [-1])])


# -- Squeeze, ExpandDims ----------------------------------------------------------------------
def _squeeze_axes(ctx_or_none, dims_attr, rank):
    axes = []
    for i, d in enumerate(dims_attr):
        if not -rank <= d < rank:
            msg = f"squeeze_dims[{i}] not in [{-rank},{rank})."
            if ctx_or_none is None:
                raise ValueError(msg)
            raise ctx_or_none.fail(msg)
        axes.append(d % rank)
    return axes


def _squeeze_shape(ctx):
    dims = ctx.input_dims(0)
    if dims is None:
        return TensorShape(None)
    axes = _squeeze_axes(ctx, ctx.attr("squeeze_dims"), len(dims))
    out = []
    for i, d in enumerate(dims):
        explicit = i in axes
        if d is None:
            if explicit:
                continue
            if not axes:
                return TensorShape(None)
        elif d == 1:
            if explicit or not axes:
                continue
        elif explicit:
            raise ctx.fail(f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}")
        out.append(d)
    return TensorShape(out)


def _expand_dims_axis(dim_value, rank, fail):
    if np.size(dim_value) != 1:
        raise fail("'dim' input must be a tensor with a single value")
    dim = int(np.reshape(dim_value, [-1])[0])
    if not -rank - 1 <= dim <= rank:
        raise fail(f"dim {dim} not in the interval [{-rank - 1}, {rank}].")
    return dim + rank + 1 if dim < 0 else dim


def _expand_dims_shape(ctx):
    dim = ctx.constant_value(1)
    if dim is not None and np.size(dim) != 1:
        raise ctx.fail("'dim' input must be a tensor with a single value")
    dims = ctx.input_dims(0)
    if dim is None or dims is None:
        return TensorShape(None)
    axis = _expand_dims_axis(dim, len(dims), ctx.fail)
    return TensorShape(dims[:axis] + (1,) + dims[axis:])


register_op("Squeeze", inputs=["input: T"], outputs=["output: T"],
            attrs=["T: type", "squeeze_dims: list(int) >= 0 = []"], shape_fn=_squeeze_shape)
register_op("ExpandDims", inputs=["input: T", "dim: Tdim"], outputs=["output: T"],
            attrs=["T: type", "Tdim: {int32, int64} = DT_INT32"], shape_fn=_expand_dims_shape)


@register_constant_evaluator("Squeeze")
def _squeeze_value(op):
    value = constant_value(op.inputs[0])
    if value is None:
        return None
    axes = op.get_attr("squeeze_dims")
    return np.squeeze(value, axis=tuple(axes)) if axes else np.squeeze(value)


@register_constant_evaluator("ExpandDims")
def _expand_dims_value(op):
    value, dim = (constant_value(t) for t in op.inputs)
    if value is None or dim is None:
        return None
    return np.expand_dims(value, _expand_dims_axis(dim, np.ndim(value), ValueError))


# -- Bitcast ----------------------------------------------------------------------------------
_BITCAST_TYPES = ("{bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, uint64, "
                  "int8, int16, complex64, complex128, qint8, quint8, qint16, quint16, qint32}")
_QUANTIZED_SIZES = {"qint8": 1, "quint8": 1, "qint16": 2, "quint16": 2, "qint32": 4}


def type_size(dt) -> int:
    """Bytes per element of `dt` (quantized types included)."""
    dt = dtypes.as_dtype(dt)
    if dt.name in _QUANTIZED_SIZES:
        return _QUANTIZED_SIZES[dt.name]
    return dt.np_dtype.itemsize if dt.np_dtype is not None else 0


def _bitcast_shape(ctx):
    dims = ctx.input_dims(0)
    if dims is None:
        return TensorShape(None)
    n_in, n_out = type_size(ctx.attr("T")), type_size(ctx.attr("type"))
    if n_in == n_out:
        return TensorShape(dims)
    if n_in > n_out:
        return TensorShape(dims + (n_in // n_out,))
    if not dims:
        raise ctx.fail("Shape must be at least rank 1 but is rank 0")
    if dims[-1] is not None and dims[-1] != n_out // n_in:
        raise ctx.fail(f"Cannot bitcast due to shape. {dims[-1]} does not match {n_out // n_in}")
    return TensorShape(dims[:-1])


register_op("Bitcast", inputs=["input: T"], outputs=["output: type"],
            attrs=[f"T: {_BITCAST_TYPES}", f"type: {_BITCAST_TYPES}"], shape_fn=_bitcast_shape)


# -- autopacking: lists holding tensors become Pack ops ---------------------------------------
def _nested_tensor_dtype(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            found = _nested_tensor_dtype(v)
            if found is not None:
                return found
        elif isinstance(v, Tensor) or (hasattr(v, "dtype") and hasattr(v, "op")):
            return v.dtype.base_dtype
    return None


def _autopack(values, dtype, name):
    """TF's `_autopacking_helper`: a Pack (named `name`) of the elements, nested lists packed."""
    with OpScope(name, None, _flat_tensors(values)) as s:
        elems, must_pack = [], False
        for i, v in enumerate(values):
            if isinstance(v, (list, tuple)):
                v = _autopack(v, dtype, str(i))
            if isinstance(v, Tensor) or hasattr(v, "op"):
                v = convert_to_tensor(v)
                if v.dtype.base_dtype != dtype:
                    raise TypeError(f"Cannot convert a list containing a tensor of dtype "
                                    f"{v.dtype} to {dtype} (Tensor is: {v!r})")
                must_pack = True
            elems.append(v)
        if not must_pack:
            return elems
        elems = [e if isinstance(e, Tensor) else
                 constant(_dims_to_ints(e), dtype=dtype, name=str(i))
                 for i, e in enumerate(elems)]
        return s.apply("Pack", elems)


def _flat_tensors(values):
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(_flat_tensors(v))
        elif isinstance(v, Tensor):
            out.append(v)
    return out


def _dims_to_ints(values):
    if isinstance(values, (list, tuple)):
        return [_dims_to_ints(v) for v in values]
    if isinstance(values, Dimension):
        if values.value is None:
            raise ValueError("Cannot convert an unknown Dimension to a Tensor: ?")
        return values.value
    return values


def _cast_nested(values, dtype):
    """Casts the tensors nested in `values` to `dtype` (TF's `_cast_nested_seqs_to_dtype`)."""
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            v = _cast_nested(v, dtype)
        elif isinstance(v, Tensor) or hasattr(v, "op"):
            v = convert_to_tensor(v)
            if v.dtype.base_dtype != dtype:
                v = apply_op("Cast", v, DstT=dtype)
        out.append(v)
    return out


def _autopacking_conversion(values, dtype=None, name=None, as_ref=False):
    inferred = _nested_tensor_dtype(values)
    if dtype is None:
        dtype = inferred
    else:
        dtype = dtypes.as_dtype(dtype).base_dtype
        if dtype != inferred:
            values = _cast_nested(values, dtype)
    return _autopack(values, dtype, name or "packed")


def _dimension_list_conversion(values, dtype=None, name=None, as_ref=False):
    return constant(_dims_to_ints(values), dtype=dtype, name=name or "Const")


class _ListMatcher(type):
    """A metaclass whose classes match lists/tuples by content, so a conversion function
    applies only to the lists it can handle; other lists keep the default conversion
    (TF's converters return NotImplemented for them instead)."""

    def __instancecheck__(cls, value):
        return isinstance(value, (list, tuple)) and cls.matches(value)


class _ListWithTensors(metaclass=_ListMatcher):
    @staticmethod
    def matches(values) -> bool:
        return _nested_tensor_dtype(values) is not None


class _ListWithDimensions(metaclass=_ListMatcher):
    @staticmethod
    def matches(values) -> bool:
        return any(isinstance(v, Dimension) or isinstance(v, (list, tuple)) and
                   _ListWithDimensions.matches(v) for v in values)


register_tensor_conversion_function(_ListWithTensors, _autopacking_conversion, 99)
register_tensor_conversion_function(_ListWithDimensions, _dimension_list_conversion, 100)


# -- Python API -------------------------------------------------------------------------------
def as_shape_input(shape):
    """A shape argument as a value `apply_op` can convert: TensorShapes and Dimensions become
    ints. Raises ValueError for a partially known TensorShape (as TF does)."""
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape to a Tensor: {shape}")
        return shape.as_list()
    if isinstance(shape, Dimension):
        return _dims_to_ints(shape)
    if isinstance(shape, (list, tuple)) and any(isinstance(d, Dimension) for d in shape):
        return _dims_to_ints(shape)
    return shape


def placeholder(dtype, shape=None, name=None):
    """TF1 `tf.placeholder`: a value that must be fed."""
    return apply_op("Placeholder", dtype=dtypes.as_dtype(dtype), shape=TensorShape(shape),
                    name=name)


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TF's argument name
    """A tensor that is `input` unless fed."""
    value = convert_to_tensor(input)
    return apply_op("PlaceholderWithDefault", value, dtype=value.dtype, shape=TensorShape(shape),
                    name=name)


def identity(input, name=None):  # noqa: A002
    """Returns a tensor with the same value as `input` (an `Identity` op)."""
    return apply_op("Identity", input, name=name)


def identity_n(input, name=None):  # noqa: A002
    """Identity of a list of tensors (one `IdentityN` op)."""
    return apply_op("IdentityN", list(input), name=name)[0]


def stop_gradient(input, name=None):  # noqa: A002
    """`input`, with gradients blocked (a `StopGradient` op)."""
    return apply_op("StopGradient", input, name=name)


def guarantee_const(input, name=None):  # noqa: A002
    """`input`, promising the runtime that its value does not change over steps (a
    `GuaranteeConst` op: identity semantics, no gradient, as TF). A resource handle is
    refused with InvalidArgumentError when it runs, as TF's kernel does."""
    return apply_op("GuaranteeConst", input, name=name)


def check_numerics(tensor, message, name=None):
    """`tensor`, failing the step with InvalidArgument naming `message` on NaN or Inf."""
    return apply_op("CheckNumerics", tensor, message=message, name=name)


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802
    """TF1 `tf.Print`: forwards `input_`, printing `message` and `data` to stderr."""
    return apply_op("Print", input_, list(data), message=message, first_n=first_n,
                    summarize=summarize, name=name)


def shape(input, name=None, out_type=dtypes.int32):  # noqa: A002
    """The shape of `input`: a Const when fully known (as TF1's `shape_internal`), else Shape."""
    with OpScope(name, "Shape", [input]) as s:
        x = convert_to_tensor(input)
        if x.shape.is_fully_defined():
            return s.named(constant, x.shape.as_list(), dtypes.as_dtype(out_type))
        return s.apply("Shape", x, out_type=out_type)


def shape_n(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The shapes of the tensors in `input` (one ShapeN op)."""
    return apply_op("ShapeN", list(input), out_type=out_type, name=name)[0]


def size(input, name=None, out_type=dtypes.int32):  # noqa: A002
    """The number of elements of `input` (a Const when statically known)."""
    with OpScope(name, "Size", [input]) as s:
        x = convert_to_tensor(input)
        n = x.shape.num_elements()
        if n is None and x.shape.ndims and 0 in x.shape.as_list():
            n = 0
        if n is not None:
            return s.named(constant, n, dtypes.as_dtype(out_type))
        return s.apply("Size", x, out_type=out_type)


def rank(input, name=None):  # noqa: A002
    """The rank of `input` (a Const when statically known)."""
    with OpScope(name, "Rank", [input]) as s:
        x = convert_to_tensor(input)
        if x.shape.ndims is not None:
            return s.named(constant, x.shape.ndims, dtypes.int32)
        return s.apply("Rank", x)


def reshape(tensor, shape, name=None):
    """Reshapes `tensor` to `shape` (one entry may be -1). Raises ValueError at construction
    when both element counts are known and differ."""
    return apply_op("Reshape", tensor, as_shape_input(shape), name=name)


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    """Removes size-1 dims (`axis`, or all of them). `squeeze_dims` is the deprecated name."""
    axis = _deprecated_alias(axis, squeeze_dims, "axis", "squeeze_dims")
    if isinstance(axis, int):
        axis = [axis]
    return apply_op("Squeeze", input, squeeze_dims=list(axis or []), name=name)


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    """Inserts a size-1 dimension at `axis` (`dim` is the deprecated name)."""
    axis = _deprecated_alias(axis, dim, "axis", "dim")
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return apply_op("ExpandDims", input, axis, name=name)


def bitcast(input, type, name=None):  # noqa: A002
    """Reinterprets the bytes of `input` as `type`."""
    return apply_op("Bitcast", input, type=dtypes.as_dtype(type), name=name)


def _deprecated_alias(new, old, new_name, old_name):
    if old is not None:
        if new is not None:
            raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'")
        return old
    return new


__all__ = [
    "placeholder", "placeholder_with_default", "identity", "identity_n", "stop_gradient",
    "guarantee_const",
    "check_numerics", "Print", "shape", "shape_n", "size", "rank", "reshape", "squeeze",
    "expand_dims", "bitcast", "newaxis",
]
