"""The sparse pieces feature columns need, composed from existing ops.

- `to_sparse(x, ignore)`: a dense input as a SparseTensor without its `ignore` entries (TF's
  `_to_sparse_input_and_drop_ignore_values`: `''` for strings, -1 for ints).
- `combine(params, ids, weights, combiner)`: TF's `embedding_lookup_sparse` for one row of
  ids per batch entry, with `sum`, `mean` or `sqrtn`; a row without ids gives zeros (what
  `safe_embedding_lookup_sparse` gives; ids < 0 and, for mean/sqrtn, weights <= 0 are pruned first,
  as there).
  Gathers, so its gradient is IndexedSlices.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_ops import expand_dims, reshape, shape
from tensorweave.ops.creation_ops import ones_like
from tensorweave.ops.gather_ops import gather, gather_nd, where
from tensorweave.ops.math_ops import (
    cast,
    greater,
    greater_equal,
    logical_and,
    maximum,
    multiply,
    not_equal,
    sqrt,
    square,
)
from tensorweave.ops.math_ops import divide as _divide
from tensorweave.ops.reduction_ops import unsorted_segment_sum
from tensorweave.ops.slicing_ops import strided_slice
from tensorweave.ops.sparse_tensor import SparseTensor


def ignore_value_for(dtype) -> object:
    return "" if dtype == dtypes.string else -1


def to_sparse(x, ignore=None) -> SparseTensor:
    """`x` (Tensor or SparseTensor) as a SparseTensor, dropping entries equal to `ignore`."""
    if isinstance(x, SparseTensor):
        return x
    x = convert_to_tensor(x)
    ignore = ignore_value_for(x.dtype) if ignore is None else ignore
    indices = where(not_equal(x, convert_to_tensor(ignore, dtype=x.dtype)))
    return SparseTensor(indices, gather_nd(x, indices), shape(x, out_type=dtypes.int64))


def row_ids(sp: SparseTensor):
    """The batch row of every value of a 2-D SparseTensor (int32)."""
    return cast(strided_slice(sp.indices, [0, 0], [0, 1], shrink_axis_mask=2,
                              begin_mask=1, end_mask=1), dtypes.int32)


def batch_size(sp: SparseTensor):
    return cast(strided_slice(sp.dense_shape, [0], [1], shrink_axis_mask=1), dtypes.int32)


def combine(params, ids: SparseTensor, weights: SparseTensor | None, combiner: str):
    """Per batch row, the `combiner` of `params[id]` over the row's ids (zeros if none)."""
    if combiner not in ("sum", "mean", "sqrtn"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner!r}")
    rows, n = row_ids(ids), batch_size(ids)
    # NOTE: ids < 0 (a vocabulary's default) are dropped, and unless the combiner is "sum"
    # those of weight <= 0, as safe_embedding_lookup_sparse does.
    ok = greater_equal(ids.values, 0)
    if weights is not None and combiner != "sum":
        ok = logical_and(ok, greater(weights.values, 0))
    keep = reshape(where(ok), [-1])
    values, rows = gather(ids.values, keep), gather(rows, keep)
    emb = gather(params, values)
    w = cast(gather(weights.values, keep), emb.dtype) if weights is not None else None
    if w is not None:
        emb = multiply(emb, expand_dims(w, -1))
    total = unsorted_segment_sum(emb, rows, n)
    if combiner == "sum":
        return total
    ones = w if w is not None else cast(ones_like(values), emb.dtype)
    if combiner == "mean":
        denom = unsorted_segment_sum(ones, rows, n)
    else:
        denom = sqrt(unsorted_segment_sum(square(ones), rows, n))
    # NOTE: a row without ids sums to 0, and 0 / tiny stays 0.
    return _divide(total, expand_dims(maximum(denom, 1e-30), -1))
