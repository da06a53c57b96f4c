"""An XLA cluster on a CPU device: the function of an `XlaLaunch` node, run compiled.

The cluster's FunctionDef (`_Arg`s, pure nodes, `_Retval`s) becomes a plan on XLA_CPU run by
an `XlaExecutable` (its public `run`), which traces and jit-compiles it once per input
signature (shapes, dtypes and the values of inputs feeding a shape or axis slot), its bounded
LRU keeping the executables; it logs every compile after the first with the input signature
that caused it, naming the cluster.

A cluster's inputs are host arrays and its results go back to numpy kernels; the executable
hands host arrays to jit as they are (jax's CPU device reads them in place).
"""

from __future__ import annotations

import numpy as np

from tensorweave import errors, ir
from tensorweave.runtime.plan import Plan
from tensorweave.runtime.xla_executable import CACHE_SIZE, XlaExecutable


class ClusterExecutable:
    """`exe(*args) -> tuple(results)` for one `XlaLaunch` node. Thread-safe as
    `XlaExecutable` is (its cache is locked)."""

    def __init__(self, fdef: ir.FunctionDef, node_name: str, cache_size: int = CACHE_SIZE):
        # NOTE: the plan's device names the cluster in the executable's errors and logs
        plan = Plan(ir.GraphDef(nodes=list(fdef.nodes)), "XLA_CPU",
                    device=f"XLA cluster {node_name}")
        self._exe = XlaExecutable(plan, cache_size)
        self.node_name = node_name
        self.cache_size = cache_size

    @property
    def compiles(self) -> int:
        """Compilations so far (one per input signature seen, again after an eviction)."""
        return self._exe.compiles

    def __call__(self, *args) -> tuple:
        try:
            results = self._exe.run(list(args), None)
        except errors.OpError as e:
            raise type(e)(e.node_def, e.op, f"In XLA cluster {self.node_name}: {e.message}") \
                from None
        return tuple(results)


# Shape arithmetic a cluster computes at trace time, from its members' static shapes: the
# executable folds a node whose inputs are all numpy with its CPU kernel, so on XLA these ops
# need no lowering, only a kernel that says they must be static (registered on first use, so
# a real lowering registered on import takes precedence).
TRACE_TIME_OPS = ("BroadcastGradientArgs", "ConcatOffset", "InvertPermutation",
                  "DynamicStitch", "Range")


def ensure_trace_time_kernels() -> None:
    """Registers, for each of TRACE_TIME_OPS without an XLA kernel, one that refuses
    non-static inputs, and a lowering of ShapeN. Idempotent."""
    from tensorweave.runtime.kernels.registry import has_kernel, register_kernel
    from tensorweave.runtime.kernels.xla.backend import XLA_DEVICE_TYPES

    for device_type in XLA_DEVICE_TYPES:
        for op in TRACE_TIME_OPS:
            if not has_kernel(op, device_type):
                register_kernel(op, device_type)(_static_only)
        if not has_kernel("ShapeN", device_type):
            register_kernel("ShapeN", device_type)(_shape_n)


def _static_only(node):
    def run(*inputs):
        raise errors.InvalidArgumentError(
            None, None, f"{node.op} node '{node.name}' needs inputs known when the cluster is "
                        "compiled (shapes or constants)")

    return run


def _shape_n(node):
    from tensorweave import dtypes

    dt = np.dtype(dtypes.as_dtype(node.attr("out_type")).np_dtype)
    return lambda *xs: tuple(np.array(np.shape(x), dt) for x in xs)
