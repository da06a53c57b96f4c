"""A session's threads: the kernels' intra-op pool and the executor's inter-op pools.

TF's `ConfigProto` settings keep their meaning, per session:
- `intra_op_parallelism_threads` n > 0: the kernels of this session's steps use at most n
  threads each (`cpu/parallel.IntraOpPool`, BLAS held to one thread); 0: the process default
  (the CPUs this process may use, `cpu/cpus.py`);
- `inter_op_parallelism_threads` n: independent expensive nodes of a step run on n threads
  (the step's thread and n - 1 pool threads); 0: the cores of this process's affinity mask,
  a cgroup CPU quota not counted (`default_inter_op_threads`); 1: one at a time on the
  step's thread; negative: on the step's thread (TF: "the caller's thread");
- `session_inter_op_thread_pool` (a list of {num_threads, global_name}): the session's
  pools, chosen per run by `RunOptions.inter_op_thread_pool` (-1: the caller's thread); a
  pool with a `global_name` is shared by every session of the process naming it (the first
  session's size holds, as TF 2.21 does);
- `use_per_session_threads`: every session here has pools of its own already (what the flag
  asks of TF), so it changes nothing.

The master builds one `SessionThreads` per session and puts its pools in each step's
`StepContext` (`intra_op`, `inter_op`); the executor makes the intra-op pool current for the
step (`parallel.enter`) and submits to the inter-op pool. Pool threads block while idle.
Thread-safe.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from tensorweave import errors
from tensorweave.runtime.kernels.cpu import parallel
from tensorweave.runtime.kernels.cpu.cpus import affinity_count


class _Inline:
    """The inter-op "pool" that runs every node on the step's own thread."""

    def __repr__(self) -> str:
        return "<inline>"


INLINE = _Inline()

_global_lock = threading.Lock()
_global_pools: dict[str, ThreadPoolExecutor | _Inline] = {}


MAX_DEFAULT_INTER_OP = 8


def default_inter_op_threads() -> int:
    """Inter-op threads of a session that asks for 0: the cores this process may run on (its
    affinity mask, at most 8), whatever its cgroup's CPU quota.

    NOTE: TF's default is the schedulable cores too (quota not read). The quota caps CPU
    *time*, not how many threads may run at once, and idle inter-op threads block (no
    spinning), so a second one costs no quota while it waits. Measured on the 2-core
    machine in a 1-CPU cgroup (cpu.cfs_quota_us = period) at load average 8-12: the MLP
    64-256-256-10 b128 Adam step ran 1.41x TF's time with every node inline and 1.13-1.15x
    with a second inter-op thread (TF in the same minutes, chunks alternated); the kernels'
    own threads (`parallel`) stay sized by the quota."""
    return max(1, min(affinity_count(), MAX_DEFAULT_INTER_OP))


def inter_op_pool(threads: int, name: str = "") -> ThreadPoolExecutor | _Inline:
    """A pool of `threads` inter-op threads (the step's own included: threads - 1 workers);
    INLINE for threads == 1 or < 0; 0: `default_inter_op_threads()`."""
    n = default_inter_op_threads() if threads == 0 else threads
    if n <= 1:
        return INLINE
    return ThreadPoolExecutor(max_workers=n - 1, thread_name_prefix=f"tw-interop{name}")


def _shared_pool(threads: int, name: str) -> ThreadPoolExecutor | _Inline:
    with _global_lock:
        if name not in _global_pools:
            _global_pools[name] = inter_op_pool(threads, f"-{name}")
        return _global_pools[name]


class SessionThreads:
    """The pools of one session, from its `SessionOptions` (intra_op_threads,
    inter_op_threads, inter_op_pools: ((num_threads, global_name), ...))."""

    def __init__(self, intra: int = 0, inter: int = 0,
                 pools: tuple[tuple[int, str], ...] = ()):
        self.intra_op = parallel.IntraOpPool(intra) if intra > 0 else None
        self._owned: list[ThreadPoolExecutor] = []
        self.inter_op = [self._pool(n if n else inter, name)
                         for n, name in (pools or ((inter, ""),))]

    @classmethod
    def from_options(cls, opts) -> SessionThreads:
        return cls(opts.intra_op_threads, opts.inter_op_threads, opts.inter_op_pools)

    def _pool(self, threads: int, name: str):
        if name:
            return _shared_pool(threads, name)
        pool = inter_op_pool(threads)
        if isinstance(pool, ThreadPoolExecutor):
            self._owned.append(pool)
        return pool

    def inter_op_for(self, index: int = 0):
        """The inter-op pool of a run whose RunOptions.inter_op_thread_pool is `index`.

        Raises: InvalidArgumentError for an index outside -1 .. pools - 1 (TF's message).
        """
        if index == 0:
            return self.inter_op[0]
        if index == -1:
            return INLINE
        if index < -1 or index >= len(self.inter_op):
            raise errors.InvalidArgumentError(None, None,
                                              f"Invalid inter_op_thread_pool: {index}")
        return self.inter_op[min(index, len(self.inter_op) - 1)]

    def close(self) -> None:
        """Ends the session's own threads (shared, named pools stay); steps in flight finish
        the nodes they hold."""
        if self.intra_op is not None:
            self.intra_op.close()
        for pool in self._owned:
            pool.shutdown(wait=False)
        self._owned.clear()
