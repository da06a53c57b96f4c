"""Per-step state shared by the kernels of one step: `StepContext` and the DEAD marker."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from tensorweave import errors

if TYPE_CHECKING:
    from tensorweave.runtime.kernels.cpu.parallel import IntraOpPool


class _Dead:
    """The value of a dead tensor (the untaken side of a Switch)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<dead>"


DEAD = _Dead()


class Cancellation:
    """A switch that cancels every step watching it (TF's CancellationManager, flattened).

    `cancel(error)` sets the error once (the first wins); a `StepContext` made with
    `cancellation=` raises it from `check()`, so blocked kernels end within their wait slice.
    `parents` are switches that cancel this one too (a session's, a server's). Callbacks
    (`on_cancel`) run once, on the cancelling thread. Thread-safe.
    """

    __slots__ = ("_error", "_parents", "_callbacks", "_lock")

    def __init__(self, *parents: Cancellation | None):
        self._error: errors.OpError | None = None
        self._parents = tuple(p for p in parents if p is not None)
        self._callbacks: list = []
        self._lock = threading.Lock()

    @property
    def error(self) -> errors.OpError | None:
        if self._error is not None:
            return self._error
        for p in self._parents:
            if p.error is not None:
                return p.error
        return None

    def cancel(self, error: errors.OpError) -> None:
        with self._lock:
            if self._error is not None:
                return
            self._error = error
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            fn()

    def on_cancel(self, fn) -> None:
        """Runs `fn()` when this switch is cancelled (at once if it already is)."""
        with self._lock:
            if self._error is None:
                self._callbacks.append(fn)
                return
        fn()


class StepContext:
    """What stateful kernels see of the running step.

    Thread-safety: `cancel` may be called from any thread; kernels that block wait in short
    slices (at most `remaining()`) and call `check()` between them.
    """

    __slots__ = ("step_id", "rendezvous", "deadline", "cancelled", "error", "stats",
                 "frame_id", "iter_id", "session_handle", "resources", "extra", "cancellation",
                 "intra_op", "inter_op")

    def __init__(self, step_id: int, rendezvous=None, timeout_s: float | None = None,
                 stats=None, resources=None, cancellation: Cancellation | None = None):
        self.step_id = step_id
        self.rendezvous = rendezvous
        self.deadline = None if not timeout_s else time.monotonic() + timeout_s
        self.cancelled = False
        self.error: errors.OpError | None = None
        self.stats = stats
        self.frame_id = 0
        self.iter_id = 0
        self.session_handle = ""
        self.resources = resources
        self.extra: dict = {}
        self.cancellation = cancellation  # cancels the step from outside (session close, ...)
        # NOTE: the session's threads (runtime/threads.py); None: the process default kernel
        # threads, and the executor's own inter-op pool
        self.intra_op: IntraOpPool | None = None
        self.inter_op: Any = None

    def remaining(self, default: float | None = None) -> float | None:
        """Seconds left before the step's deadline (`default` when it has none)."""
        if self.deadline is None:
            return default
        left = self.deadline - time.monotonic()
        return left if default is None else min(left, default)

    def cancel(self, error: errors.OpError) -> None:
        if self.error is None:
            self.error = error
        self.cancelled = True

    def check(self) -> None:
        """Raises the step's error when it was cancelled or ran past its deadline."""
        if self.cancellation is not None and not self.cancelled:
            err = self.cancellation.error
            if err is not None:
                self.cancel(err)
        if self.cancelled:
            raise self.error or errors.CancelledError(None, None, "Step was cancelled")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise errors.DeadlineExceededError(None, None, "Timed out waiting in the step")
