"""Embedding lookups (TF's embedding_ops.py): `embedding_lookup` over one table or shards
split by `partition_strategy` "mod"/"div", `embedding_lookup_sparse` and
`safe_embedding_lookup_sparse`, built from other families' ops.

Sharded lookups partition the ids (DynamicPartition), gather from each shard and stitch the
rows back (DynamicStitch), as TF does: no op ever holds the whole table, and the gradient of
each shard is an IndexedSlices of the rows it served.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.op_scope import OpScope
from tensorweave.ops.sparse_tensor import SparseTensor
from tensorweave.shapes import TensorShape


def _shards(params) -> list:
    if params is None or (isinstance(params, (list, tuple)) and not params):
        raise ValueError("Need at least one param")
    if isinstance(params, (list, tuple)):
        return list(params)
    if hasattr(params, "_get_variable_list"):  # a PartitionedVariable
        return list(params)
    return [params]


def _check_strategy(strategy: str) -> None:
    if strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {strategy}. Must be one of either "
                         f"`mod` or `div`.")


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """TF1 `tf.nn.embedding_lookup`: rows `ids` of `params` (a tensor, or a list of shards
    split by `partition_strategy`), shaped ids.shape + params.shape[1:].

    "mod": id i lives in shard i % n at row i // n. "div": the ids are split in contiguous
    ranges, the first (total % n) shards one row longer. `max_norm` clips each row's l2 norm.

    Raises:
      ValueError: no params, or an unknown strategy.
    """
    del validate_indices
    shards = _shards(params)
    _check_strategy(partition_strategy)
    with OpScope(name, "embedding_lookup", [*shards, ids]) as s:
        ids = convert_to_tensor(ids, name="ids")
        if len(shards) == 1:
            with ids.graph.colocate_with(_op_of(shards[0])):
                result = s.apply("GatherV2", shards[0], ids, 0)
            if max_norm is not None:
                result = _clip_rows(result, ids, max_norm)
            return apply_op("Identity", result, name="Identity")
        return _sharded_lookup(shards, ids, partition_strategy, max_norm, s)


def _op_of(param):
    return getattr(param, "op", None) or convert_to_tensor(param).op


def _sharded_lookup(shards, ids, strategy, max_norm, scope):
    n = len(shards)
    flat_ids = apply_op("Reshape", ids, [-1])
    original_indices = apply_op("Range", 0, apply_op("Size", flat_ids), 1)
    assignments, new_ids = (_mod_assign if strategy == "mod" else _div_assign)(
        shards, flat_ids, n)
    assignments = apply_op("Cast", assignments, DstT=dtypes.int32)
    gather_ids = apply_op("DynamicPartition", new_ids, assignments, num_partitions=n)[0]
    pindices = apply_op("DynamicPartition", original_indices, assignments, num_partitions=n)[0]
    parts = []
    for shard, shard_ids in zip(shards, gather_ids):
        with ids.graph.colocate_with(_op_of(shard)):
            rows = apply_op("GatherV2", shard, shard_ids, 0)
            parts.append(rows if max_norm is None else _clip_rows(rows, shard_ids, max_norm))
    stitched = apply_op("DynamicStitch", pindices, parts)
    return _reshape_to_ids(stitched, shards, ids, scope)


def _mod_assign(shards, flat_ids, n):
    dt = flat_ids.dtype.base_dtype
    count = convert_to_tensor(n, dtype=dt)
    return apply_op("FloorMod", flat_ids, count), apply_op("FloorDiv", flat_ids, count)


def _div_assign(shards, flat_ids, n):
    """TF's "div" layout: ids_per = total // n; the first `extras` shards hold one more."""
    dt = flat_ids.dtype.base_dtype
    sizes = [_first_dim(p, dt) for p in shards]
    total = sizes[0] if len(sizes) == 1 else apply_op("AddN", sizes)
    count = convert_to_tensor(n, dtype=dt)
    ids_per = apply_op("FloorDiv", total, count)
    extras = apply_op("FloorMod", total, count)
    one = convert_to_tensor(1, dtype=dt)
    ids_per_plus = apply_op("AddV2", ids_per, one)
    assignments = apply_op("Maximum", apply_op("FloorDiv", flat_ids, ids_per_plus),
                           apply_op("FloorDiv", apply_op("Sub", flat_ids, extras), ids_per))
    in_extras = apply_op("Cast", apply_op("Less", assignments, extras), DstT=dt)
    new_ids = apply_op("AddV2",
                       apply_op("Mul", in_extras, apply_op("FloorMod", flat_ids, ids_per_plus)),
                       apply_op("Mul", apply_op("Sub", one, in_extras),
                                apply_op("FloorMod", apply_op("Sub", flat_ids, extras),
                                         ids_per)))
    return assignments, new_ids


