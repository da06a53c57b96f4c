"""Gradients of the data-flow ops that scatter rows by index (TF's data_flow_grad.py).

    DynamicStitch / ParallelDynamicStitch:  d data[m] = gather(grad, indices[m])
    DynamicPartition:                       d data = stitch(partition(positions), grads)

As in TF, a row written twice by DynamicStitch passes the gradient to both data entries.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.autodiff.registry import RegisterGradient
from tensorweave.ops.apply import apply_op
from tensorweave.ops.indexed_slices import IndexedSlices, densify

_op = apply_op


@RegisterGradient("DynamicStitch")
@RegisterGradient("ParallelDynamicStitch")
def _dynamic_stitch_grad(op, grad):
    n = len(op.inputs) // 2
    if isinstance(grad, IndexedSlices):
        grad = densify(grad)
    indices = [op.inputs[i] for i in range(n)]
    if indices[0].dtype != dtypes.int32:
        indices = [_op("Cast", i, DstT=dtypes.int32) for i in indices]
    return [None] * n + [_op("GatherV2", grad, i, 0) for i in indices]


@RegisterGradient("DynamicPartition")
def _dynamic_partition_grad(op, *grads):
    data, partitions = op.inputs
    prefix_shape = _op("Shape", partitions)
    positions = _op("Reshape", _op("Range", 0, _op("Prod", prefix_shape, 0), 1), prefix_shape)
    parts = _op("DynamicPartition", positions, partitions,
                num_partitions=op.get_attr("num_partitions"))[0]
    grads = [densify(g) if isinstance(g, IndexedSlices) else g for g in grads]
    stitched = _op("ParallelDynamicStitch", parts, grads)
    return [_op("Reshape", stitched, _op("Shape", data)), None]
