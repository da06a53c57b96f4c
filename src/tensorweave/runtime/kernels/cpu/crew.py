"""The helper threads of `parallel.for_blocks`: a fixed crew, each woken by a lock hand-off.

A `ThreadPoolExecutor` hop (queue, Future, Condition) cost ~90 µs per parallel call on the
2-core benchmark VM (13-33 µs before the helper ran, ~45 µs from its end to the caller's
return); a kernel split in two 0.2 ms halves then gained nothing. Here each helper sleeps on
its own `go` lock and signals its `done` lock: one futex wake each way (~15 µs), measured
270 -> 190 µs for two 0.13 ms blocks.

`Crew.run(work)` calls work(1) .. work(n) on the helpers (each in a copy of the caller's
contextvars context, so numpy's error state applies) while the caller runs its own share,
then waits for all of them. One call at a time owns the crew: a caller that finds it busy
(another thread's kernel, or a nested call) gets False and runs everything itself. `work`
must return once no work is left, and must not raise (callers collect errors).
Helper threads are daemons marked as workers (`parallel` runs nested calls there inline).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable


class Crew:
    """`size` helper threads, started on first use."""

    def __init__(self, size: int, on_start: Callable[[], None]):
        self.size = size
        self._on_start = on_start
        self._owner = threading.Lock()
        self._helpers: list[_Helper] = []
        self.retired = False    # stopped, or a wait was cut short: calls get False

    def run(self, work: Callable[[int], None], caller_share: Callable[[], None]) -> bool:
        """work(1..size) on the helpers while `caller_share()` runs here; False (nothing run)
        when another call owns the crew."""
        if not self._owner.acquire(blocking=False):
            return False
        try:
            if self.retired:
                return False
            if not self._helpers:
                self._helpers = [_Helper(w, self._on_start) for w in range(1, self.size + 1)]
            for h in self._helpers:
                h.start_job(contextvars.copy_context(), work)
            try:
                caller_share()
            finally:
                self._wait_all()
            return True
        finally:
            self._owner.release()

    def _wait_all(self) -> None:
        """Waits for every helper's job. A wait cut short (KeyboardInterrupt in a notebook)
        retires the crew: its helpers end after their current block, and the next call of
        `parallel` starts a new crew (a late `done` must never answer a later job)."""
        try:
            for h in self._helpers:
                h.wait_job()
        except BaseException:
            self.retired = True
            for h in self._helpers:
                h.retire()
            self._helpers = []
            raise

    def stop(self) -> None:
        """Ends the helpers once any running call is done (later calls get False)."""
        with self._owner:
            self.retired = True
            for h in self._helpers:
                h.retire()
            self._helpers = []


class _Helper:
    def __init__(self, index: int, on_start: Callable[[], None]):
        self._go = threading.Lock()
        self._go.acquire()
        self._done = threading.Lock()
        self._done.acquire()
        self._job: tuple | None = None
        self._thread = threading.Thread(target=self._loop, args=(index, on_start), daemon=True,
                                        name=f"tw-intraop-{index}")
        self._thread.start()

    def start_job(self, ctx, work) -> None:
        self._job = (ctx, work)
        self._go.release()

    def wait_job(self) -> None:
        self._done.acquire()

    def retire(self) -> None:
        """Ends the thread after its current job (if any; a job not yet taken is dropped)."""
        self._job = (None, None)
        if self._go.locked():   # idle or busy (it took `go`): wake it to read the stop
            self._go.release()

    def _loop(self, index: int, on_start) -> None:
        on_start()
        while True:
            self._go.acquire()
            ctx, work = self._job
            if work is None:
                return
            try:
                ctx.run(work, index)
            finally:
                self._done.release()
