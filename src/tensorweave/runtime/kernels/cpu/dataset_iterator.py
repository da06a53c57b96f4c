"""CPU kernels of the iterator ops: IteratorV2, _OneShotIterator, MakeIterator,
IteratorGetNext.

An `IteratorState` lives in the device's resource container (shared by `shared_name`), so it
outlives steps and is closed — stopping any background threads of its pipeline — when the
session closes or its container is reset.
"""

from __future__ import annotations

import threading

from tensorweave import errors
from tensorweave.runtime.kernels.cpu.dataset import close_iter
from tensorweave.runtime.kernels.registry import register_kernel


class IteratorState:
    """The element iterator of one iterator resource. Thread-safe (one lock per state)."""

    def __init__(self, name: str):
        self.name = name
        self._it = None
        self._lock = threading.Lock()
        self.initialized = False

    def init(self, dataset) -> None:
        """Starts iterating `dataset` from its beginning (closing the previous iterator)."""
        with self._lock:
            close_iter(self._it)
            self._it = dataset.iterate()
            self.initialized = True

    def init_once(self, dataset) -> None:
        with self._lock:
            if self.initialized:
                return
            self._it = dataset.iterate()
            self.initialized = True

    def get_next(self) -> tuple:
        """The next element. Raises OutOfRangeError at the end, FailedPrecondition when not
        initialized."""
        with self._lock:
            if not self.initialized:
                raise errors.FailedPreconditionError(
                    None, None, "GetNext() failed because the iterator has not been "
                                "initialized. Ensure that you have run the initializer "
                                "operation for this iterator before getting the next element.")
            if self._it is None:
                raise errors.OutOfRangeError(None, None, "End of sequence")
            try:
                return next(self._it)
            except StopIteration:
                close_iter(self._it)
                self._it = None
                raise errors.OutOfRangeError(None, None, "End of sequence") from None

    def close(self) -> None:
        with self._lock:
            close_iter(self._it)
            self._it = None


def _state(node) -> IteratorState:
    name = node.attr("shared_name") or f"_iterator/{node.name}"
    if node.resources is None:
        return IteratorState(name)
    st = node.resources.lookup_or_create(node.attr("container") or "", name,
                                         lambda: IteratorState(name))
    if not isinstance(st, IteratorState):
        raise errors.InvalidArgumentError(None, None, f"Resource '{name}' is not an iterator")
    return st


@register_kernel("IteratorV2")
def _iterator(node):
    state = _state(node)
    return lambda: state


@register_kernel("_OneShotIterator")
def _one_shot(node):
    state = _state(node)

    def run(dataset):
        state.init_once(dataset)
        return state
    return run


@register_kernel("MakeIterator")
def _make_iterator(node):
    def run(dataset, iterator):
        iterator.init(dataset)
    return run


@register_kernel("IteratorGetNext")
def _get_next(node):
    n = len(node.attr("output_types"))

    def run(iterator):
        el = iterator.get_next()
        if len(el) != n:
            raise errors.InvalidArgumentError(
                None, None, f"Iterator produced {len(el)} components, expected {n}")
        return el[0] if n == 1 else tuple(el)
    return run
