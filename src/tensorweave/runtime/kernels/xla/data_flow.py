"""Lowerings of the per-step containers while loops use: stacks (StackV2 family, the
gradient's saved forward values) and TensorArrays (TensorArrayV3 family: dynamic_rnn, scan).

Inside a trace a handle is a `TraceResource`: fixed-size jax buffers (`leaves`) that the
loops touching it carry through `lax.while_loop` (runtime/xla_control_flow.py), as TF's XLA
bridge lowers them (tf2xla's stack_ops.cc and tensor_array_ops.cc):
- a stack is a `[max_size, *element]` buffer and a position. `max_size` is the StackV2 input
  when positive, else the product of the static trip-count bounds of the loops between the
  stack's creation and its pushes (TF's "maximum_iterations" rule); a stack no bound sizes is
  an error (the placer keeps such loops on the CPU);
- a TensorArray is a `[size, *element]` buffer (size must be static; `dynamic_size` arrays
  stay on the CPU). Reads of unwritten elements give zeros, `clear_after_read` is ignored and
  a gradient array sums its writes, as tf2xla does.

An element shape unknown until the first push/write inside a loop is found by tracing the
loop body once abstractly (`discovering`): the push records the shape, and the loop runner
allocates the buffer before tracing the loop for real. Index checks need concrete indices:
a traced out-of-range index is clamped (XLA's dynamic-slice rule), not an error.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.xla.backend import jax_modules
from tensorweave.runtime.kernels.xla.lower import register_lowering

_FLOW = np.float32(0.0)
# the static trip-count bounds (None: unknown) of the loops being traced, outermost first
_ACTIVE = threading.local()


def active_bounds() -> list:
    """The bounds of the loops now being traced (a per-thread list the loop runner pushes to
    and pops from)."""
    if not hasattr(_ACTIVE, "bounds"):
        _ACTIVE.bounds = []
    return _ACTIVE.bounds


def _err(msg: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, msg)


def _concrete_int(v, what: str) -> int:
    if not isinstance(v, (np.ndarray, np.generic, int)):
        raise errors.UnimplementedError(
            None, None, f"{what} must be known when the XLA executable is compiled (a "
                        "constant or computed from shapes); it is computed at run time")
    if np.ndim(v) != 0:
        raise _err(f"{what} must be a scalar, got shape {list(np.shape(v))}")
    return int(v)


class TraceResource:
    """A per-step container inside a trace. `buf` is None until its element shape is known;
    `discovering` (set by the loop runner) makes writes record the shape instead."""

    def __init__(self, name: str, dtype):
        self.name = name
        self.dtype = np.dtype(dtype)
        self.buf: Any = None
        self.depth = len(active_bounds())   # loops around its creation
        self.discovering = False
        self.found: tuple | None = None     # (rows, element shape) seen while discovering

    def leaves(self) -> list:
        return [] if self.buf is None else [self.buf]

    def set_leaves(self, values: list) -> None:
        if self.buf is not None:
            self.buf = values[0]

    def children(self) -> list:
        return []

    def snapshot(self) -> tuple:
        return (self.buf, getattr(self, "pos", None), self.discovering)

    def restore(self, snap: tuple) -> None:
        self.buf, pos, self.discovering = snap
        if pos is not None:
            self.pos = pos

    def allocate(self) -> None:
        """Allocates the buffer found while discovering (zeros)."""
        if self.buf is None and self.found is not None:
            _, jnp, _ = jax_modules()
            rows, shape = self.found
            self.buf = jnp.zeros((rows,) + tuple(shape), self.dtype)

    def _first(self, value, rows: int) -> bool:
        """Handles a write to a buffer not yet allocated: records it while discovering
        (returns True: nothing to write) or allocates the buffer now."""
        if self.discovering:
            self.found = (rows, tuple(np.shape(value)))
            return True
        self.found = (rows, tuple(np.shape(value)))
        self.allocate()
        return False


class TraceStack(TraceResource):
    """A stack: `buf[:pos]` are the pushed values."""

    def __init__(self, name: str, dtype, max_size: int):
        super().__init__(name, dtype)
        self.max_size = max_size
        self.pos = np.int32(0)

    def leaves(self) -> list:
        return [] if self.buf is None else [self.buf, self.pos]

    def set_leaves(self, values: list) -> None:
        if self.buf is not None:
            self.buf, self.pos = values

    def _rows(self) -> int:
        if self.max_size > 0:
            return self.max_size
        if not active_bounds()[self.depth:]:
            raise errors.UnimplementedError(
                None, None, f"Stack {self.name}: pushed outside a loop, it needs a positive "
                            "max_size on an XLA device")
        rows = 1
        for b in active_bounds()[self.depth:]:
            if b is None:
                raise errors.UnimplementedError(
                    None, None, f"Stack {self.name} (a while loop's gradient) needs a size "
                                "known at compile time, and a loop it is pushed in has no "
                                "static trip count: give tf.while_loop a maximum_iterations, "
                                "or place the loop on a CPU")
            rows *= b
        return rows

    def push(self, value) -> None:
        _, jnp, lax = jax_modules()
        if self.buf is None and self._first(value, self._rows()):
            return
        v = jnp.asarray(value, self.dtype)
        self.buf = lax.dynamic_update_index_in_dim(self.buf, v, self.pos, 0)
        self.pos = self.pos + np.int32(1)

    def pop(self):
        _, jnp, lax = jax_modules()
        if self.buf is None:
            if self.discovering and self.found is not None:
                return jnp.zeros(self.found[1], self.dtype)
            raise _err(f"Stack[{self.name}] is empty when calling Pop().")
        self.pos = self.pos - np.int32(1)
        return lax.dynamic_index_in_dim(self.buf, self.pos, 0, keepdims=False)


class TraceTensorArray(TraceResource):
    """A TensorArray of `size` elements; `aggregate` (a gradient array) sums writes."""

    def __init__(self, name: str, dtype, size: int, element_shape, aggregate=False):
        super().__init__(name, dtype)
        self.size = size
        self.aggregate = aggregate
        self.grads: dict[str, TraceTensorArray] = {}
        if element_shape is not None and None not in element_shape:
            self.found = (size, tuple(element_shape))
            self.allocate()

    def children(self) -> list:
        return list(self.grads.values())

    def element_shape(self):
        if self.buf is not None:
            return tuple(self.buf.shape[1:])
        return None if self.found is None else self.found[1]

    def grad(self, source: str) -> TraceTensorArray:
        """The gradient array for `source` (the same one on every call)."""
        g = self.grads.get(source)
        if g is None:
            g = self.grads[source] = TraceTensorArray(
                f"{self.name}@{source}", self.dtype, self.size, self.element_shape(),
                aggregate=True)
        return g

    def write(self, index, value) -> None:
        _, jnp, lax = jax_modules()
        if self.buf is None and self._first(value, self.size):
            return
        self._check_shape(value)
        v = jnp.asarray(value, self.dtype)
        if self.aggregate:
            v = v + lax.dynamic_index_in_dim(self.buf, index, 0, keepdims=False)
        self.buf = lax.dynamic_update_index_in_dim(self.buf, v, index, 0)

    def _check_shape(self, value) -> None:
        if tuple(np.shape(value)) != tuple(self.buf.shape[1:]):
            raise _err(f"Could not write to TensorArray {self.name} because the value shape "
                       f"is {list(np.shape(value))} which is incompatible with the "
                       f"TensorArray's element shape: {list(self.buf.shape[1:])}")

    def _buffer(self):
        _, jnp, _ = jax_modules()
        if self.buf is None:
            if self.found is not None and self.discovering:
                return jnp.zeros((self.size,) + self.found[1], self.dtype)
            self.allocate()
        if self.buf is None:
            raise _err(f"TensorArray {self.name}: Could not read from TensorArray because it "
                       "has not yet been written to and the element shape is not fully "
                       "defined.")
        return self.buf

    def read(self, index):
        _, _, lax = jax_modules()
        return lax.dynamic_index_in_dim(self._buffer(), index, 0, keepdims=False)

    def gather(self, indices):
        _, jnp, _ = jax_modules()
        buf = self._buffer()
        if _is_all(indices, self.size):
            return buf
        return jnp.take(buf, jnp.asarray(indices), axis=0, mode="clip")

    def scatter(self, indices, value) -> None:
        _, jnp, _ = jax_modules()
        if np.ndim(indices) != 1 or np.ndim(value) < 1 or \
                np.shape(value)[0] != np.shape(indices)[0]:
            raise _err(f"Expected indices to be a vector and len(indices) == "
                       f"values.shape[0], but saw indices {list(np.shape(indices))}, values "
                       f"{list(np.shape(value))}")
        if self.buf is None and self._first(value[0], self.size):
            return
        self._check_shape(value[0])
        v = jnp.asarray(value, self.dtype)
        if _is_all(indices, self.size):
            self.buf = self.buf + v if self.aggregate else v
            return
        at = self.buf.at[jnp.asarray(indices)]
        self.buf = at.add(v) if self.aggregate else at.set(v)


def _is_all(indices, size: int) -> bool:
    """Whether `indices` is the concrete vector 0..size-1."""
    return isinstance(indices, (np.ndarray, np.generic)) and np.ndim(indices) == 1 and \
        np.array_equal(indices, np.arange(size))


def _handle(v, kind, name: str):
    if not isinstance(v, kind):
        raise _err(f"{name}: expected a handle made on this XLA device, got "
                   f"{type(v).__name__}")
    return v


# -- stacks --------------------------------------------------------------------------------------
@register_lowering("StackV2")
def _stack(node):
    dt = node.attr("elem_type").np_dtype
    name = node.attr("stack_name") or node.name
    return lambda max_size: TraceStack(name, dt, _concrete_int(max_size, "A stack's max_size"))


@register_lowering("StackPushV2")
def _push(node):
    def run(handle, elem):
        _handle(handle, TraceStack, node.name).push(elem)
        return elem

    return run


@register_lowering("StackPopV2")
def _pop(node):
    return lambda handle: _handle(handle, TraceStack, node.name).pop()


register_lowering("StackCloseV2")(lambda node: lambda handle: None)


# -- TensorArrays --------------------------------------------------------------------------------
@register_lowering("TensorArrayV3")
def _tensor_array(node):
    dt = node.attr("dtype").np_dtype
    shape = node.attr("element_shape")
    dims = None if shape is None or shape.as_tuple() is None else tuple(shape.as_tuple())
    name = node.attr("tensor_array_name") or node.name
    if node.attr("dynamic_size"):
        raise errors.UnimplementedError(
            None, None, f"TensorArray {name}: a dynamic_size array has no size known at "
                        "compile time; place it on a CPU")

    def run(size):
        n = _concrete_int(size, "A TensorArray's size")
        if n < 0:
            raise _err(f"Size should be >= 0, got {n}")
        return TraceTensorArray(name, dt, n, dims), _FLOW

    return run


@register_lowering("TensorArrayGradV3")
def _grad(node):
    source = node.attr("source")
    return lambda handle, flow: (_handle(handle, TraceTensorArray, node.name).grad(source),
                                 _FLOW)


@register_lowering("TensorArrayWriteV3")
def _write(node):
    def run(handle, index, value, flow):
        _handle(handle, TraceTensorArray, node.name).write(index, value)
        return flow

    return run


@register_lowering("TensorArrayReadV3")
def _read(node):
    return lambda handle, index, flow: _handle(handle, TraceTensorArray, node.name).read(index)


@register_lowering("TensorArrayGatherV3")
def _gather(node):
    return lambda handle, indices, flow: _handle(handle, TraceTensorArray,
                                                 node.name).gather(indices)


@register_lowering("TensorArrayScatterV3")
def _scatter(node):
    def run(handle, indices, value, flow):
        _handle(handle, TraceTensorArray, node.name).scatter(indices, value)
        return flow

    return run


@register_lowering("TensorArraySizeV3")
def _size(node):
    return lambda handle, flow: np.int32(_handle(handle, TraceTensorArray, node.name).size)


@register_lowering("TensorArrayConcatV3")
def _concat(node):
    _, jnp, _ = jax_modules()

    def run(handle, flow):
        ta = _handle(handle, TraceTensorArray, node.name)
        buf = ta._buffer()
        if buf.ndim < 2:
            raise _err("Concat saw a scalar shape but requires at least vectors. Did you "
                       "mean to call TensorArray::Pack instead?")
        lengths = np.full([ta.size], buf.shape[1], np.int64)
        return jnp.reshape(buf, (-1,) + tuple(buf.shape[2:])), lengths

    return run


@register_lowering("TensorArraySplitV3", const_inputs=(2,))
def _split(node):
    _, jnp, _ = jax_modules()

    def run(handle, value, lengths, flow):
        ta = _handle(handle, TraceTensorArray, node.name)
        lengths = np.asarray(lengths).reshape(-1)
        if lengths.size != ta.size or int(lengths.sum()) != np.shape(value)[0]:
            raise _err(f"TensorArraySplit: lengths {lengths.tolist()} must have the array's "
                       f"size {ta.size} and sum to value.shape[0] {np.shape(value)[0]}")
        if lengths.size and np.any(lengths != lengths[0]):
            raise errors.UnimplementedError(
                None, None, "TensorArraySplit into unequal lengths: elements of one XLA "
                            "TensorArray share a shape; place it on a CPU")
        n = int(lengths[0]) if lengths.size else 0
        ta.scatter(np.arange(ta.size), jnp.reshape(value, (ta.size, n) + np.shape(value)[1:]))
        return flow

    return run


register_lowering("TensorArrayCloseV3")(lambda node: lambda handle: None)
