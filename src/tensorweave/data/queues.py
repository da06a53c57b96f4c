"""TF1's queue classes: `tf.FIFOQueue`, `tf.RandomShuffleQueue`, `tf.PaddingFIFOQueue`.

Each builds its queue op (named `name`, as TF) and wraps the enqueue/dequeue/close ops with
TF's default op names (`fifo_queue_enqueue`, `fifo_queue_Dequeue`, `fifo_queue_DequeueMany`
...). Blocking happens when the ops run (see `runtime/kernels/cpu/queues.py`).
"""

from __future__ import annotations

from tensorweave import dtypes as _dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import queue_ops  # noqa: F401 - registers the ops
from tensorweave.ops.apply import apply_op
from tensorweave.shapes import TensorShape, as_shape

__all__ = ["QueueBase", "FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue"]


def _as_list(x) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


class QueueBase:
    """What every queue offers: enqueue/dequeue/close/size ops on one `queue_ref`."""

    def __init__(self, dtypes, shapes, names, queue_ref):
        """`shapes`: None or what `shape_list` returned. Raises ValueError when there is not
        one shape, or one name, per dtype."""
        self._dtypes = [_dtypes.as_dtype(d) for d in _as_list(dtypes)]
        if shapes is not None and len(shapes) != len(self._dtypes):
            raise ValueError(f"Queue shapes must have the same length as dtypes, received "
                             f"len(shapes)={len(shapes)}, len(dtypes)={len(self._dtypes)}")
        self._shapes = shapes if shapes is not None else \
            [TensorShape(None)] * len(self._dtypes)
        if names is not None:
            names = _as_list(names)
            if len(names) != len(self._dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
        self._names = names
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    # -- properties -------------------------------------------------------------------------
    @property
    def queue_ref(self):
        return self._queue_ref

    @property
    def name(self) -> str:
        return self._queue_ref.op.name

    @property
    def dtypes(self) -> list:
        return self._dtypes

    @property
    def shapes(self) -> list:
        return self._shapes

    @property
    def names(self):
        return self._names

    # -- helpers ----------------------------------------------------------------------------
    def _flatten(self, vals) -> list:
        if self._names is None:
            return _as_list(vals)
        if not isinstance(vals, dict):
            raise ValueError("Queue with names must be enqueued with a dictionary")
        if sorted(vals) != sorted(self._names):
            raise ValueError(f"Dictionary keys {sorted(vals)} do not match queue names "
                             f"{sorted(self._names)}")
        return [vals[k] for k in self._names]

    def _convert(self, vals, many: bool) -> list:
        vals = self._flatten(vals)
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Expected {len(self._dtypes)} components, got {len(vals)}")
        out = []
        for i, (v, dt, shape) in enumerate(zip(vals, self._dtypes, self._shapes)):
            t = convert_to_tensor(v, dtype=dt, name=f"component_{i}")
            got = t.get_shape()
            if many and got.ndims is not None:
                got = TensorShape(got.as_tuple()[1:]) if got.ndims else TensorShape(None)
            if not shape.is_compatible_with(got):
                raise ValueError(f"Shapes {got} and {shape} are incompatible")
            out.append(t)
        return out

    def _result(self, tensors, batch=None, batched: bool = False):
        tensors = _as_list(tensors)
        if len(tensors) == 1 and isinstance(tensors[0], list):
            tensors = tensors[0]
        for t, shape in zip(tensors, self._shapes):
            dims = shape.as_tuple()
            if dims is None:
                continue
            t.set_shape(TensorShape(((batch,) if batched else ()) + tuple(dims)))
        if self._names is not None:
            return dict(zip(self._names, tensors))
        return tensors[0] if len(tensors) == 1 else tensors

    # -- ops --------------------------------------------------------------------------------
    def enqueue(self, vals, name=None):
        """Enqueues one element; the op blocks while the queue is full."""
        with name_scope(name, f"{self._name}_enqueue", []) as scope:
            vals = self._convert(vals, many=False)
            return apply_op("QueueEnqueueV2", self._queue_ref, vals, name=scope)

    def enqueue_many(self, vals, name=None):
        """Enqueues the slices of `vals` along dimension 0."""
        with name_scope(name, f"{self._name}_EnqueueMany", []) as scope:
            vals = self._convert(vals, many=True)
            return apply_op("QueueEnqueueManyV2", self._queue_ref, vals, name=scope)

    def dequeue(self, name=None):
        """One element; the op blocks while empty, raises OutOfRangeError closed and empty."""
        name = name or f"{self._name}_Dequeue"
        out = apply_op("QueueDequeueV2", self._queue_ref, component_types=self._dtypes,
                       name=name)
        return self._result(out)

    def dequeue_many(self, n, name=None):
        """`n` elements stacked along a new dimension 0."""
        name = name or f"{self._name}_DequeueMany"
        out = apply_op("QueueDequeueManyV2", self._queue_ref, n,
                       component_types=self._dtypes, name=name)
        return self._result(out, _static_int(n), batched=True)

    def dequeue_up_to(self, n, name=None):
        """Like `dequeue_many`, but a closed queue hands out its last, smaller batch."""
        name = name or f"{self._name}_DequeueUpTo"
        out = apply_op("QueueDequeueUpToV2", self._queue_ref, n,
                       component_types=self._dtypes, name=name)
        return self._result(out, None, batched=True)

    def close(self, cancel_pending_enqueues=False, name=None):
        name = name or f"{self._name}_Close"
        return apply_op("QueueCloseV2", self._queue_ref,
                        cancel_pending_enqueues=cancel_pending_enqueues, name=name)

    def is_closed(self, name=None):
        return apply_op("QueueIsClosedV2", self._queue_ref,
                        name=name or f"{self._name}_Is_Closed")

    def size(self, name=None):
        return apply_op("QueueSizeV2", self._queue_ref, name=name or f"{self._name}_Size")


def _static_int(n):
    if isinstance(n, int):
        return n
    from tensorweave.ops.shape_inference import constant_value
    v = constant_value(n)
    return None if v is None else int(v)


def shape_list(shapes, partial: bool = False) -> list[TensorShape] | None:
    """TF's reading of a queue's `shapes` (`data_flow_ops._as_shape_list`): None; one
    TensorShape; a flat list of ints (or None) is ONE shape (`[28, 28]`, and `[]` a scalar);
    else a list of shapes, one per component. Shapes must be fully defined unless `partial`
    (PaddingFIFOQueue, which then needs a list of shapes).

    Raises:
      TypeError: `shapes` is not a TensorShape, list or tuple.
      ValueError: a partial shape where not allowed.
    """
    if partial and (not isinstance(shapes, (list, tuple)) or not shapes or
                    any(d is None or isinstance(d, int) for d in shapes)):
        raise ValueError("When providing partial shapes, a list of shapes must be provided.")
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (list, tuple)):
        raise TypeError("shapes must be a TensorShape or a list or tuple of TensorShapes.")
    if all(d is None or isinstance(d, int) for d in shapes):
        shapes = [shapes]
    shapes = [as_shape(s) for s in shapes]
    if not partial and any(not s.is_fully_defined() for s in shapes):
        raise ValueError(f"All shapes must be fully defined: {shapes}")
    if any(s.dims is None for s in shapes):
        raise ValueError(f"All shapes must have a defined rank: {shapes}")
    return shapes


