"""Cache blocking and intra-op threads for the CPU kernels, and who threads the GEMMs.

numpy runs one ufunc on one core and streams whole arrays through memory: a kernel of k ufunc
calls on arrays larger than the cache makes k trips to memory. `for_blocks` instead walks the
flat range in cache-sized blocks (every call of one block hits L2) and, when threads are on,
hands the blocks out to the calling thread plus a process-wide crew of helper threads
(`crew.py`; numpy and the compiled loops release the GIL, so the threads run concurrently):

    def _update(w, lo, hi):          # w: 0 for the caller, 1.. for helper threads
        np.add(x[lo:hi], y[lo:hi], out=out[lo:hi])
    for_blocks(out.size, _update)

Small ranges run as one inline call, so small kernels pay one Python call and no thread hop.
Contract for `fn`: it writes disjoint outputs for disjoint ranges, and it is called with every
block exactly once before `for_blocks` returns (or raises the first exception of any block).
Worker index `w` lets callers keep per-thread scratch buffers. Thread-safe; nested calls, and
calls while another thread's call has the crew, run on their own thread. Blocks run under
the caller's numpy error state (np.errstate). The kernels use every CPU of the process (up
to 8, affinity and cgroup CPU quota counted: `cpus.py`).

Whose threads. The threads a kernel may use belong to an `IntraOpPool` (its size, the caller
included, and its crew). A session with `ConfigProto.intra_op_parallelism_threads = n > 0`
owns one of n threads (`runtime/threads.py`); its steps carry it in the `StepContext`, and the
executor makes it the calling thread's *current* pool for the step (`enter` / `leave`, and
`run_in` for a node handed to an inter-op thread), so two sessions in one process each get
theirs. Kernels run outside any such step (tests, a session with intra = 0) use the process
default (`set_num_threads`).

Pool mode. OpenBLAS's worker threads busy-wait for ~0.1 s after every threaded GEMM, so a
thread of ours started in that time shares its core with a spinner (measured on the 2-core
benchmark machine: a half GEMM took twice as long, and BLAS-threaded GEMMs between the
CNN's split convolutions made that step 15-50% slower), and so does any other process: with
one busy neighbour on the 2-core machine, the 64-256-256-10 MLP step took 3-30 ms with
BLAS's threads and 1.0-1.1 ms with one BLAS thread (TensorFlow beside it: 1.0-1.3 ms). So a
step with GEMMs or convolutions runs in pool mode (the executor calls `set_pool_mode` as it
starts): BLAS on one thread, and the kernels split their work over the current pool's crew,
whose threads
block, never spin: `matmul` (GEMMs worth splitting), the convolutions a group of images per
task (each core builds its patch matrix in its own cache and multiplies it there), the
pooling and batch-norm loops. On a quiet machine this costs the small-GEMM MLP step ~25%
against BLAS's own threads (it stays well under TensorFlow's time) and gains the CNN step
20-45%. Steps without GEMMs or convolutions (queue runners' enqueues, initializers) leave
the mode as it is. BLAS's thread count is one setting for the whole process, so the mode is
too; a pool of one thread splits nothing and its GEMMs run on BLAS's one thread (TF's
meaning of intra_op_parallelism_threads = 1). A process that never enters pool mode keeps
numpy's BLAS as it was.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable

import numpy as np

from tensorweave.ops.traits import GEMM, POOL
from tensorweave.runtime.kernels.cpu.cpus import cpu_count
from tensorweave.runtime.kernels.cpu.crew import Crew

BLOCK = 1 << 16          # elements per block: the ~6 float32 streams of Adam fit in L2
MIN_PARALLEL = 1 << 18   # elements below which blocks run on the calling thread only

MIN_SPLIT_FLOPS = 1 << 25  # a GEMM below this (~0.3 ms on one core) is not split unless
MIN_SPLIT_OPERAND = 1 << 20  # an operand holds this many elements (4 MiB float32: beyond L2,
                             # streaming it from memory is what a split shares)

_lock = threading.Lock()
_local = threading.local()

_forks = [0]            # forks this process went through (as a child)
MAX_THREADS = 64        # an explicit setting beyond this is capped
DEFAULT_THREADS = min(cpu_count(), 8)


class IntraOpPool:
    """`size` threads (the caller included) for the kernels of the steps that use this pool:
    a crew of size - 1 helpers, started on first use. Thread-safe; one kernel call at a time
    owns the crew (a concurrent one runs on its own thread)."""

    def __init__(self, size: int):
        self.size = max(1, min(int(size), MAX_THREADS))
        self._crew: Crew | None = None
        self._forks = _forks[0]     # a crew started before a fork has no threads after it
        self._lock = threading.Lock()

    def crew(self) -> Crew:
        with self._lock:
            if self._crew is None or self._crew.retired or self._forks != _forks[0]:
                self._crew = Crew(self.size - 1, _mark_worker)
                self._forks = _forks[0]
            return self._crew

    def close(self) -> None:
        """Ends the helpers once a running call is done (a later call starts new ones)."""
        with self._lock:
            old, self._crew = self._crew, None
        if old is not None:
            old.stop()

    def __repr__(self) -> str:
        return f"<IntraOpPool {self.size} threads>"


_default = IntraOpPool(DEFAULT_THREADS)


def current() -> IntraOpPool:
    """The pool of the step running on this thread (the process default outside steps)."""
    return getattr(_local, "pool", None) or _default


def enter(pool: IntraOpPool | None) -> IntraOpPool | None:
    """Makes `pool` this thread's current pool (None: the process default); returns the
    previous one, for `leave`."""
    prev = getattr(_local, "pool", None)
    _local.pool = pool
    return prev


def leave(prev: IntraOpPool | None) -> None:
    _local.pool = prev


def run_in(pool: IntraOpPool | None, fn, *args):
    """fn(*args) with `pool` current on this thread (an inter-op thread running a node)."""
    prev = enter(pool)
    try:
        return fn(*args)
    finally:
        leave(prev)


def num_threads() -> int:
    """Threads (the caller included) that `for_blocks` uses for a big range, now, here."""
    return current().size


def set_num_threads(n: int) -> None:
    """Gives the process default pool `n` threads, the caller included (capped at 8);
    n <= 0 restores the default (the CPU count). The previous default's helpers end."""
    global _default
    with _lock:
        old, _default = _default, IntraOpPool(min(n, 8) if n > 0 else DEFAULT_THREADS)
    old.close()


