"""Per-step state shared by the kernels of one step: `StepContext` and the DEAD marker."""

from __future__ import annotations

import time

from tensorweave import errors


class _Dead:
    """The value of a dead tensor (the untaken side of a Switch)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<dead>"


DEAD = _Dead()


class StepContext:
    """What stateful kernels see of the running step.

    Thread-safety: `cancel` may be called from any thread; kernels that block wait in short
    slices (at most `remaining()`) and call `check()` between them.
    """

    __slots__ = ("step_id", "rendezvous", "deadline", "cancelled", "error", "stats",
                 "frame_id", "iter_id", "session_handle", "resources", "extra")

    def __init__(self, step_id: int, rendezvous=None, timeout_s: float | None = None,
                 stats=None, resources=None):
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
        if self.cancelled:
            raise self.error or errors.CancelledError(None, None, "Step was cancelled")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise errors.DeadlineExceededError(None, None, "Timed out waiting in the step")
