"""Array ops that take parts of a tensor: Slice, StridedSlice (and `Tensor.__getitem__`),
Split, SplitV and Unpack, with the TF1 wrappers `slice`, `strided_slice`, `split`, `unstack`.

`x[...]` builds one StridedSlice with TF's masks, exactly as TF's `_slice_helper` does, and
its static shape is exact whenever the input shape and the indices are known.
"""

from __future__ import annotations

import builtins

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.joining_ops import stack, with_rank
from tensorweave.ops.op_scope import OpScope
from tensorweave.ops.registry import register_op
from tensorweave.ops.shape_inference import constant_value, register_constant_evaluator
from tensorweave.ops.shape_tensors import strided_pick
from tensorweave.ops.strided_slice_spec import StridedSliceError, validate
from tensorweave.shapes import Dimension, TensorShape

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


# -- Slice ------------------------------------------------------------------------------------
def _slice_shape(ctx):
    b_dims = with_rank(ctx, ctx.input_dims(1), 1)
    s_dims = with_rank(ctx, ctx.input_dims(2), 1)
    n = b_dims[0] if b_dims[0] is not None else s_dims[0]
    dims = ctx.input_dims(0)
    if n is not None:
        dims = with_rank(ctx, dims, n)
    begin, size = ctx.constant_value(1), ctx.constant_value(2)
    if size is None:
        return TensorShape(None if dims is None else [None] * len(dims))
    size = np.reshape(size, [-1]).tolist()
    dims = with_rank(ctx, dims, len(size))
    begin = None if begin is None else np.reshape(begin, [-1]).tolist()
    return TensorShape([_slice_dim(ctx, i, d, begin, s) for i, (d, s) in enumerate(zip(dims,
                                                                                       size))])


def _slice_dim(ctx, i, d, begin, s):
    b = None if begin is None else begin[i]
    if d is not None and b is not None and not 0 <= b <= d:
        raise ctx.fail(f"Expected begin[{i}] in [0, {d}], but got {b}")
    if s == -1:
        return None if d is None or b is None else d - b
    if s < -1 or (d is not None and b is not None and b + s > d):
        hi = "?" if d is None or b is None else d - b
        raise ctx.fail(f"Expected size[{i}] in [0, {hi}], but got {s}")
    return s


register_op("Slice", inputs=["input: T", "begin: Index", "size: Index"], outputs=["output: T"],
            attrs=["T: type", "Index: {int32, int64}"], shape_fn=_slice_shape)


def slice_index(begin, size, shape) -> tuple:
    """Slice's numpy index. Raises ValueError (TF's messages) when out of bounds."""
    out = []
    for i, (b, s, d) in enumerate(zip(begin, size, shape)):
        if not 0 <= b <= d:
            raise ValueError(f"Expected begin[{i}] in [0, {d}], but got {b}")
        if s == -1:
            s = d - b
        if not 0 <= s <= d - b:
            raise ValueError(f"Expected size[{i}] in [0, {d - b}], but got {s}")
        out.append(builtins.slice(b, b + s))
    return tuple(out)


@register_constant_evaluator("Slice")
def _slice_value(op):
    value, begin, size = (constant_value(t) for t in op.inputs)
    if value is None or begin is None or size is None:
        return None
    return value[slice_index(begin.tolist(), size.tolist(), value.shape)]


# -- StridedSlice -----------------------------------------------------------------------------
def _strided_slice_shape(ctx):
    lens = [with_rank(ctx, ctx.input_dims(i), 1)[0] for i in (1, 2, 3)]
    known = {n for n in lens if n is not None}
    if len(known) > 1:
        raise ctx.fail(f"Dimensions must be equal, but are {min(known)} and {max(known)}")
    dims = ctx.input_dims(0)
    strides = ctx.constant_value(3)
    if dims is None or strides is None:
        return TensorShape(None)
    begin, end = ctx.constant_value(1), ctx.constant_value(2)
    try:
        dense = validate(_as_list(begin), _as_list(end), _as_list(strides), dims,
                         **{k: ctx.attr(k) for k in _MASKS})
    except StridedSliceError as e:
        raise ctx.fail(str(e)) from None
    return TensorShape(dense.final_shape)


def _as_list(v):
    return None if v is None else np.reshape(v, [-1]).tolist()


register_op("StridedSlice",
            inputs=["input: T", "begin: Index", "end: Index", "strides: Index"],
            outputs=["output: T"],
            attrs=["T: type", "Index: {int32, int64}"] + [f"{m}: int = 0" for m in _MASKS],
            shape_fn=_strided_slice_shape)


@register_constant_evaluator("StridedSlice")
def _strided_slice_value(op):
    spec = [constant_value(t) for t in op.inputs[1:]]
    if any(s is None for s in spec):
        return None
    value = constant_value(op.inputs[0])
    if value is None:
        return _partial_shape_slice(op)
    dense = validate(*[_as_list(s) for s in spec], value.shape,
                     **{k: op.get_attr(k) for k in _MASKS})
    return np.asarray(value[dense.index])


