"""A task's view of its cluster: which worker runs each device, and rendezvous across tasks.

`ClusterWorkers` is what a server's master uses to run a session over every task: it finds
the devices of each task (GetStatus, all tasks at once, one deadline for all), hands out the
local `LocalWorker` for the task's own devices and a `GrpcWorker` for every other task, and
remembers each task's incarnation so a restarted task is noticed.

`RemoteRendezvous` is a step's rendezvous on one task: tensors sent by this task's partitions
stay local; a receive whose sender lives on another task pulls the tensor from that task
(RecvTensor), inline for a plain receive and in the background when the dataflow interpreter
waits for whichever of several receives arrives first.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tensorweave import errors
from tensorweave.distributed.cluster import ClusterSpec
from tensorweave.runtime.device import DeviceSpec
from tensorweave.runtime.rendezvous import Rendezvous, StepTable

_FETCH_THREADS = 32


def task_of(device: str) -> str:
    """`/job:ps/replica:0/task:1/device:CPU:0` → `/job:ps/replica:0/task:1`."""
    spec = DeviceSpec.from_string(device)
    return f"/job:{spec.job}/replica:{spec.replica or 0}/task:{spec.task}"


class ClusterWorkers:
    """The workers of a cluster as one task's master sees them.

    Thread-safe. `local_worker` serves this task's devices; every other task is reached over
    gRPC at its address in `cluster`.
    """

    def __init__(self, cluster: ClusterSpec, job: str, task: int, local_worker,
                 steps: StepTable, fetch_pool: ThreadPoolExecutor | None = None):
        self.cluster = cluster
        self.fetch_pool = fetch_pool
        self.local_task = f"/job:{job}/replica:0/task:{task}"
        self.local_worker = local_worker
        self.steps = steps
        self._remote: dict[str, object] = {}
        self._incarnations: dict[str, int] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="tw-cluster")

    # -- tasks --------------------------------------------------------------------------------
    def tasks(self, device_filters=()) -> list[str]:
        """Every task of the cluster (the local one first) matching `device_filters`."""
        out = [self.local_task]
        for job in self.cluster.jobs:
            for t in self.cluster.task_indices(job):
                name = f"/job:{job}/replica:0/task:{t}"
                if name != self.local_task and _matches(name, device_filters):
                    out.append(name)
        return out

    def address(self, task: str) -> str:
        spec = DeviceSpec.from_string(task)
        return self.cluster.task_address(spec.job, spec.task)

    def is_local(self, device: str) -> bool:
        return device.startswith(self.local_task + "/") or device == self.local_task

    def worker_for(self, device: str):
        """The worker that runs `device` (the local worker for this task's devices)."""
        if self.is_local(device):
            return self.local_worker
        return self.remote(task_of(device))

    def remote(self, task: str):
        from tensorweave.distributed.grpc_worker import GrpcWorker

        with self._lock:
            w = self._remote.get(task)
            if w is None:
                w = self._remote[task] = GrpcWorker(self.address(task))
            return w

    # -- discovery ----------------------------------------------------------------------------
    def discover(self, deadline_s: float, device_filters=()) -> list[dict]:
        """The devices of every task (local first), asking all remote tasks at once.

        Raises: UnavailableError naming every task that did not answer within `deadline_s`.
        """
        tasks = self.tasks(device_filters)
        futures = {t: self._pool.submit(self._status, t, deadline_s) for t in tasks[1:]}
        devices = list(self.local_worker.get_status())
        missing = []
        for task, fut in futures.items():
            try:
                devices += fut.result(timeout=deadline_s + 1.0)
            except Exception as e:  # noqa: BLE001 -- every failure is reported together
                missing.append(f"{task} at {self.address(task)} ({_short(e)})")
        if missing:
            raise errors.UnavailableError(
                None, None, f"Could not reach {len(missing)} task(s) of the cluster within "
                            f"{deadline_s:g} s: " + "; ".join(missing))
        return devices

    def _status(self, task: str, deadline_s: float) -> list[dict]:
        """GetStatus of `task`, retried until it answers or `deadline_s` passes."""
        devs = retry_unavailable(task, deadline_s,
                                 lambda left: self.remote(task).get_status(timeout=left))
        with self._lock:
            self._incarnations[task] = devs[0]["incarnation"] if devs else 0
        return devs

    def incarnation(self, task: str, deadline_s: float | None = None) -> int:
        """`task`'s incarnation: as last seen, or asked now when `deadline_s` is given.

        Raises: UnavailableError when it does not answer within `deadline_s`.
        """
        if deadline_s is not None:
            self._status(task, deadline_s)
        return self._incarnations.get(task, 0)

    # -- steps --------------------------------------------------------------------------------
    def cleanup_step(self, step_id: int, tasks, wait: bool = False) -> None:
        """Drops the step's rendezvous here and on `tasks` (aborting waiting receivers)."""
        self.steps.cleanup(step_id)
        futures = [self._pool.submit(_quietly, self.remote(t).cleanup_graph, step_id)
                   for t in tasks if t != self.local_task]
        if wait:
            for f in futures:
                f.result()

    def close(self) -> None:
        self._pool.shutdown(wait=False)
        if self.fetch_pool is not None:
            self.fetch_pool.shutdown(wait=False)


class RemoteRendezvous(Rendezvous):
    """One step's rendezvous on one task; receives from other tasks are pulled over RPC."""

    def __init__(self, step_id: int, is_local, worker_for, pool: ThreadPoolExecutor):
        super().__init__()
        self.step_id = step_id
        self._is_local = is_local
        self._worker_for = worker_for
        self._pool = pool
        self._fetching: set[str] = set()
        self._transfers: list[dict] = []

    def transfers(self, dst_device: str) -> list[dict]:
        with self._cond:
            return [t for t in self._transfers if t["dst"] == dst_device]

    def _remote_src(self, key: str) -> str | None:
        src = key.split(";", 1)[0]
        return None if self._is_local(src) else src

    def _claim(self, key: str) -> bool:
        with self._cond:
            if key in self._fetching:
                return False
            self._fetching.add(key)
            return True

    def recv(self, key: str, deadline: float | None = None):
        src = self._remote_src(key)
        if src is None or not self._claim(key):
            return super().recv(key, deadline)
        if self.error is not None:
            raise self.error
        return self._fetch(src, key, deadline)

    def wait_any(self, keys: list[str], deadline: float | None = None) -> int:
        """As Rendezvous.wait_any; first starts pulling every key from another task that no
        one pulls yet: one request per task for all of its keys (a thread each)."""
        by_task: dict[str, list[tuple[str, str]]] = {}
        for key in keys:
            src = self._remote_src(key)
            if src is not None and self._claim(key):
                by_task.setdefault(task_of(src), []).append((src, key))
        for pulls in by_task.values():
            if len(pulls) == 1:
                self._pool.submit(self._prefetch, *pulls[0], deadline)
            else:
                self._pool.submit(self._prefetch_many, pulls, deadline)
        return super().wait_any(keys, deadline)

    def _fetch(self, src: str, key: str, deadline: float | None):
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        start = time.time()
        try:
            value, dead = self._worker_for(src).recv_tensor(self.step_id, key, timeout)
        except errors.OpError as e:
            err = naming_task(e, task_of(src))
            self.abort(err)
            raise err from None
        self._record(key, value, dead, start)
        return value, dead

    def _record(self, key: str, value, dead: bool, start: float) -> None:
        """Notes one pulled tensor (what step stats report as a RecvTensor)."""
        src, _, dst, tensor, _ = key.split(";")
        item = {"tensor": tensor, "src": src, "dst": dst, "start": start, "end": time.time(),
                "bytes": 0 if dead else payload_bytes(value)}
        with self._cond:
            self._transfers.append(item)

    def _prefetch(self, src: str, key: str, deadline: float | None) -> None:
        try:
            value, dead = self._fetch(src, key, deadline)
        except errors.OpError:
            return
        except Exception as e:  # noqa: BLE001 -- a receiver must never wait for a lost thread
            self.abort(errors.InternalError(None, None, f"Receiving {key}: {e}"))
            return
        self.send(key, value, dead)


    def _prefetch_many(self, pulls: list[tuple[str, str]], deadline: float | None) -> None:
        """Pulls (src device, key) pairs of one task in one request, each sent here as it
        arrives; a failure aborts the step (naming the task)."""
        src = pulls[0][0]
        keys = [key for _, key in pulls]
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        start = time.time()

        def deliver(k: int, value, dead: bool) -> None:
            self._record(keys[k], value, dead, start)
            self.send(keys[k], value, dead)

        try:
            self._worker_for(src).recv_many(self.step_id, keys, deliver, timeout)
        except errors.OpError as e:
            self.abort(naming_task(e, task_of(src)))
        except Exception as e:  # noqa: BLE001 -- a receiver must never wait for a lost thread
            self.abort(errors.InternalError(None, None, f"Receiving {keys}: {e}"))


def payload_bytes(value) -> int:
    """The bytes a tensor's elements take on the wire: its buffer for numbers, the strings'
    lengths for a string tensor (framing and headers not counted)."""
    arr = np.asarray(value)
    if arr.dtype.kind == "O":
        return sum(len(x) for x in arr.reshape(-1) if isinstance(x, (bytes, str)))
    return int(arr.nbytes)


def make_step_table(cluster: ClusterSpec, job: str, task: int, local_worker) -> tuple:
    """(StepTable whose rendezvous pull from other tasks, ClusterWorkers using it)."""
    pool = ThreadPoolExecutor(max_workers=_FETCH_THREADS, thread_name_prefix="tw-recv")
    holder: list[ClusterWorkers] = []

    def factory(step_id: int) -> Rendezvous:
        workers = holder[0]
        return RemoteRendezvous(step_id, workers.is_local, workers.worker_for, pool)

    steps = StepTable(factory)
    local_worker.steps = steps  # NOTE: RecvTensor and CleanupGraph of the task read it too
    holder.append(ClusterWorkers(cluster, job, task, local_worker, steps, pool))
    return steps, holder[0]


def register_remote(cluster: ClusterWorkers, task: str, g, device: str, options: dict,
                    patience_s: float = 2.0) -> tuple[int, str]:
    """Registers partition `g` on remote `task`; returns (the task's incarnation, handle).

    Retried while the task is unreachable for `patience_s` (a task that just restarted is
    reached after gRPC's reconnect backoff). Raises: the task's error, naming the task.
    """
    def attempt(left: float) -> tuple[int, str]:
        incarnation = cluster.incarnation(task, left)
        return incarnation, cluster.remote(task).register_graph(g, device, options)

    return retry_unavailable(task, patience_s, attempt)


def retry_unavailable(task: str, deadline_s: float, call):
    """`call(seconds_left)`, again every 0.1 s while it raises UnavailableError, until
    `deadline_s` passes. Raises: the last error (any OpError), its message naming `task`."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            return call(max(0.05, end - time.monotonic()))
        except errors.UnavailableError as e:
            if time.monotonic() + 0.1 >= end:
                raise naming_task(e, task) from None
            time.sleep(0.1)
        except errors.OpError as e:
            raise naming_task(e, task) from None


def naming_task(e: errors.OpError, task: str | None) -> errors.OpError:
    """`e`, naming the remote task it came from when it does not yet."""
    if task is None or e.task is not None:
        return e
    return e.replace(task=task)


def _matches(task: str, device_filters) -> bool:
    if not device_filters:
        return True
    spec = DeviceSpec.from_string(task)
    return any(DeviceSpec.from_string(f).matches(spec) for f in device_filters)


def _quietly(fn, *args) -> None:
    try:
        fn(*args)
    except errors.OpError:
        pass  # NOTE: cleanup of a step on a task that is gone: nothing left to clean


def _short(e: BaseException) -> str:
    msg = getattr(e, "message", None) or str(e)
    return msg.splitlines()[0][:200] if msg else type(e).__name__


__all__ = ["ClusterWorkers", "RemoteRendezvous", "StepTable", "make_step_table", "naming_task",
           "payload_bytes", "register_remote", "retry_unavailable", "task_of"]
