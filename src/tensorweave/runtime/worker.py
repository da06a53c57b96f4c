"""Workers: run registered partitions on their devices.

`WorkerInterface` takes and returns plain data (IR graphs, numpy arrays, dicts), so the gRPC
worker can serialize it without callers changing. `LocalWorker` is the in-process one. The
master reaches every worker through this interface only, the local one included: a step's
hot path is `runner(handle)`, which the local worker answers with the partition's executor
itself, so going through the interface costs nothing per step.
"""

from __future__ import annotations

import abc
import itertools
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from tensorweave import errors, ir
from tensorweave.runtime.allocator import keep_freed_memory
from tensorweave.runtime.device import Device
from tensorweave.runtime.executor import Executor
from tensorweave.runtime.kernels.xla.backend import is_compiled
from tensorweave.runtime.plan import Plan
from tensorweave.runtime.rendezvous import StepTable
from tensorweave.runtime.stats import StatsCollector
from tensorweave.runtime.step import StepContext
from tensorweave.runtime.threads import inter_op_pool


class WorkerInterface(abc.ABC):
    """The worker service (TF's WorkerService, as Python calls)."""

    @abc.abstractmethod
    def get_status(self) -> list[dict]:
        """The worker's devices as DeviceAttributes-shaped dicts."""

    @abc.abstractmethod
    def register_graph(self, graph_def: ir.GraphDef, device: str,
                       options: dict | None = None) -> str:
        """Builds a partition's plan on `device`; returns its handle. `options["dataflow"]`
        forces the dataflow interpreter.

        Raises: NotFoundError (unknown op or missing kernel), InvalidArgumentError.
        """

    @abc.abstractmethod
    def deregister_graph(self, handle: str) -> None: ...

    @abc.abstractmethod
    def run_graph(self, handle: str, step_id: int, args: list, options: dict,
                  ctx: StepContext | None = None) -> tuple[list, dict | None]:
        """Runs one step of a partition; returns (retvals, step stats or None).

        Raises: the first `errors.OpError` of the step.
        """

    def runner(self, handle: str):
        """A callable `run(args, ctx) -> retvals` for one step of partition `handle`, for
        callers that run it many times (no trace, no stats). The default goes through
        `run_graph`."""
        def run(args, ctx):
            return self.run_graph(handle, ctx.step_id, args, {}, ctx)[0]

        return run

    @abc.abstractmethod
    def recv_tensor(self, step_id: int, key: str,
                    timeout_s: float | None = None) -> tuple[object, bool]:
        """(value, is_dead) of rendezvous `key` in step `step_id`; waits for the sender up to
        `timeout_s`. Raises: the step's abort error, DeadlineExceededError."""

    def recv_many(self, step_id: int, keys: list[str], deliver,
                  timeout_s: float | None = None) -> None:
        """Pulls several keys of step `step_id`: `deliver(position, value, is_dead)` for each
        as it arrives, up to `timeout_s` in all. The default takes them one by one."""
        end = None if timeout_s is None else time.monotonic() + timeout_s
        for k, key in enumerate(keys):
            left = None if end is None else max(0.0, end - time.monotonic())
            deliver(k, *self.recv_tensor(step_id, key, left))

    @abc.abstractmethod
    def cleanup_graph(self, step_id: int) -> None:
        """Drops step `step_id`'s rendezvous, aborting receivers still waiting in it."""

    @abc.abstractmethod
    def cleanup_all(self, containers: list[str] | None = None) -> None:
        """Drops resources (variables, queues, ...) in `containers` (all when None)."""


class LocalWorker(WorkerInterface):
    """A worker in this process. Thread-safe: steps may run concurrently.

    `inter_op_threads`: the devices' inter-op pool size for steps that bring no pool of their
    own (a server's remote partitions; TF's meaning, runtime/threads.py); None: no pool.
    `steps` holds the rendezvous of steps run by id (`run_graph` without a context,
    `recv_tensor`, `cleanup_graph`); a server shares it with its master.
    """

    def __init__(self, device_names: list[str], inter_op_threads: int | None = None,
                 steps: StepTable | None = None):
        keep_freed_memory()
        # NOTE: a random incarnation per worker, as TF's: a master tells a restarted task
        # (whose graphs and variables are gone) from the one it registered graphs on.
        incarnation = random.getrandbits(62) + 1
        self.devices = {d.name: d for d in (Device(n, incarnation) for n in device_names)}
        self._prefix = f"{incarnation:x}"  # handles of another incarnation never match
        self._graphs: dict[str, Executor] = {}
        self._inter_op_threads = inter_op_threads
        self._pools: dict[str, object] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.steps = steps if steps is not None else StepTable()

    def get_status(self) -> list[dict]:
        return [d.attributes() for d in self.devices.values()]

    def device(self, name: str) -> Device:
        dev = self.devices.get(name)
        if dev is None:
            raise errors.InvalidArgumentError(
                None, None, f"Device '{name}' is not on this worker; it has "
                            f"{sorted(self.devices)}")
        return dev

    def register_graph(self, graph_def: ir.GraphDef, device: str,
                       options: dict | None = None) -> str:
        dev = self.device(device)
        plan = Plan(graph_def, dev.device_type, dev.resources, dev.name,
                    bool((options or {}).get("dataflow")))
        if is_compiled(dev.device_type):
            from tensorweave.runtime.xla_executable import XlaExecutable

            executor = XlaExecutable(plan)
        else:
            executor = Executor(plan, self._pool(dev.name))
        with self._lock:
            handle = f"g{self._prefix}-{next(self._ids)}"
            self._graphs[handle] = executor
        return handle

    def _pool(self, device: str):
        """The device's inter-op thread pool for steps that bring none (`ctx.inter_op`):
        `inter_op_threads` with TF's meaning (runtime/threads.py); None: no pool (inline)."""
        if self._inter_op_threads is None:
            return None
        with self._lock:
            if device not in self._pools:
                self._pools[device] = inter_op_pool(self._inter_op_threads,
                                                    f"-{device[-5:]}")
            return self._pools[device]

    def close(self) -> None:
        for pool in self._pools.values():
            if isinstance(pool, ThreadPoolExecutor):
                pool.shutdown(wait=False)
        self._pools.clear()

    def executor(self, handle: str) -> Executor:
        ex = self._graphs.get(handle)
        if ex is None:
            raise errors.AbortedError(None, None, f"Graph handle {handle} is not registered")
        return ex

    def deregister_graph(self, handle: str) -> None:
        with self._lock:
            self._graphs.pop(handle, None)

    def runner(self, handle: str):
        return self.executor(handle).run

    def run_graph(self, handle, step_id, args, options, ctx=None):
        ex = self.executor(handle)
        if ctx is None:
            ctx = StepContext(step_id, self.steps.find(step_id), options.get("timeout_s"))
        stats = None
        if options.get("trace"):
            stats = ctx.stats = StatsCollector(ex.plan.device, ex.plan)
        out = ex.run(args, ctx)
        if stats is None:
            return out, None
        return out, stats.to_dict(ctx.rendezvous.transfers(ex.plan.device))

    def recv_tensor(self, step_id, key, timeout_s=None):
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        return self.steps.find(step_id).recv(key, deadline)

    def cleanup_graph(self, step_id) -> None:
        self.steps.cleanup(step_id)

    def cleanup_all(self, containers=None) -> None:
        for dev in self.devices.values():
            dev.resources.clear(containers)
