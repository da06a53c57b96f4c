"""Checkpoint I/O ops (TF's io_ops.cc): `SaveV2`, `RestoreV2`, `MergeV2Checkpoints`,
`ShardedFilename`, `ShardedFilespec` and `StringJoin`, which a sharded Saver's graph uses (with
`StaticRegexFullMatch`, a string op).

Op types, inputs, attrs and defaults are TensorFlow's, so the save/restore subgraph of a meta
graph written by TensorFlow runs here and ours runs there. Kernels:
`runtime/kernels/cpu/io.py` (files: `training/checkpoint/`).
"""

from __future__ import annotations

import numpy as np

from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape


# -- shape functions -------------------------------------------------------------------------
def _rank_at_most(ctx, i: int, rank: int, what: str) -> None:
    n = ctx.input_shape(i).ndims
    if n is not None and n > rank:
        raise ctx.fail(f"Shape must be rank {rank} but is rank {n} ({what})")


def _rank(ctx, i: int, rank: int, what: str) -> None:
    n = ctx.input_shape(i).ndims
    if n is not None and n != rank:
        raise ctx.fail(f"Shape must be rank {rank} but is rank {n} ({what})")


def _restore_v2_shape(ctx):
    """Outputs have unknown shapes (they come from the file); checks prefix and name ranks."""
    _rank(ctx, 0, 0, "prefix")
    _rank(ctx, 1, 1, "tensor_names")
    _rank(ctx, 2, 1, "shape_and_slices")
    n = len(ctx.attr("dtypes"))
    for i, what in ((1, "tensor_names"), (2, "shape_and_slices")):
        dims = ctx.input_dims(i)
        if dims and dims[0] is not None and dims[0] != n:
            raise ctx.fail(f"Dimension 0 in {what} must be {n} (the number of dtypes), "
                           f"but is {dims[0]}")
    return [TensorShape(None)] * n


def _sharded_filename_shape(ctx):
    for i, what in enumerate(("basename", "shard", "num_shards")[:ctx.num_inputs]):
        _rank(ctx, i, 0, what)
    return TensorShape([])


def _string_join_shape(ctx):
    """Every non-scalar input must have the same shape; the output has it (scalar if none)."""
    out = TensorShape([])
    for i in range(ctx.num_inputs):
        s = ctx.input_shape(i)
        if s.ndims == 0:
            continue
        if out.ndims == 0:
            out = s
        elif not out.is_compatible_with(s):
            raise ctx.fail(f"Shapes must be equal, but are {out} and {s}")
        else:
            out = out.merge_with(s)
    return out


# -- registrations (TF's io_ops.cc, string_ops.cc) -------------------------------------------
_NAMES = ["prefix: string", "tensor_names: string", "shape_and_slices: string"]
register_op("SaveV2", inputs=_NAMES + ["tensors: dtypes"], attrs=["dtypes: list(type) >= 1"],
            stateful=True)
register_op("RestoreV2", inputs=_NAMES, outputs=["tensors: dtypes"],
            attrs=["dtypes: list(type) >= 1"], shape_fn=_restore_v2_shape, stateful=True)
register_op("MergeV2Checkpoints",
            inputs=["checkpoint_prefixes: string", "destination_prefix: string"],
            attrs=["delete_old_dirs: bool = true", "allow_missing_files: bool = false"],
            stateful=True)
register_op("ShardedFilename", inputs=["basename: string", "shard: int32", "num_shards: int32"],
            outputs=["filename: string"], shape_fn=_sharded_filename_shape)
register_op("ShardedFilespec", inputs=["basename: string", "num_shards: int32"],
            outputs=["filename: string"], shape_fn=_sharded_filename_shape)
register_op("StringJoin", inputs=["inputs: N * string"], outputs=["output: string"],
            attrs=["N: int >= 0", "separator: string = ''"], shape_fn=_string_join_shape)


# -- Python wrappers (TF's gen_io_ops) -------------------------------------------------------
def _check_count(op: str, what: str, value, n: int) -> None:
    """Construction-time check SaveV2 cannot run as a shape function (it has no outputs)."""
    if hasattr(value, "shape") and hasattr(value, "op"):
        dims = value.shape.as_tuple()
        ok = dims is None or (len(dims) == 1 and dims[0] in (None, n))
        found = value.shape
    else:
        found = np.shape(value)
        ok = found == (n,)
    if not ok:
        raise ValueError(f"{op}: {what} must be a vector of {n} strings (one per tensor), "
                         f"got shape {found}")


def save_v2(prefix, tensor_names, shape_and_slices, tensors, name=None):
    """The `SaveV2` op: writes `tensors` as V2 checkpoint `prefix` under `tensor_names`.

    `shape_and_slices` holds "" per tensor (whole tensors). Returns the Operation.

    Raises:
      ValueError: names or slices that are not one string per tensor.
    """
    tensors = list(tensors)
    _check_count("SaveV2", "tensor_names", tensor_names, len(tensors))
    _check_count("SaveV2", "shape_and_slices", shape_and_slices, len(tensors))
    return apply_op("SaveV2", prefix, tensor_names, shape_and_slices, tensors, name=name)


def restore_v2(prefix, tensor_names, shape_and_slices, dtypes, name=None):
    """The `RestoreV2` op: one output per name, of the given dtypes (a list of Tensors)."""
    return apply_op("RestoreV2", prefix, tensor_names, shape_and_slices,
                    dtypes=list(dtypes), name=name)[0]


def merge_v2_checkpoints(checkpoint_prefixes, destination_prefix, delete_old_dirs=True,
                         allow_missing_files=False, name=None):
    """The `MergeV2Checkpoints` op: merges sharded checkpoints into `destination_prefix`."""
    return apply_op("MergeV2Checkpoints", checkpoint_prefixes, destination_prefix,
                    delete_old_dirs=delete_old_dirs, allow_missing_files=allow_missing_files,
                    name=name)


def sharded_filename(basename, shard, num_shards, name=None):
    """`basename-<shard>-of-<num_shards>` (5 digits each)."""
    return apply_op("ShardedFilename", basename, shard, num_shards, name=name)


def sharded_filespec(basename, num_shards, name=None):
    """`basename-?????-of-<num_shards>`."""
    return apply_op("ShardedFilespec", basename, num_shards, name=name)


def string_join(inputs, separator="", name=None):
    """TF1 `tf.string_join` / `tf.strings.join`: elementwise concatenation of string tensors
    (scalars broadcast)."""
    return apply_op("StringJoin", list(inputs), separator=separator, name=name)


__all__ = ["string_join"]
