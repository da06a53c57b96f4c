"""The master: sessions, the per-signature plan cache, and step orchestration.

For each distinct (feeds, fetches, targets) the master has the session's
`GraphExecutionState` build the client graph (place, prune, optimize, partition) and
registers one partition per device on the workers its `WorkerCache` names; the result is a
*callable* cached under the signature, and `make_callable` hands its id out so a client can
skip even the lookup. Local and cluster steps run by the same code (`_run_partitions`).
`MasterInterface` takes and returns plain data, so a gRPC master can serialize it.
"""

from __future__ import annotations

import abc
import itertools
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from tensorweave import errors, ir
from tensorweave.master.execution_state import GraphExecutionState, Signature
from tensorweave.master.options import BuildOptions, SessionOptions, run_timeout_s
from tensorweave.master.worker_cache import LOCAL_STEP_IDS, LocalWorkerCache, WorkerCache
from tensorweave.runtime.device import local_device_names
from tensorweave.runtime.step import Cancellation, StepContext
from tensorweave.runtime.threads import SessionThreads
from tensorweave.runtime.worker import LocalWorker, WorkerInterface

REFRESH_DEADLINE_S = 10.0   # asking a restarted task for its incarnation, without a timeout
_RETRYABLE = (errors.UnavailableError, errors.AbortedError)
_SECONDARY = (errors.AbortedError, errors.CancelledError)


class MasterInterface(abc.ABC):
    """The master service (TF's MasterService, as Python calls)."""

    @abc.abstractmethod
    def create_session(self, graph_def: ir.GraphDef, config) -> str:
        """`config`: SessionOptions, a ConfigProto, or a dict of its fields."""

    @abc.abstractmethod
    def extend_session(self, handle: str, graph_def: ir.GraphDef) -> None: ...

    @abc.abstractmethod
    def list_devices(self, handle: str) -> list[dict]: ...

    @abc.abstractmethod
    def make_callable(self, handle: str, feeds: list[str], fetches: list[str],
                      targets: list[str]) -> tuple[int, list]:
        """Returns (callable id, dtype of each feed)."""

    @abc.abstractmethod
    def run_callable(self, handle: str, callable_id: int, feed_values: list,
                     options: dict | None = None) -> tuple[list, dict | None]:
        """Runs one step; returns (fetched values, run metadata or None)."""

    @abc.abstractmethod
    def release_callable(self, handle: str, callable_id: int) -> None: ...

    @abc.abstractmethod
    def close_session(self, handle: str) -> None: ...

    @abc.abstractmethod
    def reset(self, containers: list[str] | None = None) -> None: ...

    def run_step(self, handle: str, feeds: dict, fetches: list[str], targets: list[str],
                 options: dict | None = None) -> tuple[list, dict | None]:
        """One step by names: `make_callable` (cached) then `run_callable`."""
        names = list(feeds)
        cid, _ = self.make_callable(handle, names, list(fetches), list(targets))
        return self.run_callable(handle, cid, [feeds[n] for n in names], options)


@dataclass
class _Partition:
    worker: WorkerInterface
    handle: str
    device: str
    graph: ir.GraphDef
    task: str | None = None       # the remote task running it (None: this process)
    incarnation: int = 0          # the remote task's incarnation when it was registered


@dataclass
class _Callable:
    feed_dtypes: list
    partitions: list[_Partition]  # the client device's partition (args, retvals) first
    run_fast: object = None       # the single local partition's runner, when there is one
    dataflow: bool = False
    stale: set = field(default_factory=set)  # remote tasks to check before the next step

    @property
    def remote_tasks(self) -> set[str]:
        return {p.task for p in self.partitions if p.task is not None}


@dataclass
class _MasterSession:
    options: SessionOptions
    cache: WorkerCache
    device_attrs: list[dict]
    build_options: BuildOptions
    state: GraphExecutionState
    signatures: dict = field(default_factory=dict)   # Signature -> callable id
    callables: dict[int, _Callable] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    pool: ThreadPoolExecutor | None = None
    steps: Cancellation = field(default_factory=Cancellation)  # its steps: close cancels them
    threads: SessionThreads = field(default_factory=SessionThreads)  # its kernels' threads

    def step_context(self, step_id: int, rendezvous, timeout, cancel, options) -> StepContext:
        """A step's context, carrying the session's threads (runtime/threads.py)."""
        ctx = StepContext(step_id, rendezvous, timeout, cancellation=cancel)
        ctx.intra_op = self.threads.intra_op
        ctx.inter_op = self.threads.inter_op_for((options or {}).get("inter_op_thread_pool", 0))
        return ctx

    def run_pool(self) -> ThreadPoolExecutor:
        if self.pool is None:
            n = len(self.build_options.devices)
            self.pool = ThreadPoolExecutor(max_workers=max(n, 2),
                                           thread_name_prefix="tw-partition")
        return self.pool


