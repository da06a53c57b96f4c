"""`tf.ragged`: `constant` / `constant_value` from nested Python lists, `placeholder`, and
`map_flat_values` (ops/ragged_tensor.py has the RaggedTensor itself)."""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.ragged_tensor import RaggedTensor, RaggedTensorValue
from tensorweave.shapes import TensorShape


def _depth(x) -> int:
    if isinstance(x, (list, tuple)):
        return 1 + max((_depth(v) for v in x), default=0)
    return 0


def _split_levels(pylist, ragged_rank: int):
    """(row splits per ragged level, outermost first; the items below the last level)."""
    splits, level = [], list(pylist)
    for _ in range(ragged_rank):
        bounds, items = [0], []  # type: list[int], list
        for row in level:
            if not isinstance(row, (list, tuple)):
                raise ValueError(f"ragged.constant: all scalar values must have the same "
                                 f"nesting depth; found {row!r} above depth {ragged_rank}")
            items.extend(row)
            bounds.append(len(items))
        splits.append(np.array(bounds, np.int64))
        level = items
    return splits, level


def _flat_array(items, dtype, inner_shape) -> np.ndarray:
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if not items:
        np_dtype = object if dtype == dtypes.string else \
            (dtype.np_dtype if dtype is not None else np.float32)
        return np.zeros((0,) + tuple(inner_shape or ()), np_dtype)
    arr = np.array(items, dtype=object if dtype == dtypes.string else None)
    if arr.dtype.kind in "US":
        arr = np.array([v.encode() if isinstance(v, str) else v for v in arr.reshape(-1)],
                       dtype=object).reshape(arr.shape)
    if dtype is not None and dtype != dtypes.string:
        return arr.astype(dtype.np_dtype)
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    if arr.dtype == np.int64:
        return arr.astype(np.int32)
    return arr


def _levels(pylist, dtype, ragged_rank, inner_shape):
    depth = _depth(pylist)
    if ragged_rank is None:
        ragged_rank = max(1, depth - 1 - len(inner_shape or ()))
    if depth <= ragged_rank:
        raise ValueError(f"ragged.constant: ragged_rank={ragged_rank} needs nesting deeper "
                         f"than {ragged_rank}; the value is nested {depth} deep")
    splits, items = _split_levels(pylist, ragged_rank)
    return splits, _flat_array(items, dtype, inner_shape)


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None,
             row_splits_dtype=dtypes.int64) -> RaggedTensor:
    """A RaggedTensor of constants from nested lists: `ragged_rank` ragged dimensions
    (default: all but the innermost, less `inner_shape`'s), uniform ones below.

    Raises:
      ValueError: inconsistent nesting, or a `ragged_rank` the value is not deep enough for.
    """
    with name_scope(name, "RaggedConstant"):
        splits, flat = _levels(pylist, dtype, ragged_rank, inner_shape)
        values = convert_to_tensor(flat, dtype=dtype)
        for s in reversed(splits):
            values = RaggedTensor.from_row_splits(values, s, validate=False)
        return values


def constant_value(pylist, dtype=None, ragged_rank=None, inner_shape=None,
                   row_splits_dtype="int64") -> RaggedTensorValue:
    """The RaggedTensorValue of nested lists (no graph)."""
    splits, values = _levels(pylist, dtype, ragged_rank, inner_shape)
    for s in reversed(splits):
        values = RaggedTensorValue(values, s)
    return values


def placeholder(dtype, ragged_rank, value_shape=None, name=None) -> RaggedTensor:
    """A RaggedTensor fed as a RaggedTensorValue of the same ragged_rank: placeholders for
    its flat values (`[None] + value_shape`) and each level's row splits."""
    with name_scope(name, "RaggedPlaceholder"):
        inner = [None] + list(TensorShape(value_shape or []).as_list())
        out = apply_op("Placeholder", dtype=dtypes.as_dtype(dtype), shape=TensorShape(inner),
                       name="flat_values")
        for i in reversed(range(ragged_rank)):
            splits = apply_op("Placeholder", dtype=dtypes.int64, shape=TensorShape([None]),
                              name=f"row_splits_{i}")
            out = RaggedTensor.from_row_splits(out, splits, validate=False)
        return out


def map_flat_values(op, *args, **kwargs):
    """`op` applied to the flat values of the RaggedTensor arguments (others pass through),
    the result given their (shared) row partition. Raises ValueError when the ragged
    arguments' partitions are not the same tensors, or none is ragged."""
    ragged = [a for a in list(args) + list(kwargs.values()) if isinstance(a, RaggedTensor)]
    if not ragged:
        raise ValueError("map_flat_values needs at least one RaggedTensor argument")
    splits = ragged[0].nested_row_splits
    for r in ragged[1:]:
        if len(r.nested_row_splits) != len(splits) or any(
                a is not b for a, b in zip(r.nested_row_splits, splits)):
            raise ValueError("map_flat_values: the RaggedTensor arguments must have the same "
                             "row partitions (the same row_splits tensors)")

    def flat(x):
        return x.flat_values if isinstance(x, RaggedTensor) else x

    out = op(*[flat(a) for a in args], **{k: flat(v) for k, v in kwargs.items()})
    return ragged[0].with_flat_values(out)


__all__ = ["constant", "constant_value", "placeholder", "map_flat_values"]
