"""Steps that span tasks: what a server's master does when a callable has remote partitions.

- `discover`: a session's devices are every task's (those `device_filters` allow), found at
  session creation within one deadline; a task that does not answer fails the creation with
  UnavailableError naming it (TF waits forever, logging "still waiting").
- `run_cluster_step`: one step over the cluster. Its id is random (masters of several clients
  share the ps tasks, so ids must not collide); this task's partitions run here on the
  task's step rendezvous, the others through RunGraph; tensors cross tasks by RecvTensor. The
  first failure aborts the step everywhere (CleanupGraph on every task), the error names the
  task it came from, and the step ends when every partition has returned — each RPC has the
  step's deadline, so nothing waits forever.
- A remote task that failed a step with UnavailableError or AbortedError is checked before
  the next step of that callable: if it came back with another incarnation (it restarted),
  the callable's partitions are registered on it again and the step runs.
"""

from __future__ import annotations

import random

from tensorweave import errors
from tensorweave.distributed.remote import naming_task
from tensorweave.distributed.rpc import CONNECT_DEADLINE_S
from tensorweave.runtime.step import StepContext

_RETRYABLE = (errors.UnavailableError, errors.AbortedError)
_SECONDARY = (errors.AbortedError, errors.CancelledError)


def discover(cluster, config: dict) -> list[dict]:
    """The session's devices over the cluster (this task's first)."""
    ms = int(config.get("operation_timeout_in_ms") or 0)
    # NOTE: a little under the client's own deadline for CreateSession, so the client sees
    # this error (naming the missing tasks) rather than its call's DEADLINE_EXCEEDED.
    deadline = 0.8 * (ms / 1000.0 if ms > 0 else CONNECT_DEADLINE_S)
    return cluster.discover(deadline, tuple(config.get("device_filters") or ()))


def reset_tasks(cluster, containers) -> None:
    """Clears `containers` (all when None) on every remote task of the cluster."""
    for task in cluster.tasks()[1:]:
        cluster.remote(task).cleanup_all(containers)


def run_cluster_step(master, sess, c, feed_values, options: dict, timeout, cancel=None):
    """Runs callable `c` of `sess` once over the cluster; returns (fetches, metadata).
    `cancel` (a runtime.step.Cancellation) cancels this task's partitions; their failure then
    cleans the step up everywhere."""
    cluster = master._cluster
    c.stale.update(p.task for p in c.partitions
                   if p.task is not None and p.incarnation != cluster.incarnation(p.task))
    if c.stale:
        _refresh(master, sess, c, timeout)
    step_id = random.getrandbits(62) + 1
    rdv = cluster.steps.find(step_id)
    tasks = c.remote_tasks
    opts = {"trace": bool(options.get("trace"))}
    ctxs = [StepContext(step_id, rdv, timeout, cancellation=cancel) for _ in c.partitions]
    try:
        others = [sess.run_pool().submit(_run_one, cluster, p, step_id, [], opts, ctx, tasks)
                  for p, ctx in zip(c.partitions[1:], ctxs[1:])]
        results = [_run_one(cluster, c.partitions[0], step_id, feed_values, opts, ctxs[0],
                            tasks)]
        results += [f.result() for f in others]
    finally:
        cluster.cleanup_step(step_id, tasks)
    failures = [(p, r) for p, r in zip(c.partitions, results) if isinstance(r, errors.OpError)]
    if failures:
        for p, err in failures:
            if p.task is not None and isinstance(err, _RETRYABLE):
                c.stale.add(p.task)
        raise _root_cause([err for _, err in failures])
    meta: dict = {"step_stats": [r[1] for r in results if r[1]]}
    if options.get("partition_graphs"):
        meta["partition_graphs"] = [p.graph for p in c.partitions]
    return results[0][0], meta


def _run_one(cluster, p, step_id, args, opts, ctx, tasks):
    """One partition's step; its failure aborts the step on every task (first error wins)."""
    try:
        return p.worker.run_graph(p.handle, step_id, args, opts, ctx)
    except errors.OpError as e:
        err = naming_task(e, p.task)
        if ctx.rendezvous.error is None:
            ctx.rendezvous.abort(err)
            cluster.cleanup_step(step_id, tasks)
        return err


def _root_cause(errs: list[errors.OpError]) -> errors.OpError:
    """The error to report: the first that is not a consequence of another's abort."""
    for e in errs:
        if not isinstance(e, _SECONDARY):
            return e
    return errs[0]


def _refresh(master, sess, c, timeout) -> None:
    """Re-registers `c`'s partitions on stale tasks that restarted since they were registered.

    Raises: UnavailableError when a stale task still does not answer.
    """
    cluster = master._cluster
    deadline = timeout if timeout else CONNECT_DEADLINE_S
    for task in sorted(c.stale):
        now = cluster.incarnation(task, deadline)
        c.partitions = [master._register(sess, p.graph, p.device, c.dataflow)
                        if p.task == task and p.incarnation != now else p
                        for p in c.partitions]
        c.stale.discard(task)
