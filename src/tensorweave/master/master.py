"""The master: sessions, the per-signature plan cache, and step orchestration.

For each distinct (feeds, fetches, targets) the master prunes the graph, places it and
registers one partition per device on the workers; the result is a *callable* cached under
the signature, and `make_callable` hands its id out so a client can skip even the lookup.
`MasterInterface` takes and returns plain data, so a gRPC master can serialize it.
"""

from __future__ import annotations

import abc
import itertools
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from tensorweave import errors, ir
from tensorweave.master.partition import partition
from tensorweave.master.passes import PassContext, disabled_from_config, optimize
from tensorweave.master.passes.graph_view import CONTROL_FLOW_OPS
from tensorweave.master.place import Placement, place
from tensorweave.master.prune import prune
from tensorweave.runtime.rendezvous import Rendezvous
from tensorweave.runtime.step import Cancellation, StepContext
from tensorweave.runtime.worker import LocalWorker, WorkerInterface

MAX_CPU_DEVICES = 256


class MasterInterface(abc.ABC):
    """The master service (TF's MasterService, as Python calls)."""

    @abc.abstractmethod
    def create_session(self, graph_def: ir.GraphDef, config: dict) -> str: ...

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
    run_fast: object = None       # the single partition's executor.run, when there is one
    dataflow: bool = False
    stale: set = field(default_factory=set)  # remote tasks to check before the next step

    @property
    def remote_tasks(self) -> set[str]:
        return {p.task for p in self.partitions if p.task is not None}


@dataclass
class _MasterSession:
    config: dict
    worker: LocalWorker
    devices: list[str]
    nodes: dict[str, ir.NodeDef] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    shapes: dict[str, list] = field(default_factory=dict)
    placement: Placement = field(default_factory=Placement)
    cache: dict = field(default_factory=dict)
    callables: dict[int, _Callable] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    pool: ThreadPoolExecutor | None = None
    passes: tuple = (set(), None)   # (disabled pass names, explicit pass list or None)
    device_attrs: list[dict] = field(default_factory=list)
    library: dict = field(default_factory=dict)  # function name -> FunctionDef
    steps: Cancellation = field(default_factory=Cancellation)  # its steps: close cancels them

    def run_pool(self) -> ThreadPoolExecutor:
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=max(len(self.devices), 2),
                                           thread_name_prefix="tw-partition")
        return self.pool