class LocalMaster(MasterInterface):
    """The in-process master.

    Without `cache`, each session gets its own in-process worker (a `LocalWorkerCache`), and
    its resources die with it. With `cache` (a server's: its task's worker and the other
    tasks of its cluster, distributed/cluster_steps.py), every session runs on those shared
    workers, whose resources (variables, queues) outlive sessions as on a TF server: closing a
    session then only deregisters its graphs, and `reset` clears the containers.
    """

    def __init__(self, cache: WorkerCache | None = None):
        self._shared = cache
        self._sessions: dict[str, _MasterSession] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._abort = Cancellation()  # every step, when the server stops (abort_steps)

    # -- sessions ---------------------------------------------------------------------------
    def create_session(self, graph_def, config) -> str:
        opts = SessionOptions.from_config(config)
        state = GraphExecutionState(graph_def)
        # NOTE: the session's steps bring their own inter-op pool (`threads`), so its local
        # worker needs none
        cache = self._shared or LocalWorkerCache(
            LocalWorker(local_device_names(cpus=opts.cpus)))
        attrs = cache.devices(opts)
        devices = [d["name"] for d in attrs]
        sess = _MasterSession(opts, cache, attrs, opts.build_options(devices), state,
                              steps=Cancellation(self._abort),
                              threads=SessionThreads.from_options(opts))
        with self._lock:
            handle = f"s{next(self._ids)}"
            self._sessions[handle] = sess
        return handle

    def _session(self, handle: str) -> _MasterSession:
        sess = self._sessions.get(handle)
        if sess is None:
            raise errors.AbortedError(None, None, f"Session {handle} is not found (closed?)")
        return sess

    def extend_session(self, handle, graph_def) -> None:
        sess = self._session(handle)
        with sess.lock:
            sess.state.extend(graph_def)

    def list_devices(self, handle) -> list[dict]:
        return list(self._session(handle).device_attrs)

    def close_session(self, handle) -> None:
        with self._lock:
            sess = self._sessions.pop(handle, None)
        if sess is None:
            return
        # NOTE: as TF's MasterSession::Close, steps in flight end now (CancelledError)
        sess.steps.cancel(errors.CancelledError(
            None, None, "Step was cancelled by an explicit call to `Session::Close()`."))
        if sess.pool is not None:
            sess.pool.shutdown(wait=False)
        sess.threads.close()
        if sess.cache is self._shared:
            with sess.lock:  # NOTE: another thread of the client may still be building
                callables = list(sess.callables.values())
            for c in callables:
                _deregister(c.partitions)
            return
        sess.cache.close()

    def abort_steps(self, error: errors.OpError) -> None:
        """Cancels every step in flight, and every later one, with `error` (a server that
        stops)."""
        self._abort.cancel(error)  # NOTE: every session's `steps` has it as parent

    def close(self) -> None:
        """Releases the master's own threads (a server's, when it stops)."""
        if self._shared is not None:
            self._shared.close()

    def reset(self, containers=None) -> None:
        if self._shared is not None:
            self._shared.reset(containers)
        for sess in list(self._sessions.values()):
            if sess.cache is not self._shared:
                sess.cache.reset(containers)

    # -- callables --------------------------------------------------------------------------
    def make_callable(self, handle, feeds, fetches, targets):
        sess = self._session(handle)
        key = Signature.of(feeds, fetches, targets)
        with sess.lock:
            cid = sess.signatures.get(key)
            if cid is None:
                cid = len(sess.callables) + 1
                sess.callables[cid] = self._build(sess, key)
                sess.signatures[key] = cid
            return cid, sess.callables[cid].feed_dtypes

    @staticmethod
    def _build(sess: _MasterSession, signature: Signature) -> _Callable:
        cg = sess.state.build(signature, sess.build_options)
        parts = [_register(sess.cache, cg.partitions[dev], dev, cg.dataflow)
                 for dev in cg.devices()]
        fast = None
        if len(parts) == 1 and parts[0].task is None:
            fast = parts[0].worker.runner(parts[0].handle)
        return _Callable(cg.feed_dtypes, parts, fast, cg.dataflow)

    def run_callable(self, handle, callable_id, feed_values, options=None):
        sess = self._sessions.get(handle)
        if sess is None:
            raise errors.AbortedError(None, None, f"Session {handle} is not found (closed?)")
        c = sess.callables.get(callable_id)
        if c is None:
            raise errors.InvalidArgumentError(
                None, None, f"Callable {callable_id} is not registered in session {handle} "
                            "(released?)")
        if len(feed_values) != len(c.feed_dtypes):
            raise errors.InvalidArgumentError(
                None, None, f"Callable {callable_id} takes {len(c.feed_dtypes)} feed(s), "
                            f"got {len(feed_values)}")
        timeout = run_timeout_s(sess.options, options)
        # NOTE: the step ends with CancelledError when its session closes, or when the
        # transport says its client went away (options["cancellation"])
        call = (options or {}).get("cancellation")
        cancel = sess.steps if call is None else Cancellation(sess.steps, call)
        traced = options is not None and bool(options.get("trace") or
                                              options.get("partition_graphs"))
        if c.run_fast is not None and not traced:
            ctx = sess.step_context(next(LOCAL_STEP_IDS), None, timeout, cancel, options)
            return c.run_fast(feed_values, ctx), None
        return _run_partitions(sess, c, feed_values, options or {}, timeout, cancel)

    def release_callable(self, handle, callable_id) -> None:
        sess = self._session(handle)
        with sess.lock:
            c = sess.callables.pop(callable_id, None)
            sess.signatures = {k: v for k, v in sess.signatures.items() if v != callable_id}
        _deregister(c.partitions if c else [])


