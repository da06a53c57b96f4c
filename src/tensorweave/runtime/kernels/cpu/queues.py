"""CPU kernels of TF1's queues (FIFOQueueV2, RandomShuffleQueueV2, PaddingFIFOQueueV2, ...).

A `QueueState` lives in the device's resource container (shared by `shared_name`, else one per
node and session) and flows as the value of the queue's `resource` handle.

Blocking contract: enqueue waits while the queue is full, dequeue while it holds too few
elements. Waiters sleep on one condition in short slices, and between slices honour the step
(`ctx.check()`: DeadlineExceededError, step cancellation) and the session (`close()` wakes
every waiter with CancelledError). `close_queue` makes later enqueues fail with
CancelledError, wakes dequeuers (a closed queue hands out what is left, then raises
OutOfRangeError) and, with `cancel_pending_enqueues`, cancels waiting enqueues.
Thread-safety: every method may be called from any thread.
"""

from __future__ import annotations

import collections
import itertools
import threading

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.registry import register_kernel

_SLICE_S = 0.05
_IDS = itertools.count()


class QueueState:
    """The runtime queue: elements (tuples of arrays), capacity, closed flag, waiters."""

    kind = "FIFOQueue"

    def __init__(self, name: str, dtypes: list, shapes: list, capacity: int):
        self.name = name
        self.dtypes = [_np_dtype(d) for d in dtypes]
        self.shapes = shapes            # list of tuples (None dims allowed), or [] for unknown
        self.capacity = capacity        # < 0: unbounded
        self.items: collections.deque = collections.deque()
        self.cond = threading.Condition()
        self.closed = False
        self.cancel_epoch = 0           # bumped by close(cancel_pending_enqueues=True)
        self.torn_down = False

    def __repr__(self) -> str:
        return f"<{self.kind} '{self.name}' size={len(self.items)}>"

    # -- waiting ----------------------------------------------------------------------------
    def _wait(self, ctx, ready) -> None:
        """Waits (holding `cond`) until `ready()`; raises on step deadline or session close."""
        while not ready():
            if self.torn_down:
                raise errors.CancelledError(None, None, f"{self.kind} '{self.name}' was "
                                            "cancelled (its session was closed).")
            if ctx is not None:
                ctx.check()
                left = ctx.remaining(_SLICE_S)
            else:
                left = _SLICE_S
            self.cond.wait(max(left, 0.001))

    def close(self) -> None:
        """Session teardown: wakes every waiter with CancelledError."""
        with self.cond:
            self.torn_down = True
            self.closed = True
            self.cond.notify_all()

    def close_queue(self, cancel_pending_enqueues: bool) -> None:
        with self.cond:
            self.closed = True
            if cancel_pending_enqueues:
                self.cancel_epoch += 1
            self.cond.notify_all()

    def size(self) -> int:
        with self.cond:
            return len(self.items)

    # -- enqueue ----------------------------------------------------------------------------
    def _closed_error(self) -> errors.CancelledError:
        return errors.CancelledError(None, None, f"{self.kind} '{self.name}' is closed.")

    def _check_element(self, comps) -> tuple:
        if len(comps) != len(self.dtypes):
            raise errors.InvalidArgumentError(
                None, None, f"Expected {len(self.dtypes)} components, got {len(comps)}")
        out = []
        for i, c in enumerate(comps):
            # NOTE: a copy: the input may be a variable's buffer that assign ops mutate later.
            c = np.array(c, dtype=self.dtypes[i])
            if self.shapes and not _compatible(self.shapes[i], c.shape):
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch in tuple component {i}. Expected "
                    f"{_shape_str(self.shapes[i])}, got {_shape_str(c.shape)}")
            out.append(c)
        return tuple(out)

    def enqueue(self, ctx, elements: list) -> None:
        """Appends `elements` (tuples) one at a time, waiting for room each time."""
        elements = [self._check_element(e) for e in elements]
        with self.cond:
            if self.closed:
                raise self._closed_error()
            epoch = self.cancel_epoch
            for el in elements:
                self._wait(ctx, lambda: self.cancel_epoch != epoch or self.capacity < 0
                           or len(self.items) < self.capacity)
                if self.cancel_epoch != epoch:
                    raise self._closed_error()
                self.items.append(el)
                self.cond.notify_all()

    # -- dequeue ----------------------------------------------------------------------------
    def _available(self) -> int:
        return len(self.items)

    def _take(self, n: int) -> list:
        return [self.items.popleft() for _ in range(n)]

    def _restore(self, taken: list) -> None:
        for el in reversed(taken):
            self._put_back(el)

    def _put_back(self, el) -> None:
        self.items.appendleft(el)

    def dequeue(self, ctx, n: int, allow_smaller: bool = False) -> list:
        """Removes `n` elements (fewer when closed and `allow_smaller`).

        Elements are taken as they arrive (so `n` may exceed the capacity, as in TF) and put
        back at the front when the dequeue fails.

        Raises:
          OutOfRangeError: the queue is closed and holds fewer than `n` (or, with
            `allow_smaller`, no) elements.
          DeadlineExceededError / CancelledError: the step's deadline, or session close.
        """
        taken: list = []
        with self.cond:
            try:
                self._wait(ctx, lambda: self._collect(taken, n))
            except BaseException:
                self._restore(taken)
                raise
            if len(taken) < n:          # closed: hand out the rest or fail
                self._restore(taken)
                taken = self._closed_remainder(n, allow_smaller)
            self.cond.notify_all()
            return taken

    def _collect(self, taken: list, n: int) -> bool:
        """Moves available elements into `taken`; True once done or the queue is closed."""
        k = min(self._available(), n - len(taken))
        if k > 0:
            taken.extend(self._take(k))
            self.cond.notify_all()
        return len(taken) >= n or self.closed

    def _closed_remainder(self, n: int, allow_smaller: bool) -> list:
        have = len(self.items)
        if self.torn_down:
            raise errors.CancelledError(None, None, f"{self.kind} '{self.name}' was "
                                        "cancelled (its session was closed).")
        if have >= n or (allow_smaller and have > 0):
            return self._take(min(n, have))
        raise errors.OutOfRangeError(
            None, None, f"{self.kind} '{self.name}' is closed and has insufficient "
            f"elements (requested {n}, current size {have})")

    def stack(self, elements: list) -> tuple:
        """Batches `elements` component-wise (PaddingFIFOQueue pads first)."""
        if not elements:
            return tuple(np.zeros((0,) + _zero_shape(self.shapes[i] if self.shapes else ()),
                                  dtype=d) for i, d in enumerate(self.dtypes))
        return tuple(np.stack([e[i] for e in elements]) for i in range(len(self.dtypes)))