class LocalMaster(MasterInterface):
    """The in-process master; each session gets its own in-process worker.

    With `worker` (a server's), every session runs on that one shared worker instead, so its
    resources (variables, queues) outlive sessions as on a TF server: closing a session then
    only deregisters its graphs, and `reset` clears the containers. With `cluster` (a server's
    `distributed.remote.ClusterWorkers`) sessions span every task of the cluster: see
    distributed/cluster_steps.py.
    """

    def __init__(self, worker: LocalWorker | None = None, cluster=None):
        self._shared = worker
        self._cluster = cluster
        self._sessions: dict[str, _MasterSession] = {}
        self._ids = itertools.count(1)
        self._steps = itertools.count(1)
        self._lock = threading.Lock()
        self._abort = Cancellation()  # every step, when the server stops (abort_steps)

    # -- sessions ---------------------------------------------------------------------------
    def create_session(self, graph_def, config) -> str:
        from tensorweave.runtime.device import local_device_names

        n_cpu = int((config.get("device_count") or {}).get("CPU", 1) or 1)
        if not 1 <= n_cpu <= MAX_CPU_DEVICES:
            raise errors.InvalidArgumentError(
                None, None, f"device_count['CPU'] = {n_cpu}: expected 1..{MAX_CPU_DEVICES}")
        devices = local_device_names(cpus=n_cpu)
        # NOTE: 0 means one thread here, unlike TF: the kernels already use every core
        # (cpu/parallel.py), and a pool only paid off for mid-sized independent work.
        inter_op = int(config.get("inter_op_parallelism_threads") or 0)
        intra_op = int(config.get("intra_op_parallelism_threads") or 0)
        if intra_op > 0:  # as TF's: the process's kernel threads (cpu/parallel.py)
            from tensorweave.runtime.kernels.cpu import parallel

            parallel.set_num_threads(intra_op)
        if self._shared is not None:
            devices = list(self._shared.devices)
        worker = self._shared or LocalWorker(devices, inter_op)
        attrs = None
        if self._cluster is not None:
            from tensorweave.distributed.cluster_steps import discover

            attrs = discover(self._cluster, config)
            devices = [d["name"] for d in attrs]
        sess = _MasterSession(config, worker, devices, steps=Cancellation(self._abort))
        sess.device_attrs = attrs or worker.get_status()
        sess.passes = disabled_from_config(config)
        _add_nodes(sess, graph_def)
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
            _add_nodes(sess, graph_def)

    def list_devices(self, handle) -> list[dict]:
        return list(self._session(handle).device_attrs)

    def close_session(self, handle) -> None:
        with self._lock:
            sess = self._sessions.pop(handle, None)
        if sess is not None:
            # NOTE: as TF's MasterSession::Close, steps in flight end now (CancelledError)
            sess.steps.cancel(errors.CancelledError(
                None, None, "Step was cancelled by an explicit call to `Session::Close()`."))
            if sess.pool is not None:
                sess.pool.shutdown(wait=False)
            if self._shared is not None:
                with sess.lock:  # NOTE: another thread of the client may still be building
                    callables = list(sess.callables.values())
                for c in callables:
                    _deregister(c.partitions)
                return
            sess.worker.cleanup_all()
            sess.worker.close()

    def abort_steps(self, error: errors.OpError) -> None:
        """Cancels every step in flight, and every later one, with `error` (a server that
        stops)."""
        self._abort.cancel(error)  # NOTE: every session's `steps` has it as parent

    def close(self) -> None:
        """Releases the master's own threads (a server's, when it stops)."""
        if self._cluster is not None:
            self._cluster.close()

    def reset(self, containers=None) -> None:
        if self._cluster is not None:
            from tensorweave.distributed.cluster_steps import reset_tasks

            reset_tasks(self._cluster, containers)
        if self._shared is not None:
            self._shared.cleanup_all(containers)
        for sess in list(self._sessions.values()):
            sess.worker.cleanup_all(containers)

    # -- callables --------------------------------------------------------------------------
    def make_callable(self, handle, feeds, fetches, targets):
        sess = self._session(handle)
        key = (tuple(feeds), tuple(fetches), tuple(targets))
        with sess.lock:
            cid = sess.cache.get(key)
            if cid is None:
                cid = len(sess.callables) + 1
                sess.callables[cid] = self._build(sess, feeds, fetches, targets)
                sess.cache[key] = cid
            return cid, sess.callables[cid].feed_dtypes

    def _build(self, sess: _MasterSession, feeds, fetches, targets) -> _Callable:
        client = sess.devices[0]
        place(sess.nodes, sess.order, sess.devices, sess.placement,
              bool(sess.config.get("allow_soft_placement")),
              bool(sess.config.get("log_device_placement")))
        pruned = prune(sess.nodes, sess.order, feeds, fetches, targets, client)
        if len(sess.devices) == 1:  # NOTE: one device: nothing to write down or split
            for n in pruned.graph.nodes:
                if n.op not in ("_Arg", "_Retval"):
                    sess.placement.device_of(n.name)  # raises a recorded placement error
            placed = ir.GraphDef(nodes=pruned.graph.nodes, library=list(sess.library.values()),
                                 shapes=sess.shapes)
            graphs = {client: self._optimize(sess, placed, set(targets))}
        else:
            placed = ir.GraphDef(nodes=[_placed(n, client, sess.placement)
                                        for n in pruned.graph.nodes],
                                 library=list(sess.library.values()), shapes=sess.shapes)
            optimized = self._optimize(sess, placed, set(targets))
            graphs = partition(optimized, {n.name: n.device for n in optimized.nodes})
        dataflow = len(graphs) > 1 and any(n.op in CONTROL_FLOW_OPS for g in graphs.values()
                                           for n in g.nodes)
        parts = [self._register(sess, graphs[dev], dev, dataflow)
                 for dev in [client] + sorted(d for d in graphs if d != client) if dev in graphs]
        fast = None
        if len(parts) == 1 and parts[0].task is None:
            fast = sess.worker.executor(parts[0].handle).run
        return _Callable(pruned.feed_dtypes, parts, fast, dataflow)

    def _register(self, sess: _MasterSession, g: ir.GraphDef, dev: str,
                  dataflow: bool) -> _Partition:
        """Registers partition `g` of `dev` on the worker that runs `dev`."""
        worker, task, incarnation = sess.worker, None, 0
        if self._cluster is not None and not self._cluster.is_local(dev):
            from tensorweave.distributed.remote import register_remote, task_of

            task = task_of(dev)
            worker = self._cluster.remote(task)
            incarnation, handle = register_remote(self._cluster, task, g, dev,
                                                  {"dataflow": dataflow})
        else:
            handle = worker.register_graph(g, dev, {"dataflow": dataflow})
        return _Partition(worker, handle, dev, g, task, incarnation)

    @staticmethod
    def _optimize(sess: _MasterSession, graph: ir.GraphDef, keep: set[str]) -> ir.GraphDef:
        disabled, only = sess.passes
        ctx = PassContext(keep=keep, disabled=disabled)
        return optimize(graph, ctx, only)

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
        timeout = _timeout_s(sess.config, options)
        # NOTE: the step ends with CancelledError when its session closes, or when the
        # transport says its client went away (options["cancellation"])
        call = (options or {}).get("cancellation")
        cancel = sess.steps if call is None else Cancellation(sess.steps, call)
        traced = options is not None and bool(options.get("trace") or
                                              options.get("partition_graphs"))
        if c.run_fast is not None and not traced:
            ctx = StepContext(next(self._steps), timeout_s=timeout, cancellation=cancel)
            return c.run_fast(feed_values, ctx), None
        if c.remote_tasks:
            from tensorweave.distributed.cluster_steps import run_cluster_step

            return run_cluster_step(self, sess, c, feed_values, options or {}, timeout, cancel)
        return self._run_partitions(sess, c, feed_values, options or {}, timeout, cancel)

    def _run_partitions(self, sess, c: _Callable, feed_values, options, timeout, cancel=None):
        """Runs every partition of one step concurrently; the first error aborts them all."""
        step_id = next(self._steps)
        rendezvous = Rendezvous(len(c.partitions))
        opts = {"trace": bool(options.get("trace"))}
        ctxs = [StepContext(step_id, rendezvous, timeout, cancellation=cancel)
                for _ in c.partitions]
        others = [sess.run_pool().submit(self._run_one, p, step_id, [], opts, ctx)
                  for p, ctx in zip(c.partitions[1:], ctxs[1:])]
        results = [self._run_one(c.partitions[0], step_id, feed_values, opts, ctxs[0])]
        results += [f.result() for f in others]
        if rendezvous.error is not None:
            raise rendezvous.error
        meta: dict = {"step_stats": [r[1] for r in results if r[1]]}
        if options.get("partition_graphs"):
            meta["partition_graphs"] = [p.graph for p in c.partitions]
        return results[0][0], meta

    @staticmethod
    def _run_one(p: _Partition, step_id, args, opts, ctx):
        """One partition's step; an error aborts the step's rendezvous (first error wins)."""
        try:
            return p.worker.run_graph(p.handle, step_id, args, opts, ctx)
        except errors.OpError as e:
            ctx.rendezvous.abort(e)
            return e
        finally:
            ctx.rendezvous.done()

    def release_callable(self, handle, callable_id) -> None:
        sess = self._session(handle)
        with sess.lock:
            c = sess.callables.pop(callable_id, None)
            sess.cache = {k: v for k, v in sess.cache.items() if v != callable_id}
        _deregister(c.partitions if c else [])


