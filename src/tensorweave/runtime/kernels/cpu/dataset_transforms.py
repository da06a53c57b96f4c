"""CPU kernels of the stage-2 dataset transformations: shuffle, prefetch, filter, zip,
concatenate, flat_map, interleave, padded_batch, cache, unbatch, shard.

Contracts as in `dataset.py`: a kernel returns an immutable runtime dataset; iterators close
their inputs when closed. `PrefetchIterator` owns one background thread, stopped by `close()`
(the iterator resource closes it when re-initialized or when the session closes).
"""

from __future__ import annotations

import collections
import os
import threading

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.cpu.dataset import (
    Dataset,
    GenDataset,
    _closing,
    _runner,
    close_iter,
)
from tensorweave.runtime.kernels.registry import register_kernel

_DEFAULT_GRAPH_SEED = 87654321


# -- shuffle -----------------------------------------------------------------------------------
class ShuffleDataset(Dataset):
    """Uniform shuffle through a buffer of `buffer_size` elements (memory bounded by it).

    Seeds (0, 0) draw fresh randomness per iterator; otherwise the order is deterministic,
    differing per epoch (each `iterate()`) when `reshuffle` is set.
    """

    def __init__(self, ds, buffer_size: int, seed: int, seed2: int, reshuffle: bool):
        self._ds, self._size = ds, buffer_size
        self._seeds = None if seed == 0 and seed2 == 0 else (seed, seed2)
        self._reshuffle = reshuffle
        self._epoch = 0
        self._lock = threading.Lock()

    def iterate(self):
        with self._lock:
            epoch = self._epoch
            self._epoch += 1
        if self._seeds is None:
            rng = np.random.default_rng()
        else:
            rng = np.random.default_rng([*self._seeds, epoch if self._reshuffle else 0])
        return self._gen(rng)

    def _gen(self, rng):
        buf: list = []
        with _closing(self._ds.iterate()) as it:
            for el in it:
                if len(buf) < self._size:
                    buf.append(el)
                    continue
                k = int(rng.integers(len(buf)))
                out, buf[k] = buf[k], el
                yield out
        while buf:
            k = int(rng.integers(len(buf)))
            buf[k], buf[-1] = buf[-1], buf[k]
            yield buf.pop()


@register_kernel("ShuffleDataset")
def _shuffle(node):
    reshuffle = bool(node.attr("reshuffle_each_iteration", True))

    def run(ds, buffer_size, seed, seed2):
        size = int(buffer_size)
        if size <= 0:
            raise errors.InvalidArgumentError(None, None,
                                              "buffer_size must be greater than zero.")
        return ShuffleDataset(ds, size, int(seed), int(seed2), reshuffle)
    return run


# -- prefetch ----------------------------------------------------------------------------------
class PrefetchIterator:
    """Reads its input on a background thread into a buffer of at most `size` elements.

    Blocking: `__next__` waits for the thread, the thread waits while the buffer is full; both
    sleep on one condition until the other side (or `close()`) wakes them, never polling.
    `close()` stops the thread (after the element it is reading) and joins it (5 s at most).
    """

    _END = object()

    def __init__(self, ds, size: int):
        self._buf: collections.deque = collections.deque()
        self._size = size
        self._cond = threading.Condition()
        self._stopped = False
        self._done = False
        self._thread = threading.Thread(target=self._work, args=(ds,), daemon=True,
                                        name="tw-data-prefetch")
        self._thread.start()

    def _put(self, item) -> bool:
        with self._cond:
            while len(self._buf) >= self._size and not self._stopped:
                self._cond.wait()
            if self._stopped:
                return False
            self._buf.append(item)
            self._cond.notify_all()
            return True

    def _work(self, ds) -> None:
        try:
            with _closing(ds.iterate()) as it:
                for el in it:
                    if not self._put(el):
                        return
            self._put(self._END)
        except Exception as e:  # noqa: BLE001 - handed to the consumer
            self._put(e)

    def __iter__(self):
        return self

    def _take(self):
        with self._cond:
            while not self._buf:
                self._cond.wait()
            item = self._buf.popleft()
            self._cond.notify_all()
            return item

    def __next__(self):
        if self._done:
            raise StopIteration
        item = self._take()
        if item is self._END:
            self._done = True
            self.close()
            raise StopIteration
        if isinstance(item, BaseException):
            self._done = True
            self.close()
            raise item
        return item

    def close(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)


@register_kernel("PrefetchDataset")
def _prefetch(node):
    def run(ds, buffer_size):
        n = int(buffer_size)
        size = 2 if n < 0 else n
        if size == 0:
            return ds
        return GenDataset(lambda: PrefetchIterator(ds, size))
    return run