# -- steps -----------------------------------------------------------------------------------
def _run_partitions(sess: _MasterSession, c: _Callable, feed_values, options: dict, timeout,
                    cancel: Cancellation | None = None):
    """Runs every partition of one step concurrently, wherever each lives; returns
    (fetches, metadata). The first failure aborts the step on every task it touched; the
    error raised is the root cause (not an abort it caused), naming its task. `cancel`
    cancels this process's partitions (their failure then aborts the rest)."""
    cache = sess.cache
    tasks = c.remote_tasks
    if tasks:
        _refresh_stale(cache, c, timeout)
    step_id, rendezvous = cache.new_step(len(c.partitions))
    opts = {"trace": bool(options.get("trace"))}
    ctxs = [sess.step_context(step_id, rendezvous, timeout, cancel, options)
            for _ in c.partitions]
    try:
        others = [sess.run_pool().submit(_run_one, cache, p, [], opts, ctx, tasks)
                  for p, ctx in zip(c.partitions[1:], ctxs[1:])]
        results = [_run_one(cache, c.partitions[0], feed_values, opts, ctxs[0], tasks)]
        results += [f.result() for f in others]
    finally:
        if tasks:
            cache.cleanup_step(step_id, tasks)
    failures = [(p, r) for p, r in zip(c.partitions, results) if isinstance(r, errors.OpError)]
    if failures:
        for p, err in failures:
            if p.task is not None and isinstance(err, _RETRYABLE):
                c.stale.add(p.task)
        first = [rendezvous.error] if rendezvous.error is not None else []
        raise _root_cause(first + [err for _, err in failures])
    meta: dict = {"step_stats": [r[1] for r in results if r[1]]}
    if options.get("partition_graphs"):
        meta["partition_graphs"] = [p.graph for p in c.partitions]
    return results[0][0], meta


def _run_one(cache: WorkerCache, p: _Partition, args, opts, ctx: StepContext, tasks):
    """One partition's step; its failure aborts the step everywhere (first error wins)."""
    try:
        return p.worker.run_graph(p.handle, ctx.step_id, args, opts, ctx)
    except errors.OpError as e:
        err = e if p.task is None or e.task is not None else e.replace(task=p.task)
        if ctx.rendezvous.error is None:
            ctx.rendezvous.abort(err)
            if tasks:
                cache.cleanup_step(ctx.step_id, tasks)
        return err
    finally:
        ctx.rendezvous.done()


def _root_cause(errs: list[errors.OpError]) -> errors.OpError:
    """The error to report: the first that is not a consequence of another's abort."""
    for e in errs:
        if not isinstance(e, _SECONDARY):
            return e
    return errs[0]


def _refresh_stale(cache: WorkerCache, c: _Callable, timeout) -> None:
    """Re-registers `c`'s partitions on remote tasks that restarted since they were registered
    (a task is checked when its incarnation changed or it failed the last step).

    Raises: UnavailableError when such a task still does not answer.
    """
    c.stale.update(p.task for p in c.partitions
                   if p.task is not None and p.incarnation != cache.incarnation(p.task))
    deadline = timeout if timeout else REFRESH_DEADLINE_S
    for task in sorted(c.stale):
        now = cache.refresh(task, deadline)
        c.partitions = [_register(cache, p.graph, p.device, c.dataflow)
                        if p.task == task and p.incarnation != now else p
                        for p in c.partitions]
        c.stale.discard(task)


def _register(cache: WorkerCache, g: ir.GraphDef, dev: str, dataflow: bool) -> _Partition:
    """Registers partition `g` of `dev` on the worker that runs `dev`."""
    handle, incarnation = cache.register(dev, g, {"dataflow": dataflow})
    return _Partition(cache.worker_for(dev), handle, dev, g, cache.task_of(dev), incarnation)


def _deregister(partitions: list[_Partition]) -> None:
    """Deregisters partitions; a remote task that is gone has nothing left to deregister."""
    for p in partitions:
        try:
            p.worker.deregister_graph(p.handle)
        except errors.OpError:
            if p.task is None:
                raise
