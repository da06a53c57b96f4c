"""Queue op registrations (TF1's `FIFOQueueV2` family: names, inputs and attrs as TF).

A queue op outputs a scalar `resource` holding the runtime queue (see
`runtime/kernels/cpu/queues.py`). Every op here is stateful, so no pass folds, prunes as
duplicate or reorders it. The Python API (`tf.FIFOQueue` ...) is in `data/queues.py`.
"""

from __future__ import annotations

from tensorweave.ops.registry import register_op

OP_TYPES: list[str] = []   # every op type this module registers (for the test harness)

_QUEUE_ATTRS = ["component_types: list(type) >= 1", "shapes: list(shape) >= 0 = []",
                "capacity: int = -1", "container: string = ''", "shared_name: string = ''"]


def _scalar(ctx):
    return [()]


def _register(name, **kw):
    OP_TYPES.append(name)
    register_op(name, stateful=True, **kw)


def _queue(name, extra=()):
    _register(name, inputs=[], outputs=["handle: resource"],
              attrs=_QUEUE_ATTRS[:2] + list(extra) + _QUEUE_ATTRS[2:], shape_fn=_scalar)


_queue("FIFOQueueV2")
_queue("PaddingFIFOQueueV2")
_queue("RandomShuffleQueueV2", ["min_after_dequeue: int = 0", "seed: int = 0",
                                "seed2: int = 0"])

_ENQ = ["Tcomponents: list(type) >= 1", "timeout_ms: int = -1"]
_DEQ = ["component_types: list(type) >= 1", "timeout_ms: int = -1"]
_register("QueueEnqueueV2", inputs=["handle: resource", "components: Tcomponents"],
          attrs=_ENQ)
_register("QueueEnqueueManyV2", inputs=["handle: resource", "components: Tcomponents"],
          attrs=_ENQ)
_register("QueueDequeueV2", inputs=["handle: resource"],
          outputs=["components: component_types"], attrs=_DEQ)
_register("QueueDequeueManyV2", inputs=["handle: resource", "n: int32"],
          outputs=["components: component_types"], attrs=_DEQ)
_register("QueueDequeueUpToV2", inputs=["handle: resource", "n: int32"],
          outputs=["components: component_types"], attrs=_DEQ)
_register("QueueCloseV2", inputs=["handle: resource"],
          attrs=["cancel_pending_enqueues: bool = false"])
_register("QueueSizeV2", inputs=["handle: resource"], outputs=["size: int32"],
          shape_fn=_scalar)
_register("QueueIsClosedV2", inputs=["handle: resource"], outputs=["is_closed: bool"],
          shape_fn=_scalar)
