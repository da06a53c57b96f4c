"""CPU kernels for DynamicStitch, ParallelDynamicStitch and DynamicPartition (see
ops/stitch_ops.py)."""

from __future__ import annotations

import numpy as np

from tensorweave.ops.stitch_ops import stitch
from tensorweave.runtime.kernels.cpu.array import fmt_shape, invalid
from tensorweave.runtime.kernels.registry import register_kernel


def _stitch_kernel(node):
    n = node.attr("N")

    def run(*inputs):
        try:
            return stitch(inputs[:n], inputs[n:])
        except ValueError as e:
            raise invalid(str(e)) from None

    return run


register_kernel("DynamicStitch")(_stitch_kernel)
register_kernel("ParallelDynamicStitch")(_stitch_kernel)


@register_kernel("DynamicPartition")
def _dynamic_partition(node):
    n = node.attr("num_partitions")

    def run(data, partitions):
        data, partitions = np.asarray(data), np.asarray(partitions)
        if data.shape[:partitions.ndim] != partitions.shape:
            raise invalid(f"data.shape must start with partitions.shape, got data.shape = "
                          f"{fmt_shape(data.shape)}, partitions.shape = "
                          f"{fmt_shape(partitions.shape)}")
        flat = partitions.reshape(-1)
        bad = (flat < 0) | (flat >= n)
        if bad.any():
            i = int(np.argmax(bad))
            pos = ",".join(str(int(p)) for p in np.unravel_index(i, partitions.shape))
            raise invalid(f"partitions[{pos}] = {flat[i]} is not in [0, {n})")
        rows = data.reshape((flat.size,) + data.shape[partitions.ndim:])
        return tuple(rows[flat == i] for i in range(n))

    return run
