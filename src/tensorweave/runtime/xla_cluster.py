"""An XLA cluster on a CPU device: the function of an `XlaLaunch` node, run compiled.

The cluster's FunctionDef (`_Arg`s, pure nodes, `_Retval`s) becomes a plan on XLA_CPU run by
an `XlaExecutable` (its public `run`), which traces and jit-compiles it once per input
signature (shapes, dtypes and the values of inputs feeding a shape or axis slot), its bounded
LRU keeping the executables. Every compile after the first is logged with the signature that
caused it.

A cluster's inputs are host arrays and its results go back to numpy kernels, and jax's CPU
device reads numpy arguments in place, so the arrays are handed to the executable as they are
instead of through `jax.device_put` (measured on the 2-core machine: ~140 µs per array that
way, against ~35 µs for a whole jitted call).
"""

from __future__ import annotations

import logging

import numpy as np

from tensorweave import errors, ir
from tensorweave.runtime.plan import Plan
from tensorweave.runtime.xla_executable import CACHE_SIZE, XlaExecutable

_LOG = logging.getLogger("tensorweave")


class _HostArrays:
    """The jax module as the executable sees it, `device_put` of a host array to the host
    CPU device left out (a no-op there: jit reads numpy arguments directly)."""

    def __init__(self, jax):
        self._jax = jax

    def __getattr__(self, name):
        return getattr(self._jax, name)

    @staticmethod
    def device_put(value, device=None):
        return value


class ClusterExecutable:
    """`exe(*args) -> tuple(results)` for one `XlaLaunch` node. Thread-safe as
    `XlaExecutable` is (its cache is locked)."""

    def __init__(self, fdef: ir.FunctionDef, node_name: str, cache_size: int = CACHE_SIZE):
        plan = Plan(ir.GraphDef(nodes=list(fdef.nodes)), "XLA_CPU", device="/device:XLA_CPU:0")
        self._exe = XlaExecutable(plan, cache_size)
        # NOTE: the executable's own jax handle; only its device_put changes (module doc)
        self._exe._jax = _HostArrays(self._exe._jax)
        self.node_name = node_name
        self.cache_size = cache_size

    @property
    def compiles(self) -> int:
        """Compilations so far (one per input signature seen, again after an eviction)."""
        return self._exe.compiles

    def __call__(self, *args) -> tuple:
        before = self._exe.compiles
        try:
            results = self._exe.run(list(args), None)
        except errors.OpError as e:
            raise type(e)(e.node_def, e.op, f"In XLA cluster {self.node_name}: {e.message}") \
                from None
        if self._exe.compiles > before > 0:
            sig = tuple((np.asarray(a).dtype.name, np.shape(a)) for a in args)
            _LOG.info("XlaLaunch %s: recompiling for input signature %s (compile %d; %d kept)",
                      self.node_name, sig, self._exe.compiles, self.cache_size)
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