class RandomShuffleQueueState(QueueState):
    """Dequeues a uniformly random element, keeping `min_after_dequeue` until closed."""

    kind = "RandomShuffleQueue"

    def __init__(self, name, dtypes, shapes, capacity, min_after_dequeue: int, seed: int,
                 seed2: int):
        super().__init__(name, dtypes, shapes, capacity)
        self.items = []  # type: ignore[assignment]
        self.min_after_dequeue = min_after_dequeue
        self.rng = np.random.default_rng(None if (seed == 0 and seed2 == 0) else [seed, seed2])

    def _put_back(self, el) -> None:
        self.items.append(el)

    def _available(self) -> int:
        if self.closed:
            return len(self.items)
        return max(len(self.items) - self.min_after_dequeue, 0)

    def _take(self, n: int) -> list:
        out = []
        for _ in range(n):
            j = int(self.rng.integers(len(self.items)))
            self.items[j], self.items[-1] = self.items[-1], self.items[j]
            out.append(self.items.pop())
        return out


class PaddingFIFOQueueState(QueueState):
    """A FIFO queue whose batches pad unknown dimensions with zeros to the batch's maximum."""

    kind = "PaddingFIFOQueue"

    def stack(self, elements: list) -> tuple:
        if not elements:
            return super().stack(elements)
        out = []
        for i, dt in enumerate(self.dtypes):
            parts = [e[i] for e in elements]
            shape = tuple(max(p.shape[k] for p in parts) for k in range(parts[0].ndim))
            fill = b"" if dt == np.object_ else 0
            batch = np.full((len(parts),) + shape, fill, dtype=dt)
            for j, p in enumerate(parts):
                batch[(j,) + tuple(slice(0, s) for s in p.shape)] = p
            out.append(batch)
        return tuple(out)


