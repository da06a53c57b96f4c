"""Data-flow ops that scatter rows by index: DynamicStitch, ParallelDynamicStitch and
DynamicPartition (TF's data_flow_ops.cc), with the TF1 wrappers `dynamic_stitch`,
`parallel_dynamic_stitch` and `dynamic_partition`.

    merged[indices[m][i, ..., j], ...] = data[m][i, ..., j, ...]

TF's Sum/Mean gradients build `reduced_shape` with DynamicStitch when shapes are not static,
so GraphDefs written by TF contain it.
"""

from __future__ import annotations

import numpy as np

from tensorweave.ops.apply import apply_op
from tensorweave.ops.joining_ops import fmt, merge_dims
from tensorweave.ops.registry import register_op
from tensorweave.ops.shape_inference import constant_value, register_constant_evaluator
from tensorweave.ops.shape_tensors import small_enough
from tensorweave.shapes import TensorShape


# -- DynamicStitch, ParallelDynamicStitch -----------------------------------------------------
def _stitch_shape(ctx):
    """TF's DynamicStitchShapeFunction: [max(indices) + 1] + data[m].shape[indices[m].rank:]
    (the first dim unknown unless every `indices[m]` is a constant)."""
    n = ctx.attr("N")
    extra, max_index, all_constant = None, 0, True
    for m in range(n):
        value = ctx.constant_value(m)
        all_constant = all_constant and value is not None
        idx, data = ctx.input_dims(m), ctx.input_dims(m + n)
        if idx is None:
            continue
        if data is not None:
            if len(data) < len(idx):
                raise ctx.fail(f"Shape must be at least rank {len(idx)} but is rank "
                               f"{len(data)}")
            merge_dims(ctx, data[:len(idx)], idx)
        rest = None if data is None else data[len(idx):]
        extra = merge_dims(ctx, extra, rest)
        if value is not None and np.size(value):
            max_index = max(max_index, int(np.max(value)))
    first = max_index + 1 if all_constant else None
    return TensorShape(None) if extra is None else TensorShape((first,) + tuple(extra))


for _name in ("DynamicStitch", "ParallelDynamicStitch"):
    register_op(_name, inputs=["indices: N * int32", "data: N * T"], outputs=["merged: T"],
                attrs=["N: int >= 1", "T: type"], shape_fn=_stitch_shape)


def stitch(indices: list, data: list) -> np.ndarray:
    """The DynamicStitch result on numpy arrays (gaps are zeros; later entries win).

    Raises:
      ValueError: a data shape that does not start with its indices' shape, or whose
        remaining dims differ from data[0]'s; a negative index.
    """
    indices = [np.asarray(i) for i in indices]
    data = [np.asarray(d) for d in data]
    rest = data[0].shape[indices[0].ndim:]
    for m, (idx, d) in enumerate(zip(indices, data)):
        _check_stitch_shapes(m, idx, d, rest)
    flat = [i.reshape(-1) for i in indices]
    sizes = [int(f.max()) + 1 for f in flat if f.size]
    if any(f.size and f.min() < 0 for f in flat):
        m = next(m for m, f in enumerate(flat) if f.size and f.min() < 0)
        raise ValueError(f"indices[{m}] is out of range: {flat[m].min()} is negative")
    out = np.zeros((max(sizes, default=0),) + rest, dtype=data[0].dtype)
    for f, d in zip(flat, data):
        out[f] = d.reshape((f.size,) + rest)
    return out


def _check_stitch_shapes(m: int, idx: np.ndarray, d: np.ndarray, rest: tuple) -> None:
    if d.shape[:idx.ndim] != idx.shape:
        raise ValueError(f"data[{m}].shape = {fmt(d.shape)} does not start with "
                         f"indices[{m}].shape = {fmt(idx.shape)}")
    if d.shape[idx.ndim:] != rest:
        raise ValueError(f"Need data[{m}].shape[{idx.ndim}:] = {fmt(rest)}, got "
                         f"data[{m}].shape = {fmt(d.shape)}, indices[{m}].shape = "
                         f"{fmt(idx.shape)}")


def _stitch_value(op):
    """Static value when every input is a small constant (TF's reduced_shape on shapes)."""
    values = [constant_value(t) for t in op.inputs]
    if any(v is None for v in values) or not small_enough(sum(np.size(v) for v in values)):
        return None
    n = len(values) // 2
    return stitch(values[:n], values[n:]).astype(op.outputs[0].dtype.np_dtype)


register_constant_evaluator("DynamicStitch")(_stitch_value)
register_constant_evaluator("ParallelDynamicStitch")(_stitch_value)


# -- DynamicPartition -------------------------------------------------------------------------
def _partition_shape(ctx):
    """outputs[i].shape = [?] + data.shape[partitions.rank:] (data must start with
    partitions' shape)."""
    n = ctx.attr("num_partitions")
    data, parts = ctx.input_dims(0), ctx.input_dims(1)
    if data is None or parts is None:
        return [TensorShape(None)] * n
    if len(data) < len(parts):
        raise ctx.fail(f"Shape must be at least rank {len(parts)} but is rank {len(data)}")
    merge_dims(ctx, data[:len(parts)], parts)
    return [TensorShape((None,) + tuple(data[len(parts):]))] * n


register_op("DynamicPartition", inputs=["data: T", "partitions: int32"],
            outputs=["outputs: num_partitions * T"],
            attrs=["num_partitions: int >= 1", "T: type"], shape_fn=_partition_shape)


# -- Python API -------------------------------------------------------------------------------
def dynamic_stitch(indices, data, name=None):
    """Interleaves the rows of `data` tensors into one tensor by `indices` (DynamicStitch):
    `merged[indices[m][i, ..., j], ...] = data[m][i, ..., j, ...]`; when an index repeats,
    the last (m, i) wins.

    Example: `dynamic_stitch([[0, 2], [1]], [[10., 30.], [20.]])` → `[10., 20., 30.]`.
    """
    return apply_op("DynamicStitch", list(indices), list(data), name=name)


def parallel_dynamic_stitch(indices, data, name=None):
    """DynamicStitch whose order among repeated indices is unspecified
    (ParallelDynamicStitch)."""
    return apply_op("ParallelDynamicStitch", list(indices), list(data), name=name)


def dynamic_partition(data, partitions, num_partitions, name=None):
    """Splits `data` into `num_partitions` tensors: the rows (leading `partitions.shape`
    dims) with partitions == i go to output i, in order (DynamicPartition)."""
    return apply_op("DynamicPartition", data, partitions, num_partitions=num_partitions,
                    name=name)[0]


__all__ = ["dynamic_stitch", "dynamic_partition"]