def _partial_shape_slice(op):
    """Entries picked out of a partly known shape vector (`tf.shape(x)[1]`) when all known."""
    picked = strided_pick(op)
    if picked is None or not all(isinstance(p, int) for p in picked):
        return None
    out = np.array(picked, dtype=op.outputs[0].dtype.np_dtype)
    return out.reshape(()) if op.get_attr("shrink_axis_mask") & 1 else out


# -- Split, SplitV ----------------------------------------------------------------------------
def _scalar_axis(ctx, i, rank):
    value = ctx.constant_value(i)
    if value is None:
        return None
    axis = int(value)
    if rank is not None and not -rank <= axis < rank:
        raise ctx.fail(f"Dimension size, given by scalar input {i} must be in range "
                       f"[{-rank}, {rank})")
    return axis + rank if rank is not None and axis < 0 else axis


def _split_shape(ctx):
    dims = ctx.input_dims(1)
    n = ctx.attr("num_split")
    axis = _scalar_axis(ctx, 0, None if dims is None else len(dims))
    if axis is None or dims is None:
        out = TensorShape(None if dims is None else [None] * len(dims))
        return [out] * n
    d = dims[axis]
    if d is not None and d % n:
        raise ctx.fail(f"Dimension size must be evenly divisible by {n} but is {d}\n\t"
                       f"Number of ways to split should evenly divide the split dimension")
    part = None if d is None else d // n
    return [TensorShape(dims[:axis] + (part,) + dims[axis + 1:])] * n


def _split_v_shape(ctx):
    dims = ctx.input_dims(0)
    n = ctx.attr("num_split")
    if dims is None:
        return [TensorShape(None)] * n
    if not dims:
        raise ctx.fail("Can't split scalars")
    axis = _scalar_axis(ctx, 2, len(dims))
    sizes = ctx.constant_value(1)
    if axis is None:
        return [TensorShape([None] * len(dims))] * n
    if sizes is None:
        return [TensorShape(dims[:axis] + (None,) + dims[axis + 1:])] * n
    sizes = np.reshape(sizes, [-1]).tolist()
    return [TensorShape(dims[:axis] + (s,) + dims[axis + 1:])
            for s in _split_sizes(ctx, sizes, dims[axis], n)]


def _split_sizes(ctx, sizes, d, n):
    if len(sizes) != n:
        raise ctx.fail("Length of size_splits should be equal to num_outputs")
    if sizes.count(-1) > 1:
        raise ctx.fail("size_splits can only have one -1")
    total = sum(s for s in sizes if s != -1)
    if d is not None and (total > d if -1 in sizes else total != d):
        raise ctx.fail(f"can't split axis of size {d} into pieces of size "
                       f"[{','.join(map(str, sizes))}]")
    return [(d - total if d is not None else None) if s == -1 else s for s in sizes]


register_op("Split", inputs=["split_dim: int32", "value: T"], outputs=["output: num_split * T"],
            attrs=["num_split: int >= 1", "T: type"], shape_fn=_split_shape)
register_op("SplitV", inputs=["value: T", "size_splits: Tlen", "split_dim: int32"],
            outputs=["output: num_split * T"],
            attrs=["num_split: int >= 1", "T: type", "Tlen: {int8, int32, int64} = DT_INT64"],
            shape_fn=_split_v_shape)


# -- Unpack -----------------------------------------------------------------------------------
def _unpack_shape(ctx):
    dims = ctx.input_dims(0)
    num = ctx.attr("num")
    if dims is None:
        return [TensorShape(None)] * num
    rank, axis = len(dims), ctx.attr("axis")
    if not -rank <= axis < rank:
        raise ctx.fail(f"Invalid axis: {axis}; must be in [{-rank},{rank})")
    axis %= rank
    if dims[axis] is not None and dims[axis] != num:
        raise ctx.fail(f"Dimension must be {num} but is {dims[axis]}")
    return [TensorShape(dims[:axis] + dims[axis + 1:])] * num


register_op("Unpack", inputs=["value: T"], outputs=["output: num * T"],
            attrs=["num: int >= 0", "T: type", "axis: int = 0"], shape_fn=_unpack_shape)


# -- Python API -------------------------------------------------------------------------------
def slice(input_, begin, size, name=None):  # noqa: A001 - TF's name
    """Extracts `size` elements starting at `begin` (size -1 means 'to the end')."""
    return apply_op("Slice", input_, begin, size, name=name)


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """TF's StridedSlice (see `Tensor.__getitem__` for the friendlier form). `var` is
    accepted for TF compatibility; sliced assignment lives with variables."""
    del var
    if strides is None:
        from tensorweave.ops.creation_ops import ones_like

        strides = ones_like(begin)
    return apply_op("StridedSlice", input_, begin, end, strides, begin_mask=begin_mask,
                    end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                    new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask, name=name)


_SLICE_TYPE_ERROR = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
                     "scalar tf.int32/tf.int64 tensors are valid indices")
_INDEX_DTYPES = (dtypes.int32, dtypes.int64)


