"""Composite `tf.nn` functions built from other families' ops: embedding_lookup and
zero_fraction (TF's nn_impl.py / embedding_ops.py)."""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.op_scope import OpScope


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """TF1 `tf.nn.embedding_lookup`: rows `ids` of `params` (a tensor, or a list of shards
    split by `partition_strategy` "mod" or "div"), shaped ids.shape + params.shape[1:].

    A single tensor is one GatherV2 named "embedding_lookup" (+ an Identity). Shards are
    concatenated and gathered at each id's row in the concatenation; with "mod" this needs
    the shards' first dimensions to be static.

    Raises:
      ValueError: no params, an unknown strategy, or "mod" shards of unknown size.
    """
    if params is None or (isinstance(params, (list, tuple)) and not params):
        raise ValueError("Need at least one param")
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy}. Must be one "
                         f"of either `mod` or `div`.")
    shards = list(params) if isinstance(params, (list, tuple)) else [params]
    with OpScope(name, "embedding_lookup", [*shards, ids]) as s:
        shards = [convert_to_tensor(p, name="params") for p in shards]
        ids = convert_to_tensor(ids, name="ids")
        if len(shards) == 1:
            result = s.apply("GatherV2", shards[0], ids, 0)
        else:
            result = _sharded_lookup(shards, ids, partition_strategy, s)
        if max_norm is not None:
            result = _clip_rows(result, ids, max_norm)
        return apply_op("Identity", result, name="Identity")


def _gather(params, ids, name):
    return apply_op("GatherV2", params, ids, 0, name=name)


def _sharded_lookup(shards, ids, strategy: str, scope: OpScope):
    table = apply_op("ConcatV2", shards, 0, name="concat")
    if strategy == "div":
        return scope.apply("GatherV2", table, ids, 0)
    sizes = [s.shape.as_tuple()[0] if s.shape.ndims else None for s in shards]
    if None in sizes:
        raise ValueError("embedding_lookup with partition_strategy='mod' needs shards with a "
                         "static first dimension")
    offsets = [sum(sizes[:p]) for p in range(len(sizes))]
    n = len(shards)
    dt = ids.dtype.base_dtype
    shard = apply_op("FloorMod", ids, convert_to_tensor(n, dtype=dt), name="mod")
    row = apply_op("FloorDiv", ids, convert_to_tensor(n, dtype=dt), name="floordiv")
    base = _gather(convert_to_tensor(offsets, dtype=dt), shard, "GatherV2")
    return scope.apply("GatherV2", table, apply_op("AddV2", base, row, name="add"), 0)


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


def zero_fraction(value, name=None):
    """`tf.nn.zero_fraction`: the float32 fraction of zero entries of `value`."""
    with name_scope(name, "zero_fraction", [value]):
        value = convert_to_tensor(value, name="value")
        zero = convert_to_tensor(0, dtype=value.dtype.base_dtype, name="zero")
        is_zero = apply_op("Cast", apply_op("Equal", value, zero, name="Equal"),
                           DstT=dtypes.float32, name="Cast")
        flat = apply_op("Reshape", is_zero, [-1], name="Reshape")
        return apply_op("Mean", flat, [0], name="fraction")


__all__ = ["embedding_lookup", "zero_fraction"]
