"""An XLA cluster on a CPU device: the function of an `XlaLaunch` node, run compiled.

The cluster's FunctionDef (`_Arg`s, pure nodes, `_Retval`s) becomes a plan on XLA_CPU, traced
and jit-compiled by `XlaExecutable` once per input signature (shapes, dtypes and the values
of inputs feeding a shape or axis slot), its bounded LRU keeping the executables. Every
compile after the first is logged with the signature that caused it.

Unlike a device partition, a cluster's inputs are already host arrays and its results go
back to numpy kernels, so the arrays are passed to the executable as they are: jax reads
numpy arguments on its CPU device without an explicit `device_put` (measured: ~140 µs per
array through `device_put`, a few µs this way).
"""

from __future__ import annotations

import logging

import numpy as np

from tensorweave import errors, ir
from tensorweave.runtime.plan import Plan
from tensorweave.runtime.xla_executable import CACHE_SIZE, XlaExecutable

_LOG = logging.getLogger("tensorweave")


class ClusterExecutable(XlaExecutable):
    """`fn(*args) -> tuple(results)` for one `XlaLaunch` node. Thread-safe (the cache is
    locked; tracing the same signature twice at once compiles it twice, harmlessly)."""

    def __init__(self, fdef: ir.FunctionDef, node_name: str, cache_size: int = CACHE_SIZE):
        plan = Plan(ir.GraphDef(nodes=list(fdef.nodes)), "XLA_CPU", device="/device:XLA_CPU:0")
        super().__init__(plan, cache_size)
        self.node_name = node_name
        self._arg_pos = [it.attrs["index"] for it in self._inputs]
        self._ready = tuple(range(len(self._outputs)))
        self._used = tuple(range(len(self._inputs)))
        self._ret_pos = [it.attrs["index"] for it in self._outputs]
        self.signatures: list[tuple] = []

    def __call__(self, *args) -> tuple:
        values = [np.asarray(args[p]) for p in self._arg_pos]
        before = self.compiles
        fn = self._executable(self._ready, self._used, values, self._static)
        if self.compiles > before:
            self._note_compile(values)
        try:
            outs = fn(*[v for v, s in zip(values, self._static) if not s])
        except errors.OpError:
            raise
        except Exception as e:  # noqa: BLE001 - an XLA runtime failure becomes an OpError
            raise errors.InternalError(None, None, f"XLA cluster {self.node_name} failed: {e}") \
                from e
        results = [None] * len(outs)
        for pos, v in zip(self._ret_pos, outs):
            results[pos] = np.asarray(v)
        return tuple(results)

    def _note_compile(self, values) -> None:
        sig = tuple((v.dtype.name, v.shape) for v in values)
        self.signatures.append(sig)
        if self.compiles > 1:
            _LOG.info("XlaLaunch %s: recompiling for input signature %s (compile %d; %d kept)",
                      self.node_name, sig, self.compiles, self._cache_size)


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