def _one_per_dtype(shapes, dtypes) -> None:
    """Checks what QueueBase checks, before the queue op is added to the graph."""
    n = len(_as_list(dtypes))
    if shapes is not None and len(shapes) != n:
        raise ValueError(f"Queue shapes must have the same length as dtypes, received "
                         f"len(shapes)={len(shapes)}, len(dtypes)={n}")


class FIFOQueue(QueueBase):
    """A queue handing out elements first-in first-out."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        shapes = shape_list(shapes)
        _one_per_dtype(shapes, dtypes)
        ref = apply_op("FIFOQueueV2", component_types=_as_list(dtypes),
                       shapes=shapes or [], capacity=capacity,
                       shared_name=shared_name or "", name=name)
        super().__init__(dtypes, shapes, names, ref)


class PaddingFIFOQueue(QueueBase):
    """A FIFO queue whose `dequeue_many` pads dimensions declared None to the batch's max."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        dtypes = _as_list(dtypes)
        shapes = shape_list(shapes, partial=True)
        if len(shapes) != len(dtypes):
            raise ValueError(f"Shapes must be provided for all components, but received "
                             f"{len(dtypes)} dtypes and {len(shapes)} shapes.")
        ref = apply_op("PaddingFIFOQueueV2", component_types=dtypes, shapes=shapes,
                       capacity=capacity, shared_name=shared_name or "", name=name)
        super().__init__(dtypes, shapes, names, ref)


class RandomShuffleQueue(QueueBase):
    """A queue handing out a random element, keeping `min_after_dequeue` until closed."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None,
                 seed=None, shared_name=None, name="random_shuffle_queue"):
        from tensorweave.ops.random_ops import get_seed
        seed1, seed2 = get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        shapes = shape_list(shapes)
        _one_per_dtype(shapes, dtypes)
        ref = apply_op("RandomShuffleQueueV2", component_types=_as_list(dtypes),
                       shapes=shapes or [], capacity=capacity,
                       min_after_dequeue=min_after_dequeue, seed=seed1, seed2=seed2,
                       shared_name=shared_name or "", name=name)
        super().__init__(dtypes, shapes, names, ref)