def _np_dtype(d) -> np.dtype:
    return d.np_dtype if hasattr(d, "np_dtype") else np.dtype(d)


def _compatible(want, got) -> bool:
    if want is None:
        return True
    return len(want) == len(got) and all(w is None or w == g for w, g in zip(want, got))


def _shape_str(shape) -> str:
    if shape is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _zero_shape(shape) -> tuple:
    return tuple(0 if d is None else d for d in (shape or ()))


# -- queue kernels ---------------------------------------------------------------------------


def _shapes(node) -> list:
    out = []
    for s in node.attr("shapes") or []:
        out.append(None if s is None else tuple(getattr(s, "as_tuple", lambda s=s: s)()))
    return out


def _queue_factory(make):
    def factory(node):
        key = node.attr("shared_name") or f"_queue/{node.name}"
        name = node.attr("shared_name") or f"_{next(_IDS)}_{node.name}"

        def create():
            return make(node, name)
        if node.resources is None:
            q = create()
        else:
            q = node.resources.lookup_or_create(node.attr("container") or "", key, create)
        if not isinstance(q, QueueState):
            raise errors.InvalidArgumentError(None, None, f"Resource '{key}' is not a queue")
        return lambda: q
    return factory


def _fifo(node, name):
    return QueueState(name, node.attr("component_types"), _shapes(node), node.attr("capacity"))


def _padding(node, name):
    return PaddingFIFOQueueState(name, node.attr("component_types"), _shapes(node),
                                 node.attr("capacity"))


def _shuffle(node, name):
    return RandomShuffleQueueState(name, node.attr("component_types"), _shapes(node),
                                   node.attr("capacity"), node.attr("min_after_dequeue"),
                                   node.attr("seed"), node.attr("seed2"))


register_kernel("FIFOQueueV2")(_queue_factory(_fifo))
register_kernel("PaddingFIFOQueueV2")(_queue_factory(_padding))
register_kernel("RandomShuffleQueueV2")(_queue_factory(_shuffle))


# -- queue operations ------------------------------------------------------------------------


@register_kernel("QueueEnqueueV2", context=True)
def _enqueue(node):
    def run(ctx, q, *comps):
        q.enqueue(ctx, [comps])
    return run


@register_kernel("QueueEnqueueManyV2", context=True)
def _enqueue_many(node):
    def run(ctx, q, *comps):
        comps = [np.asarray(c) for c in comps]
        n = comps[0].shape[0] if comps and comps[0].ndim else 0
        if any(c.ndim == 0 or c.shape[0] != n for c in comps):
            raise errors.InvalidArgumentError(
                None, None, "All input tensors must have the same size in the 0th dimension")
        q.enqueue(ctx, [tuple(c[i] for c in comps) for i in range(n)])
    return run


def _outputs(q, batch: tuple):
    return batch[0] if len(batch) == 1 else batch


@register_kernel("QueueDequeueV2", context=True)
def _dequeue(node):
    def run(ctx, q):
        (el,) = q.dequeue(ctx, 1)
        return _outputs(q, el)
    return run


def _dequeue_n(allow_smaller: bool):
    def factory(node):
        def run(ctx, q, n):
            n = int(n)
            if n < 0:
                raise errors.InvalidArgumentError(
                    None, None, f"Request failed because n is negative: {n}")
            return _outputs(q, q.stack(q.dequeue(ctx, n, allow_smaller)))
        return run
    return factory


register_kernel("QueueDequeueManyV2", context=True)(_dequeue_n(False))
register_kernel("QueueDequeueUpToV2", context=True)(_dequeue_n(True))


@register_kernel("QueueCloseV2")
def _close(node):
    cancel = bool(node.attr("cancel_pending_enqueues"))

    def run(q):
        q.close_queue(cancel)
    return run


@register_kernel("QueueSizeV2")
def _size(node):
    return lambda q: np.int32(q.size())


@register_kernel("QueueIsClosedV2")
def _is_closed(node):
    return lambda q: np.bool_(q.closed)
