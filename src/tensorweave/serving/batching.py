"""Server-side batching (TF Serving's `--enable_batching`): concurrent requests for the same
version and signature, with inputs of the same dtypes and per-row shapes, are joined along
dimension 0 and run as one step; each request gets its rows of every output back.

A batch runs when it holds `max_batch_size` rows or its oldest request has waited
`batch_timeout_micros`. At most `max_enqueued_batches` batches' worth of requests wait or
run; more are refused with UNAVAILABLE. A request larger than `max_batch_size` rows runs alone.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from concurrent import futures
from dataclasses import dataclass, field

import numpy as np

from tensorweave import errors


@dataclass(frozen=True)
class BatchingOptions:
    max_batch_size: int = 32
    batch_timeout_micros: int = 1000
    max_enqueued_batches: int = 100
    num_batch_threads: int = 4


@dataclass
class _Task:
    inputs: dict
    rows: int
    arrived: float
    done: threading.Event = field(default_factory=threading.Event)
    result: dict | None = None
    error: BaseException | None = None


def _key(servable, signature, inputs: dict, keys) -> tuple | None:
    """What a batch's requests share; None when a request cannot be batched."""
    parts = []
    rows = {np.shape(v)[0] if np.ndim(v) else None for v in inputs.values()}
    if len(rows) != 1 or None in rows:
        return None
    for k in sorted(inputs):
        v = np.asarray(inputs[k])
        parts.append((k, v.dtype.str, v.shape[1:]))
    return (id(servable), signature, tuple(parts), tuple(keys))


class Batcher:
    """Joins concurrent `run(servable, signature, inputs, keys)` calls (see module doc)."""

    def __init__(self, options: BatchingOptions):
        self.options = options
        self._cond = threading.Condition()
        self._queues: dict[tuple, deque] = {}
        self._servables: dict[tuple, object] = {}
        self._waiting = 0
        self._stopped = False
        self._pool = futures.ThreadPoolExecutor(options.num_batch_threads,
                                                thread_name_prefix="batch")
        self._thread = threading.Thread(target=self._schedule, name="batcher", daemon=True)
        self._thread.start()
        self.batches_run = 0

    def run(self, servable, signature, inputs: dict, keys=(), timeout: float = 120.0) -> dict:
        """The outputs of this request, run in a batch with others (blocks until done).

        Raises:
          UnavailableError: the queue is full. DeadlineExceededError: not run in `timeout`.
          What the signature run raises (for every request of the batch).
        """
        key = _key(servable, signature, inputs, keys)
        rows = np.shape(next(iter(inputs.values())))[0] if key is not None else 0
        if key is None or rows > self.options.max_batch_size:
            return servable.run(signature, inputs, keys)
        task = _Task({k: np.asarray(v) for k, v in inputs.items()}, rows, time.monotonic())
        self._enqueue(key, servable, task)
        if not task.done.wait(timeout):
            raise errors.DeadlineExceededError(None, None, "batched request was not run in "
                                               f"{timeout:.0f} s")
        if task.error is not None:
            raise task.error
        assert task.result is not None   # NOTE: a finished task has an error or a result
        return task.result

    def _enqueue(self, key, servable, task: _Task) -> None:
        limit = self.options.max_enqueued_batches * self.options.max_batch_size
        with self._cond:
            if self._waiting >= limit:
                raise errors.UnavailableError(None, None, "The batch scheduling queue to which "
                                              "this task was submitted is full")
            self._queues.setdefault(key, deque()).append(task)
            self._servables[key] = servable
            self._waiting += 1
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._thread.join(timeout=5)
        self._pool.shutdown(wait=True)

    # -- the scheduler --------------------------------------------------------------------------
    def _schedule(self) -> None:
        timeout = self.options.batch_timeout_micros / 1e6
        with self._cond:
            while not self._stopped:
                wait = self._dispatch_ready(timeout)
                self._cond.wait(wait)

    def _dispatch_ready(self, timeout: float) -> float | None:
        """Starts every full or timed-out batch; returns how long until the next is due."""
        now, next_due = time.monotonic(), None
        for key in list(self._queues):
            queue = self._queues[key]
            while queue:
                rows = sum(t.rows for t in queue)
                due = queue[0].arrived + timeout
                if rows < self.options.max_batch_size and due > now:
                    next_due = due if next_due is None else min(next_due, due)
                    break
                batch = self._take(queue)
                self._pool.submit(self._run_batch, self._servables[key], key, batch)
            if not queue:
                del self._queues[key]
        return None if next_due is None else max(next_due - now, 0.0)

    def _take(self, queue: deque) -> list[_Task]:
        batch, rows = [], 0
        while queue and rows + queue[0].rows <= self.options.max_batch_size:
            task = queue.popleft()
            batch.append(task)
            rows += task.rows
        return batch

    def _run_batch(self, servable, key, batch: list[_Task]) -> None:
        signature, keys = key[1], key[3]
        try:
            joined = {k: np.concatenate([t.inputs[k] for t in batch]) for k in batch[0].inputs}
            outputs = servable.run(signature, joined, keys)
            self._split(outputs, batch)
        except BaseException as e:  # NOTE: every request of the batch gets the error
            for t in batch:
                t.error = e
        finally:
            with self._cond:
                self.batches_run += 1
                self._waiting -= len(batch)   # NOTE: counted until run, queued or not
            for t in batch:
                t.done.set()

    @staticmethod
    def _split(outputs: dict, batch: list[_Task]) -> None:
        total = sum(t.rows for t in batch)
        for k, v in outputs.items():
            if np.ndim(v) == 0 or np.shape(v)[0] != total:
                raise errors.FailedPreconditionError(
                    None, None, f"Batched output tensor {k!r}'s 0th dimension does not equal "
                    "the sum of the 0th dimension sizes of the input tensors")
        start = 0
        for t in batch:
            t.result = {k: np.asarray(v)[start:start + t.rows] for k, v in outputs.items()}
            start += t.rows