# -- filter, zip, concatenate ------------------------------------------------------------------
def _filter_gen(ds, pred):
    with _closing(ds.iterate()) as it:
        for i, el in enumerate(it):
            keep = pred(el, i)[0]
            if np.shape(keep) != ():
                raise errors.InvalidArgumentError(
                    None, None, "Filter predicate `f` must return a scalar bool.")
            if bool(keep):
                yield el


@register_kernel("FilterDataset")
def _filter(node):
    from tensorweave.runtime.kernels.cpu.dataset import FunctionRunner, find_function

    def run(ds, *captured):
        pred = FunctionRunner(find_function(node, "predicate"), captured, "filter")
        return GenDataset(lambda: _filter_gen(ds, pred))
    return run


def _zip_gen(dss):
    its = [d.iterate() for d in dss]
    try:
        while True:
            parts = []
            for it in its:
                try:
                    parts.append(next(it))
                except StopIteration:
                    return
            yield tuple(c for p in parts for c in p)
    finally:
        for it in its:
            close_iter(it)


@register_kernel("ZipDataset")
def _zip(node):
    def run(*dss):
        return GenDataset(lambda: _zip_gen(dss))
    return run


def _concat_gen(a, b):
    for ds in (a, b):
        with _closing(ds.iterate()) as it:
            yield from it


@register_kernel("ConcatenateDataset")
def _concatenate(node):
    def run(a, b):
        return GenDataset(lambda: _concat_gen(a, b))
    return run


# -- flat_map, interleave ----------------------------------------------------------------------
def _flat_map_gen(ds, fn):
    with _closing(ds.iterate()) as it:
        for i, el in enumerate(it):
            with _closing(fn(el, i)[0].iterate()) as sub:
                yield from sub


@register_kernel("FlatMapDataset")
def _flat_map(node):
    def run(ds, *captured):
        fn = _runner(node, captured, "flat_map")
        return GenDataset(lambda: _flat_map_gen(ds, fn))
    return run


def _interleave_gen(ds, fn, cycle: int, block: int):
    """TF's InterleaveDataset order: round robin over `cycle` open sub-iterators, `block`
    elements from each; an exhausted slot is refilled from the next input element."""
    current: list = [None] * cycle
    ci = bi = n_open = index = 0
    end_of_input = False
    try:
        with _closing(ds.iterate()) as it:
            while not end_of_input or n_open > 0:
                if current[ci] is not None:
                    try:
                        el = next(current[ci])
                    except StopIteration:
                        current[ci], n_open = None, n_open - 1
                        ci, bi = (ci + 1) % cycle, 0
                        continue
                    bi += 1
                    if bi == block:
                        ci, bi = (ci + 1) % cycle, 0
                    yield el
                elif not end_of_input:
                    try:
                        arg = next(it)
                    except StopIteration:
                        end_of_input = True
                        continue
                    current[ci] = fn(arg, index)[0].iterate()
                    index += 1
                    n_open += 1
                else:
                    ci, bi = (ci + 1) % cycle, 0
    finally:
        for sub in current:
            close_iter(sub)


@register_kernel("InterleaveDataset")
def _interleave(node):
    def run(ds, *rest):
        captured, cycle, block = rest[:-2], int(rest[-2]), int(rest[-1])
        if cycle <= 0 or block <= 0:
            raise errors.InvalidArgumentError(
                None, None, "cycle_length and block_length must be greater than zero.")
        fn = _runner(node, captured, "interleave")
        return GenDataset(lambda: _interleave_gen(ds, fn, cycle, block))
    return run


# -- padded_batch, unbatch ---------------------------------------------------------------------
def _pad_batch(elements: list, shapes: list, pads: list) -> tuple:
    out = []
    for k, parts in enumerate(zip(*elements)):
        parts = [np.asarray(p) for p in parts]
        want = shapes[k]
        if len(want) != parts[0].ndim:
            raise errors.InvalidArgumentError(
                None, None, f"Component {k}: padded shape {list(want)} has the wrong rank for "
                            f"an element of shape {list(parts[0].shape)}")
        maxes = np.max([p.shape for p in parts], axis=0) if want else np.zeros(0, int)
        full = [int(m) if w < 0 else int(w) for w, m in zip(want, maxes)]
        for p in parts:
            if any(d > f for d, f in zip(p.shape, full)):
                raise errors.InvalidArgumentError(
                    None, None, f"Attempted to pad to a smaller size than the input element: "
                                f"component {k} of shape {list(p.shape)} into {full}")
        batch = np.full([len(parts)] + full, pads[k], dtype=parts[0].dtype)
        for i, p in enumerate(parts):
            batch[(i,) + tuple(slice(0, d) for d in p.shape)] = p
        out.append(batch)
    return tuple(out)


