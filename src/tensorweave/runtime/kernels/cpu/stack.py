"""CPU kernels of the StackV2 family (TF's `core/kernels/stack.cc`).

`StackV2` returns a fresh `StackState` as its handle value each time it runs: the stack lives
as long as the step holds a reference to it (a per-step resource, as TF keeps it in the step
container), flowing through Enter/Switch like any value. The dataflow executor runs a step on
one thread, so a stack needs no lock; the graph orders a loop's pushes and pops with control
edges (see `autodiff/control_flow_state.py`).
"""

from __future__ import annotations

import itertools

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.registry import register_kernel

_IDS = itertools.count()


def _err(msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, msg)


class StackState:
    """A LIFO of arrays of one dtype, with an optional size bound."""

    __slots__ = ("name", "dtype", "max_size", "values", "closed")

    def __init__(self, name: str, dtype, max_size: int):
        self.name = name
        self.dtype = dtype
        self.max_size = max_size          # < 0: unbounded
        self.values: list = []
        self.closed = False

    def __repr__(self) -> str:
        return f"<Stack {self.name} size={len(self.values)} dtype={self.dtype.name}>"

    def _check_open(self) -> None:
        if self.closed:
            raise _err(f"Stack[{self.name}] has already been closed.")

    def push(self, value) -> None:
        self._check_open()
        if 0 <= self.max_size <= len(self.values):
            raise _err(f"Stack[{self.name}] overflowed its max_size ({self.max_size})")
        self.values.append(value)

    def pop(self):
        self._check_open()
        if not self.values:
            raise _err(f"Stack[{self.name}] is empty when calling Pop().")
        return self.values.pop()

    def close(self) -> None:
        self.values = []
        self.closed = True


def _stack_of(handle) -> StackState:
    if not isinstance(handle, StackState):
        raise _err(f"Expected a stack handle (the output of StackV2), got {type(handle).__name__}")
    return handle


@register_kernel("StackV2")
def _stack(node):
    dtype = node.attr("elem_type")
    name = node.attr("stack_name") or node.name

    def run(max_size):
        size = np.asarray(max_size)
        if size.ndim != 0:
            raise _err(f"Stack size must be a scalar, but had shape: {list(size.shape)}")
        return StackState(f"{name}_{next(_IDS)}", dtype, int(size))

    return run


@register_kernel("StackPushV2", forwards_input=True)
def _push(node):
    dtype = node.attr("T")

    def run(handle, elem):
        stack = _stack_of(handle)
        if dtype != stack.dtype:
            raise _err(f"Must have type {stack.dtype.name} but got {dtype.name}")
        stack.push(elem)
        return elem

    return run


@register_kernel("StackPopV2")
def _pop(node):
    dtype = node.attr("elem_type")

    def run(handle):
        stack = _stack_of(handle)
        if dtype != stack.dtype:
            raise _err(f"Stack[{stack.name}] holds {stack.dtype.name} values, but the pop "
                       f"expects {dtype.name}")
        return stack.pop()

    return run


@register_kernel("StackCloseV2")
def _close(node):
    def run(handle):
        _stack_of(handle).close()

    return run