def _first_dim(param, dtype):
    """The shard's row count: a constant when static, else its shape's first entry."""
    param = convert_to_tensor(param)
    dims = param.shape.as_tuple()
    if dims and dims[0] is not None:
        return convert_to_tensor(dims[0], dtype=dtype)
    first = apply_op("StridedSlice", apply_op("Shape", param), [0], [1], [1],
                     shrink_axis_mask=1)
    return apply_op("Cast", first, DstT=dtype)


def _reshape_to_ids(stitched, shards, ids, scope):
    element = TensorShape(None)
    for p in shards:
        dims = convert_to_tensor(p).shape.as_tuple()
        element = element.merge_with(TensorShape(None if dims is None else dims[1:]))
    if element.is_fully_defined():
        shape = apply_op("ConcatV2", [apply_op("Shape", ids), element.as_list()], 0)
    else:
        tail = apply_op("StridedSlice", apply_op("Shape", stitched), [1], [0], [1], end_mask=1)
        shape = apply_op("ConcatV2", [apply_op("Shape", ids), tail], 0)
    out = scope.apply("Reshape", stitched, shape)
    out.set_shape(ids.shape.concatenate(element))
    return out


def _clip_rows(result, ids, max_norm):
    """Rows clipped to l2-norm `max_norm` (TF's clip_by_norm over the embedding axes)."""
    rank, id_rank = result.shape.ndims, ids.shape.ndims
    if rank is None or id_rank is None:
        raise ValueError("embedding_lookup(max_norm=...) needs results of known rank")
    axes = list(range(id_rank, rank))
    sq = apply_op("Sum", apply_op("Square", result), axes, keep_dims=True, name="Sum")
    limit = convert_to_tensor(float(max_norm) ** 2, dtype=result.dtype.base_dtype)
    scale = apply_op("Rsqrt", apply_op("Maximum", sq, limit)) * float(max_norm)
    return apply_op("Mul", result, scale, name="clip")


# -- sparse lookups ----------------------------------------------------------------------------
_COMBINERS = ("mean", "sqrtn", "sum")


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None,
                            combiner=None, max_norm=None):
    """Per row of the SparseTensor `sp_ids` ([batch, k] ids), the `combiner` ("sum", "mean",
    "sqrtn") of the embeddings of its ids, weighted by `sp_weights` (None: weight 1).
    Returns [rows, dim] where rows is the last non-empty row + 1 (TF's segment ops).

    The unique ids are looked up once (Unique + embedding_lookup); weighted rows are summed
    with SegmentSum, unweighted ones with SparseSegmentSum/Mean/SqrtN.

    Raises:
      TypeError: sp_ids or sp_weights is not a SparseTensor.
      ValueError: an unknown combiner.
    """
    combiner = "mean" if combiner is None else combiner
    if combiner not in _COMBINERS:
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    shards = _shards(params)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError("sp_ids must be SparseTensor")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TypeError("sp_weights must be either None or SparseTensor")
    with name_scope(name, "embedding_lookup_sparse", shards + [sp_ids]) as scope:
        segment_ids = apply_op("StridedSlice", sp_ids.indices, [0, 0], [0, 1], [1, 1],
                               begin_mask=1, end_mask=1, shrink_axis_mask=2)
        segment_ids = apply_op("Cast", segment_ids, DstT=dtypes.int32)
        unique_ids, idx = apply_op("Unique", sp_ids.values)
        embeddings = embedding_lookup(shards, unique_ids, partition_strategy=partition_strategy,
                                      max_norm=max_norm)
        original = embeddings.dtype.base_dtype
        if original in (dtypes.float16, dtypes.bfloat16):
            embeddings = apply_op("Cast", embeddings, DstT=dtypes.float32)
        if sp_weights is None:
            op_type = {"sum": "SparseSegmentSum", "mean": "SparseSegmentMean",
                       "sqrtn": "SparseSegmentSqrtN"}[combiner]
            out = apply_op(op_type, embeddings, idx, segment_ids, name=scope)
        else:
            out = _weighted_combine(embeddings, idx, segment_ids, sp_weights, combiner, scope)
        if out.dtype.base_dtype != original:
            out = apply_op("Cast", out, DstT=original)
        return out