def _padded_gen(ds, size, shapes, pads, drop):
    with _closing(ds.iterate()) as it:
        buf = []
        for el in it:
            buf.append(el)
            if len(buf) == size:
                yield _pad_batch(buf, shapes, pads)
                buf = []
        if buf and not drop:
            yield _pad_batch(buf, shapes, pads)


@register_kernel("PaddedBatchDatasetV2")
def _padded_batch(node):
    n = int(node.attr("N"))

    def run(ds, batch_size, *rest):
        shapes = [[int(d) for d in np.asarray(s).ravel()] for s in rest[:n]]
        pads, drop = rest[n:-1], bool(rest[-1])
        size = int(batch_size)
        if size <= 0:
            raise errors.InvalidArgumentError(None, None, "Batch size must be greater than zero.")
        return GenDataset(lambda: _padded_gen(ds, size, shapes, pads, drop))
    return run


def _unbatch_gen(ds):
    with _closing(ds.iterate()) as it:
        for el in it:
            n = {np.shape(c)[0] if np.ndim(c) else None for c in el}
            if len(n) != 1 or None in n:
                raise errors.InvalidArgumentError(
                    None, None, "Input element must have a non-scalar value in each component "
                                "and the same size in the 0th dimension.")
            for i in range(n.pop()):
                yield tuple(np.array(c[i]) for c in el)


@register_kernel("UnbatchDataset")
def _unbatch(node):
    return lambda ds: GenDataset(lambda: _unbatch_gen(ds))


# -- cache, shard ------------------------------------------------------------------------------
class CacheDataset(Dataset):
    """Memory cache: the first COMPLETE pass is recorded; later passes replay it."""

    def __init__(self, ds):
        self._ds = ds
        self._cached: list | None = None
        self._lock = threading.Lock()

    def iterate(self):
        with self._lock:
            cached = self._cached
        return iter(cached) if cached is not None else self._record()

    def _record(self):
        seen = []
        with _closing(self._ds.iterate()) as it:
            for el in it:
                seen.append(el)
                yield el
        with self._lock:
            if self._cached is None:
                self._cached = seen


class FileCacheDataset(Dataset):
    """File cache: the first COMPLETE pass is written to `path` (through a temporary file that
    is renamed at the end, so a partial pass leaves nothing); while `path` exists — also in a
    later session or process, as TF's — passes read it instead of the input.

    Elements are stored as numpy `.npy` records (no pickling; strings as fixed-width bytes).
    """

    def __init__(self, ds, path: str):
        self._ds = ds
        self._path = path

    def iterate(self):
        return self._replay() if os.path.exists(self._path) else self._record()

    def _record(self):
        tmp = f"{self._path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "wb") as f, _closing(self._ds.iterate()) as it:
            try:
                for el in it:
                    np.save(f, np.int64(len(el)), allow_pickle=False)
                    for c in el:
                        np.save(f, _storable(np.asarray(c)), allow_pickle=False)
                    yield el
            except BaseException:
                f.close()
                os.remove(tmp)
                raise
        os.replace(tmp, self._path)

    def _replay(self):
        with open(self._path, "rb") as f:
            while f.peek(1) if hasattr(f, "peek") else f.read(1):
                n = int(np.load(f, allow_pickle=False))
                yield tuple(_restored(np.load(f, allow_pickle=False)) for _ in range(n))


def _storable(a: np.ndarray) -> np.ndarray:
    return a.astype(bytes) if a.dtype == object else a


def _restored(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "S":
        out = np.empty(a.shape, dtype=object)
        out.reshape(-1)[:] = [bytes(x) for x in a.reshape(-1)]
        return out
    return a


@register_kernel("CacheDataset")
def _cache(node):
    def run(ds, filename):
        name = filename.item() if isinstance(filename, np.ndarray) else filename
        name = name.decode() if isinstance(name, bytes) else name
        return FileCacheDataset(ds, name) if name else CacheDataset(ds)
    return run


def _shard_gen(ds, num: int, index: int):
    with _closing(ds.iterate()) as it:
        for i, el in enumerate(it):
            if i % num == index:
                yield el


@register_kernel("ShardDataset")
def _shard(node):
    def run(ds, num_shards, index):
        num, idx = int(num_shards), int(index)
        if num <= 0 or not 0 <= idx < num:
            raise errors.InvalidArgumentError(
                None, None, f"Index must be between 0 and {num - 1} (currently index = {idx}) "
                            f"and num_shards must be positive (currently {num}).")
        return GenDataset(lambda: _shard_gen(ds, num, idx))
    return run
