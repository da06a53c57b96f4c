"""`tf.train.replica_device_setter`: a device function for between-graph replication.

Variables (and the other ops of `STANDARD_PS_OPS`) go to the parameter-server job, one ps task
after another (`_RoundRobinStrategy`, or any `ps_strategy(op) -> task index`); every other op
goes to the worker device. With `merge_devices` (the default) fields already set on the op by
inner `tf.device` scopes win over the chosen device, field by field, exactly as in TensorFlow:

    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        v1 = tf.Variable(...)   # /job:ps/task:0
        v2 = tf.Variable(...)   # /job:ps/task:1
        y = v1 + v2             # /job:worker

`GreedyLoadBalancingStrategy(num_tasks, byte_size_load_fn)` (TF's `tf.contrib.training`) puts
each variable on the least-loaded ps task instead.
"""

from __future__ import annotations

import logging

import numpy as np

from tensorweave.runtime.device import DeviceSpec

__all__ = ["STANDARD_PS_OPS", "replica_device_setter", "GreedyLoadBalancingStrategy",
           "byte_size_load_fn"]

STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable",
                   "MutableHashTable", "MutableHashTableV2",
                   "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2",
                   "MutableDenseHashTable", "MutableDenseHashTableV2",
                   "VarHandleOp", "BoostedTreesEnsembleResourceHandleOp",
                   "BoostedTreesQuantileStreamResourceHandleOp",
                   "ResourceConditionalAccumulator",
                   "DecisionTreeResource")

_FIELDS = ("job", "replica", "task", "device_type", "device_index")


def _merged(base: DeviceSpec, over: DeviceSpec) -> DeviceSpec:
    """`base` with every field set in `over` replacing it (TF's `make_merged_spec`).

    NOTE: field by field, as TF does: `/device:GPU:*` over `/device:CPU:0` keeps index 0.
    """
    return DeviceSpec(**{f: getattr(over, f) if getattr(over, f) is not None
                         else getattr(base, f) for f in _FIELDS})


class _RoundRobinStrategy:
    """Ps task indices 0, 1, ..., num_tasks - 1, 0, ... one per ps op placed."""

    def __init__(self, num_tasks: int):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op) -> int:
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


class GreedyLoadBalancingStrategy:
    """The least-loaded ps task so far, loads measured by `load_fn(op)` (a number).

    Sensitive to the order ps ops are created in, as in TF: each op is placed greedily.
    """

    def __init__(self, num_tasks: int, load_fn):
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = np.zeros(num_tasks)

    def __call__(self, op) -> int:
        task = int(np.argmin(self._ps_loads))
        self._ps_loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op) -> int:
    """The byte size of `op`'s single output (a variable's buffer), for load balancing.

    Raises:
      ValueError: `op` has not exactly one output, or its shape is not fully defined.
    """
    if len(op.outputs) != 1:
        raise ValueError(f"Op {op} must have a single output")
    output = op.outputs[0]
    shape = output.get_shape()
    if not shape.is_fully_defined():
        # NOTE: as TF: a variable's output shape may be set only after the op is placed.
        from tensorweave.shapes import TensorShape

        shape = TensorShape(op.get_attr("shape"))
    if not shape.is_fully_defined():
        raise ValueError(f"Shape {shape} is not fully defined")
    return shape.num_elements() * output.dtype.base_dtype.size


class _ReplicaDeviceChooser:
    """The device function: ps ops to the ps job (task from the strategy), the rest to the
    worker device, merged under the device the op already has."""

    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops,
                 ps_strategy):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = frozenset(ps_ops)
        self._ps_strategy = ps_strategy

    def device_function(self, op) -> str:
        if not self._merge_devices and op.device:
            return op.device
        current = DeviceSpec.from_string(op.device or "")
        if self._ps_tasks and self._ps_device and _op_type(op) in self._ps_ops:
            ps_device = DeviceSpec.from_string(self._ps_device)
            # NOTE: the strategy runs (and advances) only when the op's own job allows ps.
            if ps_device.job and (not current.job or current.job == ps_device.job):
                ps_device = _merged(ps_device, DeviceSpec(task=self._ps_strategy(op)))
            return _merged(ps_device, current).to_string()
        worker = DeviceSpec.from_string(self._worker_device or "")
        return _merged(worker, current).to_string()


def _op_type(op) -> str:
    return getattr(op, "type", None) or op.op   # an Operation, or a NodeDef


def _ps_tasks_from_cluster(cluster, ps_device: str) -> int | None:
    """The number of tasks of the ps job in `cluster` (None when it has no such job)."""
    from tensorweave.distributed.cluster import ClusterSpec

    spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
    jobs = spec.as_dict()
    ps_job = DeviceSpec.from_string(ps_device).job
    if ps_job not in jobs or jobs[ps_job] is None:
        return None
    return len(jobs[ps_job])


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for `tf.device()` placing variables on ps tasks (TF1's signature).

    Args:
      ps_tasks: number of ps tasks; ignored when `cluster` is given.
      ps_device: the ps device (empty: no ps job is used).
      worker_device: the device of every non-ps op (empty: none).
      merge_devices: merge with the op's device field by field; when False an op that already
        has a device keeps it unchanged.
      cluster: a `ClusterSpec`, dict or ClusterDef: `ps_tasks` is its ps job's task count.
      ps_ops: op types placed on ps (default `STANDARD_PS_OPS`).
      ps_strategy: `f(op) -> ps task index` (default: round robin over the ps tasks).

    Returns:
      The device function, or None (a no-op in `tf.device`) when there are no ps tasks.

    Raises:
      TypeError: `ps_strategy` is not callable, or `cluster` cannot be read as a cluster.
    """
    if cluster is not None:
        ps_tasks = _ps_tasks_from_cluster(cluster, ps_device)
        if ps_tasks is None:
            return None
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if not merge_devices:
        logging.getLogger("tensorweave").warning(
            "DEPRECATION: It is recommended to set merge_devices=true in "
            "replica_device_setter")
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices,
                                    ps_ops, ps_strategy)
    return chooser.device_function
