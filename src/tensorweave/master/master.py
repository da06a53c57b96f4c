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
from dataclasses import dataclass, field

from tensorweave import errors, ir
from tensorweave.master.place import place
from tensorweave.master.prune import prune
from tensorweave.runtime.step import StepContext
from tensorweave.runtime.worker import LocalWorker, WorkerInterface


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


@dataclass
class _Callable:
    feed_dtypes: list
    partitions: list[_Partition]
    run_fast: object = None       # the single partition's executor.run, when there is one


@dataclass
class _MasterSession:
    config: dict
    worker: LocalWorker
    devices: list[str]
    nodes: dict[str, ir.NodeDef] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    placement: dict[str, str] = field(default_factory=dict)
    cache: dict = field(default_factory=dict)
    callables: dict[int, _Callable] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


class LocalMaster(MasterInterface):
    """The in-process master; each session gets its own in-process worker."""

    def __init__(self):
        self._sessions: dict[str, _MasterSession] = {}
        self._ids = itertools.count(1)
        self._steps = itertools.count(1)
        self._lock = threading.Lock()

    # -- sessions ---------------------------------------------------------------------------
    def create_session(self, graph_def, config) -> str:
        from tensorweave.runtime.device import local_device_names

        n_cpu = int(config.get("device_count", {}).get("CPU", 1) or 1)
        devices = local_device_names(cpus=n_cpu)
        sess = _MasterSession(config, LocalWorker(devices), devices)
        _add_nodes(sess, graph_def.nodes)
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
            _add_nodes(sess, graph_def.nodes)

    def list_devices(self, handle) -> list[dict]:
        return self._session(handle).worker.get_status()

    def close_session(self, handle) -> None:
        with self._lock:
            sess = self._sessions.pop(handle, None)
        if sess is not None:
            sess.worker.cleanup_all()

    def reset(self, containers=None) -> None:
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
        pruned = prune(sess.nodes, sess.order, feeds, fetches, targets, client)
        sess.placement = place(pruned.graph.nodes, sess.devices,
                               bool(sess.config.get("allow_soft_placement")), sess.placement)
        by_device: dict[str, list] = {}
        for n in pruned.graph.nodes:
            by_device.setdefault(sess.placement[n.name], []).append(n)
        if len(by_device) > 1:
            raise errors.UnimplementedError(
                None, None, "Running one step across several devices needs the partitioner "
                            f"(devices used: {sorted(by_device)})")
        parts = []
        for dev, nodes in by_device.items():
            g = ir.GraphDef(nodes=nodes, library=pruned.graph.library)
            parts.append(_Partition(sess.worker, sess.worker.register_graph(g, dev), dev, g))
        fast = None
        if len(parts) == 1:
            fast = sess.worker.executor(parts[0].handle).run
        return _Callable(pruned.feed_dtypes, parts, fast)

    def run_callable(self, handle, callable_id, feed_values, options=None):
        sess = self._sessions.get(handle)
        if sess is None:
            raise errors.AbortedError(None, None, f"Session {handle} is not found (closed?)")
        c = sess.callables[callable_id]
        timeout = _timeout_s(sess.config, options)
        if options is None or not (options.get("trace") or options.get("partition_graphs")):
            ctx = StepContext(next(self._steps), timeout_s=timeout)
            return c.run_fast(feed_values, ctx), None
        return self._run_traced(c, feed_values, options, timeout)

    def _run_traced(self, c: _Callable, feed_values, options, timeout):
        p = c.partitions[0]
        opts = {"trace": bool(options.get("trace")), "timeout_s": timeout}
        values, stats = p.worker.run_graph(p.handle, next(self._steps), feed_values, opts)
        meta: dict = {"step_stats": [stats] if stats else []}
        if options.get("partition_graphs"):
            meta["partition_graphs"] = [part.graph for part in c.partitions]
        return values, meta

    def release_callable(self, handle, callable_id) -> None:
        sess = self._session(handle)
        with sess.lock:
            c = sess.callables.pop(callable_id, None)
            sess.cache = {k: v for k, v in sess.cache.items() if v != callable_id}
        for p in (c.partitions if c else []):
            p.worker.deregister_graph(p.handle)


def _add_nodes(sess: _MasterSession, nodes) -> None:
    for n in nodes:
        if n.name not in sess.nodes:
            sess.order.append(n.name)
        sess.nodes[n.name] = n


def _timeout_s(config: dict, options: dict | None) -> float | None:
    ms = (options or {}).get("timeout_in_ms") or config.get("operation_timeout_in_ms")
    return ms / 1000.0 if ms and ms > 0 else None