# -- pool mode: who threads the GEMMs ----------------------------------------------------------
_blas: list = []           # threadpoolctl controllers of the loaded BLAS libraries
_blas_own: list[int] = []  # their thread counts before we touched them
_pool_mode = False         # kernels split work over our pool, BLAS on one thread


def plan_wants_pool(classes) -> bool | None:
    """The mode for a step whose ops have these compute classes (`OpTraits.compute_class`):
    pool mode (True) for steps with convolutions or GEMMs, and None (leave the mode as it is)
    for steps without either: an input pipeline's enqueue steps on their own threads, say,
    must not flip the mode under a training step."""
    classes = set(classes)
    return True if POOL in classes or GEMM in classes else None


def set_pool_mode(on: bool) -> None:
    """Enters or leaves pool mode (the executor calls this as each step starts; a no-op when
    the mode does not change). The mode is process-wide."""
    global _pool_mode
    if on != _pool_mode:
        with _lock:
            _pool_mode = on
            _apply_blas_threads()


def pool_mode() -> bool:
    """Whether a kernel called now should split its GEMMs (and its big memory-bound loops)
    over the pool: in pool mode no BLAS thread spins on the other cores."""
    return _pool_mode and num_threads() > 1 and not getattr(_local, "worker", False)


def spread(n: int, fn: Callable[[int, int], None], size: int | None = None) -> None:
    """fn(lo, hi) over ranges covering [0, n) (images, groups, elements): in pool mode the
    ranges go to the kernel threads, unless the call touches fewer than MIN_PARALLEL elements
    (`size`; None: always); otherwise one call fn(0, n)."""
    if n < 2 or (size is not None and size < MIN_PARALLEL) or not pool_mode():
        fn(0, n)
        return
    for_blocks(n, lambda _w, lo, hi: fn(lo, hi), block=1, min_parallel=0)


