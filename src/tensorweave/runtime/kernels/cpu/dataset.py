"""CPU kernels of the dataset ops: each builds a runtime dataset object (the `variant` value).

A dataset object has `iterate()`, which returns a fresh iterator over elements; an element is
a tuple of numpy arrays (the flat components). Iterators that own threads or files have a
`close()`; transformations close their inputs when they are closed (`_closing`).
Thread-safety: a dataset object is immutable and may be iterated from several threads; one
iterator is used by one thread at a time (the iterator resource serializes `get_next`).
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tensorweave import errors, ir
from tensorweave.runtime.kernels.cpu import parallel
from tensorweave.runtime.kernels.registry import register_kernel
from tensorweave.runtime.step import StepContext


def close_iter(it) -> None:
    """Closes iterator `it` when it can be closed."""
    close = getattr(it, "close", None)
    if callable(close):
        close()


@contextlib.contextmanager
def _closing(it):
    try:
        yield it
    finally:
        close_iter(it)


class Dataset:
    """Base runtime dataset: subclasses implement `_gen()` (a generator of elements)."""

    def iterate(self):
        return self._gen()

    def _gen(self):
        raise NotImplementedError


class GenDataset(Dataset):
    """A dataset whose elements come from `make()` (a function returning an iterator)."""

    def __init__(self, make):
        self._make = make

    def iterate(self):
        return self._make()


def _copy(a):
    return np.array(a, copy=True)


# -- function calls ----------------------------------------------------------------------------
class FunctionRunner:
    """Runs a traced function (an `ir.FunctionDef`) per element with captured arguments.

    Errors from the body keep their class; the message says which element (its position in
    the input dataset) and which transformation failed.
    """

    def __init__(self, fdef: ir.FunctionDef, captured: list, what: str):
        from tensorweave.runtime.executor import Executor
        from tensorweave.runtime.plan import Plan

        self._exec = Executor(Plan(ir.GraphDef(nodes=list(fdef.nodes))), step=False)
        self._captured = list(captured)
        self._what = what
        # NOTE: made inside a step's kernel: the function's kernels keep that session's
        # threads on the pipeline's own threads too
        self._intra_op = parallel.current()

    def __call__(self, element, index: int) -> tuple:
        ctx = StepContext(0)
        ctx.intra_op = self._intra_op
        try:
            return tuple(self._exec.run(list(element) + self._captured, ctx))
        except errors.OpError as e:
            raise type(e)(e.node_def, e.op, f"Error in {self._what} function at element "
                                            f"{index} of its input: {e.message}") from None


def find_function(node, attr: str = "f") -> ir.FunctionDef:
    """The FunctionDef named by `node`'s func attr: from the plan's library when the plan
    passes one (`node.extra["library"]`), else from this process's traced functions.

    Raises NotFoundError when neither has it."""
    from tensorweave.ops.function import lookup_function

    name = node.attr(attr).name
    fdef = (node.extra or {}).get("library", {}).get(name) or lookup_function(name)
    if fdef is None:
        raise errors.NotFoundError(None, None, f"Function '{name}' of node '{node.name}' is "
                                               "not in the graph's library")
    return fdef


def _runner(node, captured, what: str) -> FunctionRunner:
    return FunctionRunner(find_function(node), captured, what)


# -- sources -----------------------------------------------------------------------------------
@register_kernel("TensorSliceDataset")
def _tensor_slice(node):
    def run(*components):
        comps = [np.asarray(c) for c in components]
        n = comps[0].shape[0] if comps[0].ndim else 0
        for c in comps:
            if c.ndim == 0 or c.shape[0] != n:
                raise errors.InvalidArgumentError(
                    None, None, "All components must have the same size in the 0th dimension")
        return GenDataset(lambda: (tuple(_copy(c[i]) for c in comps) for i in range(n)))
    return run


@register_kernel("TensorDataset")
def _tensor(node):
    def run(*components):
        comps = tuple(np.asarray(c) for c in components)
        return GenDataset(lambda: iter([tuple(_copy(c) for c in comps)]))
    return run


@register_kernel("RangeDataset")
def _range(node):
    def run(start, stop, step):
        start, stop, step = int(start), int(stop), int(step)
        if step == 0:
            raise errors.InvalidArgumentError(None, None, "step must be a non-zero integer.")
        return GenDataset(lambda: ((np.int64(i),) for i in range(start, stop, step)))
    return run


# -- transformations ---------------------------------------------------------------------------
class MapIterator:
    """Maps its input's elements one by one. An error for one element (from the input or the
    function) is raised from that `next` call and the iterator stays usable, so
    `ignore_errors` can move on to the next element."""

    def __init__(self, ds, fn):
        self._it = ds.iterate()
        self._fn = fn
        self._i = 0

    def __iter__(self):
        return self

    def __next__(self):
        el = next(self._it)
        i, self._i = self._i, self._i + 1
        return self._fn(el, i)

    def close(self) -> None:
        close_iter(self._it)


class _Failed:
    """An input element whose production raised (kept in order with the others)."""

    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


class ParallelMapIterator(MapIterator):
    """Order-keeping parallel map on a private pool that `close()` shuts down.

    Elements go to the pool in chunks (NOTE: one future per element cost more than the map
    itself for small functions, which hold the GIL anyway); up to two chunks per thread are in
    flight. An element's error is raised when that element is reached, as in `MapIterator`.
    """

    CHUNK = 16

    def __init__(self, ds, fn, threads: int):
        super().__init__(ds, fn)
        self._threads = threads
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="tw-data-map")
        self._pending: list = []      # futures of chunks, in order
        self._ready: list = []        # (ok, value) of the current chunk, reversed
        self._ended = False

    def _map_chunk(self, chunk):
        out = []
        for el, i in chunk:
            if isinstance(el, _Failed):
                out.append((False, el.error))
                continue
            try:
                out.append((True, self._fn(el, i)))
            except Exception as e:  # noqa: BLE001 - re-raised when the element is reached
                out.append((False, e))
        return out

    def _fill(self) -> None:
        while not self._ended and len(self._pending) < 2 * self._threads:
            chunk: list = []
            while len(chunk) < self.CHUNK:
                try:
                    el = next(self._it)
                except StopIteration:
                    self._ended = True
                    break
                except Exception as e:  # noqa: BLE001 - an input error keeps its place in line
                    el = _Failed(e)
                chunk.append((el, self._i))
                self._i += 1
            if chunk:
                self._pending.append(self._pool.submit(self._map_chunk, chunk))

    def __next__(self):
        if not self._ready:
            self._fill()
            if not self._pending:
                self.close()
                raise StopIteration
            self._ready = self._pending.pop(0).result()[::-1]
        ok, value = self._ready.pop()
        if not ok:
            raise value
        return value

    def close(self) -> None:
        for f in self._pending:
            f.cancel()
        self._pending.clear()
        self._ready.clear()
        self._pool.shutdown(wait=True)
        super().close()


@register_kernel("MapDataset")
def _map(node):
    def run(ds, *captured):
        fn = _runner(node, captured, "map")
        return GenDataset(lambda: MapIterator(ds, fn))
    return run


@register_kernel("ParallelMapDataset")
def _parallel_map(node):
    def run(ds, *rest):
        captured, n = rest[:-1], int(rest[-1])
        fn = _runner(node, captured, "map")
        threads = 2 if n <= 0 else n
        if threads == 1:
            return GenDataset(lambda: MapIterator(ds, fn))
        return GenDataset(lambda: ParallelMapIterator(ds, fn, threads))
    return run


def batch_elements(elements: list) -> tuple:
    """Stacks a list of elements component-wise; shapes must match."""
    out = []
    for k, parts in enumerate(zip(*elements)):
        shapes = {np.shape(p) for p in parts}
        if len(shapes) > 1:
            raise errors.InvalidArgumentError(
                None, None, f"Cannot batch tensors with different shapes in component {k}. "
                            f"Shapes seen: {sorted(shapes)}")
        out.append(np.stack(parts))
    return tuple(out)


def _batch_gen(ds, size: int, drop: bool):
    with _closing(ds.iterate()) as it:
        buf = []
        for el in it:
            buf.append(el)
            if len(buf) == size:
                yield batch_elements(buf)
                buf = []
        if buf and not drop:
            yield batch_elements(buf)


@register_kernel("BatchDatasetV2")
def _batch(node):
    def run(ds, batch_size, drop_remainder):
        size = int(batch_size)
        if size <= 0:
            raise errors.InvalidArgumentError(None, None, "Batch size must be greater than zero.")
        drop = bool(drop_remainder)
        return GenDataset(lambda: _batch_gen(ds, size, drop))
    return run


def _repeat_gen(ds, count: int):
    i = 0
    while count < 0 or i < count:
        produced = False
        with _closing(ds.iterate()) as it:
            for el in it:
                produced = True
                yield el
        if not produced:
            return
        i += 1


@register_kernel("RepeatDataset")
def _repeat(node):
    def run(ds, count):
        c = int(count)
        return GenDataset(lambda: _repeat_gen(ds, c))
    return run


def _take_gen(ds, count: int):
    if count == 0:
        return
    with _closing(ds.iterate()) as it:
        for i, el in enumerate(it):
            yield el
            if count >= 0 and i + 1 >= count:
                return


def _skip_gen(ds, count: int):
    with _closing(ds.iterate()) as it:
        for i, el in enumerate(it):
            if count < 0 or i < count:
                continue
            yield el


@register_kernel("TakeDataset")
def _take(node):
    def run(ds, count):
        c = int(count)
        return GenDataset(lambda: _take_gen(ds, c))
    return run


@register_kernel("SkipDataset")
def _skip(node):
    def run(ds, count):
        c = int(count)
        return GenDataset(lambda: _skip_gen(ds, c))
    return run
