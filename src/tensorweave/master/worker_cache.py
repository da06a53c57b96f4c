"""How the master finds workers (TF's WorkerCacheInterface).

The master knows workers only through a `WorkerCache`: which devices a session has, which
worker runs a device, how a step gets its id and rendezvous, and how a step is cleaned up on
the tasks it touched. `LocalWorkerCache` (here) serves one in-process worker; the cluster's
cache (distributed/cluster_steps.py) adds the other tasks of a cluster over gRPC. The master
runs local and cluster steps by the same code against this interface.
"""

from __future__ import annotations

import abc
import itertools

from tensorweave import ir
from tensorweave.master.options import SessionOptions
from tensorweave.runtime.rendezvous import Rendezvous
from tensorweave.runtime.worker import LocalWorker, WorkerInterface


class WorkerCache(abc.ABC):
    """The workers a master runs sessions on. Thread-safe."""

    @abc.abstractmethod
    def devices(self, options: SessionOptions) -> list[dict]:
        """DeviceAttributes-shaped dicts of a new session's devices, the client's first.

        Raises: UnavailableError when a task does not answer in time.
        """

    @abc.abstractmethod
    def worker_for(self, device: str) -> WorkerInterface:
        """The worker that runs `device`."""

    def task_of(self, device: str) -> str | None:
        """The remote task that runs `device`; None when it runs in this process."""
        return None

    def register(self, device: str, graph: ir.GraphDef, options: dict) -> tuple[str, int]:
        """Registers a partition on `device`'s worker; returns (handle, the task's
        incarnation). Raises: the worker's error (naming the task, when remote)."""
        return self.worker_for(device).register_graph(graph, device, options), 0

    def incarnation(self, task: str) -> int:
        """`task`'s incarnation as last seen (0 for this process)."""
        return 0

    def refresh(self, task: str, deadline_s: float) -> int:
        """Asks `task` for its incarnation now. Raises: UnavailableError past `deadline_s`."""
        return self.incarnation(task)

    @abc.abstractmethod
    def new_step(self, participants: int) -> tuple[int, Rendezvous]:
        """(step id, the step's rendezvous) for a step of `participants` partitions."""

    def cleanup_step(self, step_id: int, tasks: set[str]) -> None:
        """Ends step `step_id` on `tasks` (the remote tasks it ran on), aborting receivers."""
        return None  # NOTE: an in-process step's rendezvous ends with the step

    @abc.abstractmethod
    def reset(self, containers: list[str] | None = None) -> None:
        """Drops resources in `containers` (all when None) on every worker."""

    def close(self) -> None:
        """Releases the cache's threads and connections."""
        return None


# NOTE: one sequence for every in-process step, so no two local steps share an id.
LOCAL_STEP_IDS = itertools.count(1)


class LocalWorkerCache(WorkerCache):
    """One in-process worker; steps get sequential ids and a private rendezvous."""

    def __init__(self, worker: LocalWorker):
        self.worker = worker

    def devices(self, options: SessionOptions) -> list[dict]:
        return self.worker.get_status()

    def worker_for(self, device: str) -> WorkerInterface:
        return self.worker

    def new_step(self, participants: int) -> tuple[int, Rendezvous]:
        return next(LOCAL_STEP_IDS), Rendezvous(participants)

    def reset(self, containers=None) -> None:
        self.worker.cleanup_all(containers)

    def close(self) -> None:
        self.worker.cleanup_all()
        self.worker.close()


__all__ = ["LOCAL_STEP_IDS", "LocalWorkerCache", "WorkerCache"]
