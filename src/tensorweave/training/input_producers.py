"""TF1's queue-based input pipeline: input producers and batching (`tf.train.batch` ...).

Each function builds a queue, its enqueue op(s) and a `QueueRunner` added to the
QUEUE_RUNNERS collection; `tf.train.start_queue_runners` runs them. With `num_epochs`, a
local variable `epochs` counts passes (run `tf.local_variables_initializer()` first, as in
TF1); after the last epoch the runner's enqueue fails with OutOfRangeError, the queue closes
and readers downstream raise OutOfRangeError once it drains.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.data.queues import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.shapes import TensorShape, as_shape
from tensorweave.training.queue_runner import QueueRunner, add_queue_runner

__all__ = ["limit_epochs", "input_producer", "string_input_producer", "range_input_producer",
           "slice_input_producer", "batch", "batch_join", "shuffle_batch",
           "shuffle_batch_join"]


def _summary_scalar(name, value) -> None:
    from tensorweave.ops.summary_ops import scalar
    scalar(name, value)


def limit_epochs(tensor, num_epochs=None, name=None):
    """`tensor`, raising OutOfRangeError after it has been evaluated `num_epochs` times."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    from tensorweave.ops.array_ops import identity
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.variables import Variable
    with name_scope(name, "limit_epochs", [tensor]) as scope:
        zero64 = constant(0, dtype=dtypes.int64)
        epochs = Variable(zero64, name="epochs", trainable=False,
                          collections=[GraphKeys.LOCAL_VARIABLES])
        counter = epochs.count_up_to(num_epochs)
        with control_dependencies([counter]):
            return identity(tensor, name=scope)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True,
                   seed=None, capacity=32, shared_name=None, summary_name=None, name=None,
                   cancel_op=None):
    """A FIFOQueue fed (by a QueueRunner) with the rows of `input_tensor`, epoch after epoch."""
    from tensorweave.ops.math_ops import cast
    from tensorweave.ops.random_ops import random_shuffle
    with name_scope(name, "input_producer", [input_tensor]) as scope:
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        dims = input_tensor.shape.as_tuple()
        rest = TensorShape(None if dims is None else dims[1:])
        element_shape = rest.merge_with(as_shape(element_shape) if element_shape is not None
                                        else TensorShape(None))
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        q = FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype.base_dtype],
                      shapes=[element_shape], shared_name=shared_name, name=scope)
        enq = q.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(q, [enq], cancel_op=cancel_op))
        if summary_name is not None:
            _summary_scalar(summary_name, cast(q.size(), dtypes.float32) * (1.0 / capacity))
        return q


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None,
                          capacity=32, shared_name=None, name=None, cancel_op=None):
    """A queue of the strings (usually file names) of `string_tensor`, for a reader."""
    from tensorweave.ops.array_ops import identity, size
    from tensorweave.ops.control_flow_ops import Assert
    from tensorweave.ops.math_ops import greater
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not hasattr(string_tensor, "op") and not len(string_tensor):
        raise ValueError(not_null_err)
    with name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        with control_dependencies([Assert(greater(size(string_tensor), 0), [not_null_err])]):
            string_tensor = identity(string_tensor)
        return input_producer(string_tensor, element_shape=[], num_epochs=num_epochs,
                              shuffle=shuffle, seed=seed, capacity=capacity,
                              shared_name=shared_name, name=scope,
                              summary_name=f"fraction_of_{capacity}_full", cancel_op=cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """A queue of the integers 0 .. limit-1."""
    from tensorweave.ops.creation_ops import range as range_
    with name_scope(name, "input_producer", [limit]) as scope:
        range_tensor = range_(limit)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, f"fraction_of_{capacity}_full", scope)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None,
                         capacity=32, shared_name=None, name=None):
    """One row (the same index) of each tensor of `tensor_list` per evaluation."""
    from tensorweave.ops.array_ops import shape
    from tensorweave.ops.gather_ops import gather
    with name_scope(name, "input_producer", list(tensor_list)):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = shape(tensor_list[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle,
                                     seed=seed, capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [gather(t, index) for t in tensor_list]


# -- batching --------------------------------------------------------------------------------


def _as_tensor_list(tensors) -> list:
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors)]
    return list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]


def _as_original_type(original, dequeued):
    if isinstance(original, dict):
        if not isinstance(dequeued, list):
            dequeued = [dequeued]
        return {k: dequeued[i] for i, k in enumerate(sorted(original))}
    return dequeued


def _validate(tensor_list) -> list:
    tensor_list = [convert_to_tensor(t) for t in tensor_list]
    if not tensor_list:
        raise ValueError("Expected at least one tensor in batch().")
    return tensor_list