def _weighted_combine(embeddings, idx, segment_ids, sp_weights, combiner, scope):
    weights = sp_weights.values
    if weights.dtype.base_dtype != embeddings.dtype.base_dtype:
        weights = apply_op("Cast", weights, DstT=embeddings.dtype.base_dtype)
    rows = apply_op("GatherV2", embeddings, idx, 0)
    rank = rows.shape.ndims
    ones = apply_op("Fill", apply_op("ExpandDims", apply_op("Rank", rows) - 1, 0), 1)
    weights = apply_op("Reshape", weights, apply_op("ConcatV2", [apply_op("Shape", weights),
                                                                 ones], 0))
    if rank is not None:
        weights.set_shape(sp_weights.values.shape.concatenate([1] * (rank - 1)))
    rows = apply_op("Mul", rows, weights)
    if combiner == "sum":
        return apply_op("SegmentSum", rows, segment_ids, name=scope)
    total = apply_op("SegmentSum", rows, segment_ids)
    if combiner == "mean":
        return apply_op("DivNoNan", total, apply_op("SegmentSum", weights, segment_ids),
                        name=scope)
    norms = apply_op("Sqrt", apply_op("SegmentSum", apply_op("Square", weights), segment_ids))
    return apply_op("DivNoNan", total, norms, name=scope)


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner="mean", default_id=None, name=None,
                                 partition_strategy="div", max_norm=None):
    """As `embedding_lookup_sparse` for ids of any rank >= 2, dropping ids < 0 (and, unless
    combiner is "sum", weights <= 0); a row left empty gets the embedding of `default_id`, or
    zeros when it is None. Returns sparse_ids.dense_shape[:-1] + [dim].

    Raises:
      ValueError: no embedding_weights.
    """
    from tensorweave.ops import sparse_ops

    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    shards = [convert_to_tensor(w) if not hasattr(w, "op") else w
              for w in _shards(embedding_weights)]
    with name_scope(name, "embedding_lookup", shards + [sparse_ids, sparse_weights]) as scope:
        original_shape = sparse_ids.dense_shape
        rank_dim = original_shape.shape.as_tuple()
        rank = rank_dim[0] if rank_dim and rank_dim[0] is not None else None
        rank_t = rank if rank is not None else apply_op("Size", original_shape)
        outer = apply_op("Slice", original_shape, [0], apply_op("ExpandDims", rank_t - 1, 0))
        flat_shape = apply_op("Pack", [apply_op("Prod", outer, [0]),
                                       apply_op("GatherV2", original_shape, rank_t - 1, 0)])
        sparse_ids = sparse_ops.sparse_reshape(sparse_ids, flat_shape)
        if sparse_weights is not None:
            sparse_weights = SparseTensor(sparse_ids.indices, sparse_weights.values,
                                          sparse_ids.dense_shape)
        sparse_ids, sparse_weights = _prune(sparse_ids, sparse_weights, combiner)
        sparse_ids, is_row_empty = sparse_ops.sparse_fill_empty_rows(sparse_ids,
                                                                     default_id or 0)
        if sparse_weights is not None:
            sparse_weights, _ = sparse_ops.sparse_fill_empty_rows(sparse_weights, 1.0)
        result = embedding_lookup_sparse(shards, sparse_ids, sparse_weights, combiner=combiner,
                                         partition_strategy=partition_strategy,
                                         name=None if default_id is None else scope,
                                         max_norm=max_norm)
        if default_id is None:
            result = _zero_empty_rows(result, is_row_empty, scope)
        return _unflatten(result, original_shape, rank, rank_t)


def _prune(sparse_ids, sparse_weights, combiner):
    """Drops ids < 0, and unless combiner is "sum" entries whose weight is <= 0."""
    from tensorweave.ops import sparse_ops

    valid = apply_op("GreaterEqual", sparse_ids.values,
                     convert_to_tensor(0, dtype=sparse_ids.values.dtype.base_dtype))
    sparse_ids = sparse_ops.sparse_retain(sparse_ids, valid)
    if sparse_weights is None:
        return sparse_ids, None
    sparse_weights = sparse_ops.sparse_retain(sparse_weights, valid)
    if combiner != "sum":
        positive = apply_op("Greater", sparse_weights.values,
                            convert_to_tensor(0, dtype=sparse_weights.values.dtype.base_dtype))
        sparse_ids = sparse_ops.sparse_retain(sparse_ids, positive)
        sparse_weights = sparse_ops.sparse_retain(sparse_weights, positive)
    return sparse_ids, sparse_weights


def _zero_empty_rows(result, is_row_empty, scope):
    width = apply_op("StridedSlice", apply_op("Shape", result), [1], [2], [1],
                     shrink_axis_mask=1)
    mask = apply_op("Tile", apply_op("Reshape", is_row_empty, [-1, 1]),
                    apply_op("Pack", [1, width]))
    return apply_op("Select", mask, apply_op("ZerosLike", result), result, name=scope)


def _unflatten(result, original_shape, rank, rank_t):
    outer = apply_op("Slice", apply_op("Cast", original_shape, DstT=dtypes.int32), [0],
                     apply_op("ExpandDims", rank_t - 1, 0))
    tail = apply_op("Slice", apply_op("Shape", result), [1], [-1])
    out = apply_op("Reshape", result, apply_op("ConcatV2", [outer, tail], 0))
    lead = TensorShape(None) if rank is None else TensorShape([None] * (rank - 1))
    dims = result.shape.as_tuple()
    out.set_shape(lead.concatenate(TensorShape(None if dims is None else dims[1:])))
    return out


__all__ = ["embedding_lookup", "embedding_lookup_sparse", "safe_embedding_lookup_sparse"]
