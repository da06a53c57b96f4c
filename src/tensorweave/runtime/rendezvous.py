"""The per-step rendezvous: where `_Send` leaves a tensor and `_Recv` picks it up.

Contract (as TF's rendezvous.h):
- `send` never blocks; sending the same key twice in a step is an error.
- `recv` blocks until the key's value arrives, the rendezvous is aborted, the deadline
  passes, or every other participant has finished (then nothing can send it: InternalError);
  an abort wakes every blocked receiver with the abort's error (sticky: later calls fail).
- Keys are TF's: `src_device;src_incarnation(16 hex);dst_device;tensor_name;frame_id:iter_id`.
Thread-safety: every method may be called from any thread.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from tensorweave import errors


def make_key(src_device: str, incarnation: int, dst_device: str, tensor_name: str,
             frame_id: int = 0, iter_id: int = 0) -> str:
    return f"{src_device};{incarnation:016x};{dst_device};{tensor_name};{frame_id}:{iter_id}"


def parse_key(key: str) -> tuple[str, int, str, str, tuple[int, int]]:
    """Splits a key. Raises InvalidArgumentError unless it has TF's five parts."""
    parts = key.split(";")
    if len(parts) != 5 or not parts[3]:
        raise errors.InvalidArgumentError(None, None, f"Invalid rendezvous key: {key}")
    frame, _, it = parts[4].partition(":")
    return parts[0], int(parts[1], 16), parts[2], parts[3], (int(frame), int(it))


def _describe(keys) -> str:
    """Tensor names of `keys`, each once; a loop's with the iterations waited for."""
    iters: dict[str, list[str]] = {}
    for key in keys:
        parts = key.split(";")
        frame, _, it = parts[4].partition(":")
        iters.setdefault(parts[3], [])
        if frame != "0":
            iters[parts[3]].append(it)
    return ", ".join(f"{n} (iteration {', '.join(its)})" if its else n
                     for n, its in iters.items())


class _Waiter:
    """One blocked receiver: a lock held until a send of a key it waits for (or an abort, or a
    participant finishing) releases it. Woken at most once; `wake` runs under the
    rendezvous's lock."""

    __slots__ = ("lock", "woken")

    def __init__(self):
        self.lock = threading.Lock()
        self.lock.acquire()
        self.woken = False

    def wake(self) -> None:
        if not self.woken:
            self.woken = True
            self.lock.release()


