"""Cache blocking and (opt-in) intra-op threads for big elementwise kernels.

numpy runs one ufunc on one core and streams whole arrays through memory: a kernel of k ufunc
calls on arrays larger than the cache makes k trips to memory. `for_blocks` instead walks the
flat range in cache-sized blocks (every call of one block hits L2) and, when threads are on,
hands the blocks out to the calling thread plus a small process-wide pool (numpy releases the
GIL in its ufunc loops, so the threads run concurrently):

    def _update(w, lo, hi):          # w: 0 for the caller, 1.. for pool threads
        np.add(x[lo:hi], y[lo:hi], out=out[lo:hi])
    for_blocks(out.size, _update)

Small ranges run as one inline call, so small kernels pay one Python call and no thread hop.
Contract for `fn`: it writes disjoint outputs for disjoint ranges, and it is called with every
block exactly once before `for_blocks` returns (or raises the first exception of any block).
Worker index `w` lets callers keep per-thread scratch buffers. Thread-safe; calls from pool
threads (nested) run inline. Blocks run under the caller's numpy error state (np.errstate).

Threads are off by default (`set_num_threads(n)` turns them on). NOTE: measured on the 2-core
benchmark machine, a helper thread made the MLP training step ~5% slower: OpenBLAS's worker
threads busy-wait (sched_yield) for ~0.1 s after every GEMM (OPENBLAS_THREAD_TIMEOUT, default
2^28 cycles), so the helper shares its core with a spinner and the caller waits for it at the
GIL. With OPENBLAS_THREAD_TIMEOUT=4 two threads won ~8% on that step (but small GEMMs then
pay a thread wake-up each: the 256-wide MLP step got ~15% slower).
"""

from __future__ import annotations

import contextvars
import itertools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

BLOCK = 1 << 16          # elements per block: the ~6 float32 streams of Adam fit in L2
MIN_PARALLEL = 1 << 18   # elements below which blocks run on the calling thread only

DEFAULT_THREADS = 1

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_threads: int = DEFAULT_THREADS
_local = threading.local()


def cpu_count() -> int:
    """CPUs this process may run on (a natural `set_num_threads` argument)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def num_threads() -> int:
    """Threads (the caller included) that `for_blocks` uses for a big range."""
    return _threads


def set_num_threads(n: int) -> None:
    """Uses `n` threads, the caller included (capped at 8); n <= 0 restores the default (1).
    A pool of n - 1 threads is created on first use; the previous one is shut down."""
    global _threads, _pool
    with _lock:
        old, _pool = _pool, None
        _threads = min(n, 8) if n > 0 else DEFAULT_THREADS
    if old is not None:
        old.shutdown(wait=False)


def _get_pool() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=num_threads() - 1,
                                       thread_name_prefix="tw-intraop",
                                       initializer=_mark_worker)
        return _pool


def _mark_worker() -> None:
    _local.worker = True


def _after_fork() -> None:
    global _pool
    _pool = None  # the parent's threads do not exist in the child


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def for_blocks(n: int, fn: Callable[[int, int, int], None], block: int | None = BLOCK,
               min_parallel: int = MIN_PARALLEL) -> None:
    """Calls `fn(w, lo, hi)` for consecutive ranges [lo, hi) covering [0, n), of at most
    `block` elements (None: no cache blocking, one call when serial); in parallel (blocks
    assigned dynamically to the threads) when n >= min_parallel."""
    threads = 1 if n < min_parallel or getattr(_local, "worker", False) else num_threads()
    if threads == 1:
        if block is None or n <= block:
            fn(0, 0, n)
        else:
            for lo in range(0, n, block):
                fn(0, lo, min(lo + block, n))
        return
    # NOTE: threads take blocks of at least n / (4 * threads): every ufunc call ends in a GIL
    # hand-off, which costs more than the cache misses of the bigger blocks.
    _parallel(n, fn, max(block or 0, -(-n // (4 * threads))), threads)


def _parallel(n: int, fn, block: int, threads: int) -> None:
    count = -(-n // block)
    claim = itertools.count().__next__  # atomic under the GIL
    failed: list[BaseException] = []

    def work(w: int) -> None:
        while not failed and (i := claim()) < count:
            try:
                fn(w, i * block, min((i + 1) * block, n))
            except BaseException as e:  # noqa: BLE001 - re-raised in the caller
                failed.append(e)

    futures = _start_helpers(work, min(threads, count))
    work(0)
    # NOTE: once the caller finds no block left, a helper that has not started yet is
    # cancelled, so the caller only ever waits for blocks being computed (never for a queue
    # busy with other kernels' work): the wait is bounded by one block's compute.
    for f in futures:
        if not f.cancel():
            f.result()
    if failed:
        raise failed[0]


def _start_helpers(work, threads: int) -> list:
    """Submits work(1) .. work(threads - 1) to the pool (fewer if it is being replaced)."""
    pool = _get_pool()
    futures = []
    for w in range(1, threads):
        # NOTE: each helper runs in a copy of the caller's context, so numpy's error state
        # (np.errstate: warn / ignore / raise) applies to its blocks as to the caller's.
        try:
            futures.append(pool.submit(contextvars.copy_context().run, work, w))
        except RuntimeError:  # shut down by set_num_threads meanwhile: the caller does it
            break
    return futures


def flat(a):
    """A 1-D view of a C-contiguous array (None when `a` is not C-contiguous)."""
    return a.reshape(-1) if a.flags.c_contiguous else None
