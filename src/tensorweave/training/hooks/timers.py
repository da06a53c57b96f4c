"""When a periodic hook fires: every N steps or every N seconds (TF's `SecondOrStepTimer`)."""

from __future__ import annotations

import time


class SecondOrStepTimer:
    """Triggers at most once per step, every `every_secs` seconds or every `every_steps` steps.

    Raises (constructor):
      ValueError: neither or both of `every_secs` and `every_steps` given.
    """

    def __init__(self, every_secs=None, every_steps=None):
        self.reset()
        self._every_secs = every_secs
        self._every_steps = every_steps
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")

    def reset(self) -> None:
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step) -> bool:
        """True on the first call, never twice for one step, then when the period has passed."""
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_triggered_time + self._every_secs
        return step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Records a trigger at `step`; returns (seconds, steps) since the last one, or
        (None, None) for the first."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time, self._last_triggered_step = now, step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step


class NeverTriggerTimer(SecondOrStepTimer):
    """A timer that never fires (for hooks that act only at the end)."""

    def __init__(self):  # noqa: D107 - no period to check
        self.reset()

    def should_trigger_for_step(self, step) -> bool:
        del step
        return False

    def update_last_triggered_step(self, step):
        del step
        return None, None