class Rendezvous:
    """One step's table of sent tensors.

    NOTE: a send wakes only the receivers waiting for its key (a waiter per blocked receiver,
    filed under each key it waits for), not every thread waiting in the step: with a dozen
    receives in flight a condition's notify_all cost a thread switch per waiter per send.
    """

    def __init__(self, participants: int = 0):
        """`participants`: how many partitions take part (0: unknown, no liveness check)."""
        self._table: dict[str, tuple[object, bool]] = {}
        self._cond = threading.Lock()  # NOTE: subclasses guard their own state with it too
        self._waiters: dict[str, list[_Waiter]] = {}
        self._error: errors.OpError | None = None
        self._active = participants

    def done(self) -> None:
        """A participant finished: it will send nothing more."""
        with self._cond:
            self._active -= 1
            if self._active <= 1:
                self._wake_all()

    def _wake_all(self) -> None:
        for waiters in self._waiters.values():
            for w in waiters:
                w.wake()

    def _check_senders(self, keys) -> None:
        if self._active == 1:  # only the waiting receiver is left
            names = _describe(keys)
            raise errors.InternalError(
                None, None, f"Tensor(s) {names} will never arrive: every sending partition "
                            "of the step has finished")

    def send(self, key: str, value, is_dead: bool = False) -> None:
        with self._cond:
            if self._error is not None:
                raise self._error
            if key in self._table:
                raise errors.InternalError(None, None, f"Send of an already sent tensor: {key}")
            self._table[key] = (value, is_dead)
            for w in self._waiters.get(key, ()):
                w.wake()

    def recv(self, key: str, deadline: float | None = None) -> tuple[object, bool]:
        """(value, is_dead) for `key`. Raises the abort error or DeadlineExceededError."""
        table = self._table
        while True:
            with self._cond:
                if key in table:
                    return table.pop(key)
                waiter, left = self._park([key], deadline, "tensor")
            self._sleep(waiter, [key], left)

    def wait_any(self, keys: list[str], deadline: float | None = None) -> int:
        """Blocks until one of `keys` has arrived; returns its position in `keys`.

        Raises the abort error, or DeadlineExceededError naming the tensors waited for.
        """
        table = self._table
        while True:
            with self._cond:
                for k, key in enumerate(keys):
                    if key in table:
                        return k
                waiter, left = self._park(keys, deadline, "tensors")
            self._sleep(waiter, keys, left)

    def _park(self, keys: list[str], deadline: float | None, what: str):
        """(a waiter filed under `keys`, seconds it may sleep); under the lock, after the
        keys were found missing. Raises the abort error, a liveness failure, or
        DeadlineExceededError."""
        if self._error is not None:
            raise self._error
        self._check_senders(keys)
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            names = _describe(keys)
            src = f" from {keys[0].split(';')[0]}" if len(keys) == 1 else ""
            raise errors.DeadlineExceededError(
                None, None, f"Timed out waiting for {what} {names}{src}")
        waiter = _Waiter()
        for key in keys:
            self._waiters.setdefault(key, []).append(waiter)
        return waiter, left

    def _sleep(self, waiter: _Waiter, keys: list[str], left: float | None) -> None:
        waiter.lock.acquire(True, -1 if left is None else left)
        with self._cond:
            for key in keys:
                waiters = self._waiters.get(key)
                if waiters is not None:
                    waiters.remove(waiter)
                    if not waiters:
                        del self._waiters[key]

    def abort(self, error: errors.OpError) -> None:
        """Fails this step: blocked and future receivers get `error` (the first abort wins)."""
        with self._cond:
            if self._error is None:
                self._error = error
            self._wake_all()

    @property
    def error(self) -> errors.OpError | None:
        return self._error

    def transfers(self, dst_device: str) -> list[dict]:
        """The tensors this step pulled over the network for `dst_device`, as
        `{"tensor", "src", "dst", "bytes", "start", "end"}` (wall-clock seconds). A rendezvous
        whose tensors never leave the process has none."""
        return []


_MAX_STEPS = 4096       # steps in flight on one task (far more than any cluster runs)
_CLEANED_MEMORY = 4096  # step ids remembered after cleanup, so late receivers fail at once


class StepTable:
    """One rendezvous per step id on a task, created on first use by a run or a receiver.

    A step cleaned up stays remembered (the last `_CLEANED_MEMORY`), so a receive that comes
    late gets the step's abort at once instead of waiting on a fresh, empty rendezvous. At
    most `max_steps` steps are kept: beyond that the oldest is aborted and dropped.
    """

    def __init__(self, factory=None, max_steps: int = _MAX_STEPS):
        self._factory = factory or (lambda step_id: Rendezvous())
        self._steps: OrderedDict[int, Rendezvous] = OrderedDict()
        self._max = max_steps
        self._cleaned: OrderedDict[int, None] = OrderedDict()
        self._lock = threading.Lock()

    def find(self, step_id: int) -> Rendezvous:
        with self._lock:
            r = self._steps.get(step_id)
            if r is None:
                r = self._steps[step_id] = self._factory(step_id)
                if step_id in self._cleaned:
                    r.abort(_cleaned_error(step_id))
                while len(self._steps) > self._max:  # NOTE: bounded whatever callers send
                    _, old = self._steps.popitem(last=False)
                    old.abort(errors.AbortedError(None, None, "Step evicted: too many steps "
                                                              "in flight on this task"))
            return r

    def cleanup(self, step_id: int) -> None:
        with self._lock:
            r = self._steps.pop(step_id, None)
            self._cleaned[step_id] = None
            while len(self._cleaned) > _CLEANED_MEMORY:
                self._cleaned.popitem(last=False)
        if r is not None:
            r.abort(_cleaned_error(step_id))

    def abort_all(self, error: errors.OpError) -> None:
        """Aborts every step's rendezvous with `error` (waiting receivers wake with it)."""
        with self._lock:
            steps = list(self._steps.values())
        for r in steps:
            r.abort(error)

    def __len__(self) -> int:
        return len(self._steps)


def _cleaned_error(step_id: int) -> errors.OpError:
    return errors.AbortedError(None, None, f"Step {step_id} was cleaned up (it ended or failed)")