def _check_index(idx) -> None:
    if isinstance(idx, (int, np.integer, Dimension)) and not isinstance(idx, bool):
        return
    dtype = getattr(idx, "dtype", None)
    ok = dtype is not None and dtypes.as_dtype(dtype).base_dtype in _INDEX_DTYPES
    if not ok or getattr(idx, "shape", None) is not None and _rank(idx) == 1:
        raise TypeError(f"{_SLICE_TYPE_ERROR}, got {idx!r}")


def _rank(idx):
    shape = idx.shape
    return shape.ndims if isinstance(shape, TensorShape) else len(shape)


def _index_value(v):
    return v.value if isinstance(v, Dimension) else v


def slice_helper(tensor, slice_spec, var=None):
    """`tensor[slice_spec]` as TF's `_slice_helper` builds it: one StridedSlice named
    "strided_slice" whose begin/end/strides are packed from the spec (bool masks become a
    boolean_mask)."""
    if _is_bool_mask(slice_spec):
        from tensorweave.ops.gather_ops import boolean_mask

        return boolean_mask(tensor, slice_spec)
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = [slice_spec]
    begin, end, strides, masks = _sparse_spec(slice_spec)
    with OpScope(None, "strided_slice", [tensor] + begin + end + strides) as s:
        if begin:
            dtype = _index_dtype(begin + end + strides)
            packed = [stack(v) if dtype is None else _stack_as(v, dtype)
                      for v in (begin, end, strides)]
        else:
            empty = convert_to_tensor(np.zeros([0], np.int32))
            packed = [empty] * 3
        return s.named(strided_slice, tensor, *packed, var=var, **masks)


def _is_bool_mask(spec) -> bool:
    if isinstance(spec, bool):
        return True
    if isinstance(spec, Tensor):
        return spec.dtype.base_dtype == dtypes.bool_
    return isinstance(spec, np.ndarray) and spec.dtype == np.bool_


def _sparse_spec(slice_spec):
    begin, end, strides = [], [], []
    masks = dict.fromkeys(_MASKS, 0)
    for index, s in enumerate(slice_spec):
        bit = 1 << index
        if isinstance(s, builtins.slice):
            _add_range(s, bit, begin, end, strides, masks)
        elif s is Ellipsis or s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks["ellipsis_mask" if s is Ellipsis else "new_axis_mask"] |= bit
        else:
            _check_index(s)
            s = _index_value(s)
            begin.append(s)
            end.append(s + 1)
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
    return begin, end, strides, masks


def _add_range(s, bit, begin, end, strides, masks) -> None:
    for value, out, mask in ((s.start, begin, "begin_mask"), (s.stop, end, "end_mask")):
        if value is not None:
            _check_index(value)
            out.append(_index_value(value))
        else:
            out.append(0)
            masks[mask] |= bit
    if s.step is not None:
        _check_index(s.step)
        strides.append(_index_value(s.step))
    else:
        strides.append(1)


def _index_dtype(values):
    """int64 when any index tensor is int64 (TF then casts all three to int64), else None."""
    for v in values:
        if isinstance(v, Tensor) and v.dtype.base_dtype == dtypes.int64:
            return dtypes.int64
    return None


def _stack_as(values, dtype):
    return convert_to_tensor(values, dtype=dtype, name="stack")


Tensor._override_operator("__getitem__", slice_helper)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits `value` along `axis` into `num_or_size_splits` equal parts (Split) or parts of
    the given sizes (SplitV). Returns a list of tensors."""
    if isinstance(num_or_size_splits, (int, np.integer, Dimension)) and \
            not isinstance(num_or_size_splits, bool):
        return apply_op("Split", axis, value, num_split=int(_index_value(num_or_size_splits)),
                        name=name)[0]
    size_splits = convert_to_tensor(num_or_size_splits)
    if size_splits.shape.ndims == 0:
        raise ValueError(f"Rank-0 tensors are not supported as the num_or_size_splits argument "
                         f"to split. Argument provided: {num_or_size_splits}")
    if num is None:
        dims = size_splits.shape.as_tuple()
        num = dims[0] if dims else None
        if num is None:
            raise ValueError(f"Cannot infer num from shape {num_or_size_splits}")
    return apply_op("SplitV", value, size_splits, axis, num_split=num, name=name)[0]


def unstack(value, num=None, axis=0, name="unstack"):
    """Unpacks the `axis` dimension of `value` into a list of `num` tensors."""
    value = convert_to_tensor(value)
    shape = value.shape
    if shape.ndims is not None and not -shape.ndims <= axis < shape.ndims:
        raise ValueError(f"axis = {axis} not in [{-shape.ndims}, {shape.ndims})")
    if num is None:
        num = None if shape.ndims is None else shape.as_list()[axis]
        if num is None:
            raise ValueError(f"Cannot infer num from shape {shape}")
    return apply_op("Unpack", value, num=num, axis=axis, name=name)[0]


unpack = unstack


__all__ = ["slice", "strided_slice", "split", "unstack", "unpack", "slice_helper"]