def _merge_shapes(shape_list, enqueue_many) -> TensorShape:
    shape_list = [as_shape(s) for s in shape_list]
    if enqueue_many:
        shape_list = [TensorShape(s.as_tuple()[1:]) for s in shape_list]
    merged = shape_list[0]
    for s in shape_list[1:]:
        merged = merged.merge_with(s)
    return merged


def _shapes(tensor_list_list, shapes, enqueue_many) -> list:
    if shapes is not None:
        return [as_shape(s) for s in shapes]
    for tl in tensor_list_list:
        for t in tl:
            if t.shape.as_tuple() is None:
                raise ValueError(f"Cannot infer Tensor's rank: {t}")
    return [_merge_shapes([tl[i].shape for tl in tensor_list_list], enqueue_many)
            for i in range(len(tensor_list_list[0]))]


def _dtypes(tensor_list_list) -> list:
    types = [t.dtype.base_dtype for t in tensor_list_list[0]]
    for other in tensor_list_list[1:]:
        if [t.dtype.base_dtype for t in other] != types:
            raise TypeError("Expected types to be the same in all tensor lists")
    return types


def _dequeue(queue, batch_size, allow_smaller_final_batch, name):
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


def _enqueue_ops(queue, tensor_list_list, enqueue_many) -> list:
    fn = queue.enqueue_many if enqueue_many else queue.enqueue
    return [fn(tl) for tl in tensor_list_list]


def _batch_impl(tensors_list, batch_size, threads, capacity, enqueue_many, shapes,
                make_queue, summary, allow_smaller_final_batch, name, default_name):
    """Shared body: queue, enqueue ops (one per thread or per tensor list), runner, dequeue."""
    from tensorweave.ops.math_ops import cast
    flat = [_as_tensor_list(t) for t in tensors_list]
    from tensorweave.ops.constant_op import constant
    with name_scope(name, default_name, [t for tl in flat for t in tl]) as scope:
        flat = [_validate(tl) for tl in flat]
        constant(True)      # NOTE: TF's `keep_input` tensor ("batch/Const"); keeps op names
        types, shapes = _dtypes(flat), _shapes(flat, shapes, enqueue_many)
        queue = make_queue(types, shapes)
        ops = _enqueue_ops(queue, flat, enqueue_many)
        add_queue_runner(QueueRunner(queue, ops * threads if len(ops) == 1 else ops))
        summary_name, full = summary(queue, cast)
        _summary_scalar(summary_name, full)
        return _as_original_type(tensors_list[0],
                                 _dequeue(queue, batch_size, allow_smaller_final_batch, scope))


def _fifo_maker(capacity, dynamic_pad, shared_name):
    def make(types, shapes):
        cls = PaddingFIFOQueue if dynamic_pad else FIFOQueue
        return cls(capacity=capacity, dtypes=types, shapes=shapes, shared_name=shared_name)

    def summary(queue, cast):
        return (f"fraction_of_{capacity}_full",
                cast(queue.size(), dtypes.float32) * (1.0 / capacity))
    return make, summary


def _shuffle_maker(capacity, min_after_dequeue, seed, shared_name):
    if capacity <= min_after_dequeue:
        raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue "
                         f"{min_after_dequeue}.")

    def make(types, shapes):
        return RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue,
                                  seed=seed, dtypes=types, shapes=shapes,
                                  shared_name=shared_name)

    def summary(queue, cast):
        from tensorweave.ops.math_ops import maximum
        full = cast(maximum(0, queue.size() - min_after_dequeue), dtypes.float32) * (
            1.0 / (capacity - min_after_dequeue))
        return (f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full",
                full)
    return make, summary


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of `batch_size` of `tensors`, filled by `num_threads` runner threads."""
    make, summary = _fifo_maker(capacity, dynamic_pad, shared_name)
    return _batch_impl([tensors], batch_size, num_threads, capacity, enqueue_many, shapes,
                       make, summary, allow_smaller_final_batch, name, "batch")


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None,
               name=None):
    """Batches mixing the tensor lists of `tensors_list`, one runner thread per list."""
    make, summary = _fifo_maker(capacity, dynamic_pad, shared_name)
    return _batch_impl(list(tensors_list), batch_size, 1, capacity, enqueue_many, shapes,
                       make, summary, allow_smaller_final_batch, name, "batch_join")


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """Batches of randomly drawn elements, keeping `min_after_dequeue` in the queue."""
    make, summary = _shuffle_maker(capacity, min_after_dequeue, seed, shared_name)
    return _batch_impl([tensors], batch_size, num_threads, capacity, enqueue_many, shapes,
                       make, summary, allow_smaller_final_batch, name, "shuffle_batch")


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """`shuffle_batch` over several tensor lists, one runner thread per list."""
    make, summary = _shuffle_maker(capacity, min_after_dequeue, seed, shared_name)
    return _batch_impl(list(tensors_list), batch_size, 1, capacity, enqueue_many, shapes,
                       make, summary, allow_smaller_final_batch, name, "shuffle_batch_join")
