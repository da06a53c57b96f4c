"""The cluster's `WorkerCache`: what a server's master runs sessions on.

The master runs a step over the cluster by the same code as a local one
(master/master.py `_run_partitions`); what differs is answered here:
- `devices`: a session's devices are every task's (those `device_filters` allow), found at
  session creation within one deadline; a task that does not answer fails the creation with
  UnavailableError naming it (TF waits forever, logging "still waiting").
- `new_step`: a step's id is random (masters of several clients share the ps tasks, so ids
  must not collide), and its rendezvous is this task's step rendezvous, whose receives from
  other tasks pull by RecvTensor.
- `cleanup_step`: the first failure aborts the step everywhere (CleanupGraph on every task);
  each RPC has the step's deadline, so nothing waits forever.
- `register` / `refresh`: a partition is registered with the task's incarnation; a remote
  task that failed a step with UnavailableError or AbortedError is asked again before the
  next step of that callable, and if it came back with another incarnation (it restarted)
  the master registers the callable's partitions on it again.
"""

from __future__ import annotations

import random

from tensorweave import ir
from tensorweave.distributed.remote import ClusterWorkers, register_remote, task_of
from tensorweave.distributed.rpc import CONNECT_DEADLINE_S
from tensorweave.master.options import SessionOptions
from tensorweave.master.worker_cache import WorkerCache
from tensorweave.runtime.rendezvous import Rendezvous
from tensorweave.runtime.worker import WorkerInterface


class ClusterWorkerCache(WorkerCache):
    """Every task of a cluster as one task's master sees them (over `ClusterWorkers`)."""

    def __init__(self, workers: ClusterWorkers):
        self.workers = workers

    def devices(self, options: SessionOptions) -> list[dict]:
        # NOTE: a little under the client's own deadline for CreateSession, so the client sees
        # this error (naming the missing tasks) rather than its call's DEADLINE_EXCEEDED.
        deadline = 0.8 * (options.timeout_s or CONNECT_DEADLINE_S)
        return self.workers.discover(deadline, options.device_filters)

    def worker_for(self, device: str) -> WorkerInterface:
        return self.workers.worker_for(device)

    def task_of(self, device: str) -> str | None:
        return None if self.workers.is_local(device) else task_of(device)

    def register(self, device: str, graph: ir.GraphDef, options: dict) -> tuple[str, int]:
        task = self.task_of(device)
        if task is None:
            return self.workers.local_worker.register_graph(graph, device, options), 0
        incarnation, handle = register_remote(self.workers, task, graph, device, options)
        return handle, incarnation

    def incarnation(self, task: str) -> int:
        return self.workers.incarnation(task)

    def refresh(self, task: str, deadline_s: float) -> int:
        return self.workers.incarnation(task, deadline_s)

    def new_step(self, participants: int) -> tuple[int, Rendezvous]:
        step_id = random.getrandbits(62) + 1
        return step_id, self.workers.steps.find(step_id)

    def cleanup_step(self, step_id: int, tasks: set[str]) -> None:
        self.workers.cleanup_step(step_id, tasks)

    def reset(self, containers=None) -> None:
        """Clears `containers` (all when None) on every task of the cluster."""
        for task in self.workers.tasks()[1:]:
            self.workers.remote(task).cleanup_all(containers)
        self.workers.local_worker.cleanup_all(containers)

    def close(self) -> None:
        self.workers.close()


__all__ = ["ClusterWorkerCache"]