def _apply_blas_threads() -> None:
    """(Under _lock.) One BLAS thread in pool mode, whatever the pools' sizes; BLAS's own
    count otherwise."""
    if not _blas and not _blas_own:
        if not _pool_mode:
            return
        import threadpoolctl

        _blas.extend(threadpoolctl.ThreadpoolController().select(user_api="blas")
                     .lib_controllers)
        _blas_own.extend(c.num_threads for c in _blas)
    for c, own in zip(_blas, _blas_own):
        c.set_num_threads(1 if _pool_mode else own)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for 2-D arrays. In pool mode a float32/float64 GEMM is split over the pool by
    rows (by columns when a has few rows), each part one BLAS call over the whole inner
    dimension: the same products summed in BLAS's order, though a partial edge tile may
    round differently (ulps); the same parts every call, so results repeat exactly. Small
    ones (under MIN_SPLIT_FLOPS) run inline unless an operand is big (MIN_SPLIT_OPERAND
    elements: a classifier layer's 1024x1024 @ 1024x10), when they are split for its memory
    traffic."""
    m, k = a.shape
    n = b.shape[1]
    flops = 2 * m * n * k
    # NOTE: an LSTM cell's GEMMs ([20, 400] @ [400, 800], 13 MFLOP, 20 per step each way)
    # cost ~0.15 ms on one core; split in two they took 0.2 ms at best and 1.3 ms on average
    # on the loaded 2-core machine (a thread hop per GEMM), so only big operands split them.
    small = flops < MIN_SPLIT_FLOPS and max(m * k, k * n, m * n) < MIN_SPLIT_OPERAND
    if small or not pool_mode() or a.dtype != b.dtype or a.dtype.char not in "fd":
        return np.matmul(a, b)
    threads = num_threads()
    y = np.empty((m, n), a.dtype)
    if m >= 64 * threads:
        for_blocks(m, lambda w, lo, hi: np.matmul(a[lo:hi], b, out=y[lo:hi]),
                   block=-(-m // threads), min_parallel=0)
    else:
        for_blocks(n, lambda w, lo, hi: np.matmul(a, b[:, lo:hi], out=y[:, lo:hi]),
                   block=max(-(-n // threads), 16), min_parallel=0)
    return y


def _mark_worker() -> None:
    _local.worker = True


def _after_fork() -> None:
    _forks[0] += 1  # NOTE: the parent's crews' threads do not exist in the child


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
    _parallel(n, fn, max(block or 0, -(-n // (4 * threads))))


def _parallel(n: int, fn, block: int) -> None:
    count = -(-n // block)
    claim = itertools.count().__next__  # atomic under the GIL
    failed: list[BaseException] = []

    def work(w: int) -> None:
        while not failed and (i := claim()) < count:
            try:
                fn(w, i * block, min((i + 1) * block, n))
            except BaseException as e:  # noqa: BLE001 - re-raised in the caller
                failed.append(e)

    # NOTE: a helper that wakes after the caller took the last block finds none and
    # returns, so the caller waits for blocks being computed plus one wake-up, never for
    # other kernels' work (a crew owned by another call means the caller does it all).
    if not current().crew().run(work, lambda: work(0)):
        work(0)
    if failed:
        raise failed[0]


def flat(a):
    """A 1-D view of a C-contiguous array (None when `a` is not C-contiguous)."""
    return a.reshape(-1) if a.flags.c_contiguous else None