def _deregister(partitions: list[_Partition]) -> None:
    """Deregisters partitions; a remote task that is gone has nothing left to deregister."""
    for p in partitions:
        try:
            p.worker.deregister_graph(p.handle)
        except errors.OpError:
            if p.task is None:
                raise


def _placed(n: ir.NodeDef, client: str, placement: Placement) -> ir.NodeDef:
    """A copy of `n` whose device is its placement (feeds and fetches on the client)."""
    out = n.copy()
    out.device = client if n.op in ("_Arg", "_Retval") else placement.device_of(n.name)
    return out


def _add_nodes(sess: _MasterSession, graph_def: ir.GraphDef) -> None:
    """Adds a graph (or an extension of it) to the session.

    Raises: InvalidArgumentError, adding nothing, when an input names no node (TF's
    "Unknown input node").
    """
    new = {n.name for n in graph_def.nodes}
    for n in graph_def.nodes:
        for inp in n.inputs:
            src = ir.parse_input(inp)[0]
            if src not in new and src not in sess.nodes:
                raise errors.InvalidArgumentError(
                    None, None, f"Node '{n.name}': Unknown input node '{inp}'")
    sess.shapes.update(graph_def.shapes)
    # NOTE: partitions carry the functions (tf.data, defuns) so a remote task can run them.
    sess.library.update((f.name, f) for f in graph_def.library or ())
    for n in graph_def.nodes:
        if n.name not in sess.nodes:
            sess.order.append(n.name)
        sess.nodes[n.name] = n


def _timeout_s(config: dict, options: dict | None) -> float | None:
    ms = (options or {}).get("timeout_in_ms") or config.get("operation_timeout_in_ms")
    return ms / 1000.0 if ms and ms > 0 else None
