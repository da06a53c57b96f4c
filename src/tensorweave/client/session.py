"""`Session` and `InteractiveSession`: the client side of `Session.run`.

A session syncs its graph to a master (local, or remote over gRPC), asks it for one
*callable* per distinct (fetches, feeds) signature, and caches that callable with the
converters for its feeds, so a repeated `run` costs a dict lookup, the feed conversions and
the step itself.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass

import numpy as np

from tensorweave import errors
from tensorweave.client import fetch as fetch_lib
from tensorweave.framework.default_session import DEFAULT_SESSIONS
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.master.options import SessionOptions
from tensorweave.monitoring.step_hooks import LISTENERS


@dataclass
class _Entry:
    cid: int
    feed_keys: tuple
    converters: list      # one per fed tensor (a SparseTensor key feeds several)
    direct: bool          # every key is one tensor: converters line up with feed_keys
    build: object


class BaseSession:
    def __init__(self, target: str = "", graph=None, config=None):
        self._graph = graph if graph is not None else get_default_graph()
        self._target = target or ""
        self._config = config
        self._master = _master_for(self._target, config)
        self._synced = self._graph.version
        self._handle = self._master.create_session(self._graph._as_ir(0),
                                                   SessionOptions.from_config(config))
        self._cache: dict = {}
        self._closed = False
        self._lock = threading.Lock()
        self._default_ctx = None

    # -- properties -------------------------------------------------------------------------
    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> str:
        return self._target

    # -- running ----------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the ops and computes the tensors in `fetches`, with `feed_dict` substituted.

        Returns the fetched values in the structure of `fetches` (numpy arrays, numpy scalars
        for 0-d tensors, None for operations).
        Raises:
          RuntimeError: the session is closed.
          TypeError / ValueError: a bad fetch or feed (at the call, as TF1).
          errors.OpError: a failure while planning or running the step.
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if self._graph.version != self._synced:
            self._extend()
        feed_dict = _flatten_feed_dict(feed_dict) if feed_dict else {}
        entry = self._entry(fetches, feed_dict)
        vals = [conv(feed_dict[k]) for k, conv in zip(entry.feed_keys, entry.converters)] \
            if entry.direct else _expanded_feeds(entry, feed_dict)
        t0 = time.perf_counter() if LISTENERS else 0.0
        try:
            out, meta = self._master.run_callable(self._handle, entry.cid, vals,
                                                  _options_dict(options))
        except errors.OpError as e:
            raise self._annotate(e) from None
        if LISTENERS:
            for listener in LISTENERS:
                listener.record_step(time.perf_counter() - t0, self)
        if run_metadata is not None and meta:
            _fill_run_metadata(run_metadata, meta)
        return entry.build(out)

    def _entry(self, fetches, feed_dict) -> _Entry:
        try:
            key = (fetches, tuple(feed_dict))
            entry = self._cache.get(key)
        except TypeError:
            key = (fetch_lib.fetch_key(fetches), tuple(feed_dict))
            entry = self._cache.get(key)
        if entry is None:
            entry = self._make_entry(fetches, list(feed_dict))
            self._cache[key] = entry
        return entry

    def _make_entry(self, fetches, feed_keys) -> _Entry:
        mapper = fetch_lib.FetchMapper(self._graph, fetches)
        tensors, direct = self._feed_tensors(feed_keys)
        names = [t.name for t in tensors]
        try:
            cid, _ = self._master.make_callable(self._handle, names, mapper.fetch_names,
                                                mapper.targets)
        except errors.OpError as e:
            raise self._annotate(e) from None
        convs = [fetch_lib.feed_converter(t) for t in tensors]
        build = _finisher(mapper)
        return _Entry(cid, tuple(feed_keys), convs, direct, build)

    def _feed_tensors(self, feed_keys):
        """The feed tensors in order; `direct` is False when some key expands to several."""
        tensors, direct = [], True
        for k in feed_keys:
            pairs = fetch_lib.feed_pairs(k, None)
            direct = direct and len(pairs) == 1 and pairs[0][0] is k
            for t, _ in pairs:
                tensors.append(self._as_feed_tensor(t))
        return tensors, direct

    def _as_feed_tensor(self, key) -> Tensor:
        try:
            el = self._graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
        except (TypeError, ValueError, KeyError) as e:
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e}") from None
        if not isinstance(el, Tensor):
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {key!r}")
        return el

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A function running `fetches` with positional feeds for `feed_list`."""
        feed_list = list(feed_list or [])
        if self._graph.version != self._synced:
            self._extend()
        entry = self._make_entry(fetches, feed_list)
        if not entry.direct:
            raise TypeError("make_callable feeds must be Tensors or names")
        convs, cid, build = entry.converters, entry.cid, entry.build

        def call(*args, options=None, run_metadata=None):
            if len(args) != len(convs):
                raise ValueError(f"Expected {len(convs)} feed values, got {len(args)}")
            try:
                out, meta = self._master.run_callable(
                    self._handle, cid, [c(a) for c, a in zip(convs, args)],
                    _options_dict(options) if accept_options else None)
            except errors.OpError as e:
                raise self._annotate(e) from None
            if run_metadata is not None and meta:
                _fill_run_metadata(run_metadata, meta)
            return build(out)

        return call

    def _extend(self) -> None:
        with self._lock:
            version = self._graph.version
            if version != self._synced:
                self._master.extend_session(self._handle, self._graph._as_ir(self._synced))
                self._synced = version

    def _annotate(self, e: errors.OpError) -> errors.OpError:
        node = e.node_def
        op = None
        if node is not None:
            try:
                op = self._graph.get_operation_by_name(node.name)
            except KeyError:
                op = None
        if op is None:
            return e
        return e.replace(op=op, site=op.site)

    # -- devices and lifetime ---------------------------------------------------------------
    def list_devices(self) -> list:
        return [_DeviceAttributes(**d) for d in self._master.list_devices(self._handle)]

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._master.close_session(self._handle)

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def as_default(self):
        return DEFAULT_SESSIONS.controller(self)

    def __enter__(self):
        self._default_ctx = self.as_default()
        self._default_ctx.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        ctx, self._default_ctx = self._default_ctx, None
        if ctx is not None:
            ctx.__exit__(exc_type, exc, tb)
        self.close()


class Session(BaseSession):
    """TF1 `tf.Session(target="", graph=None, config=None)`."""

    @staticmethod
    def reset(target, containers=None, config=None) -> None:
        """Clears resource containers on the master at `target`."""
        _master_for(target, config).reset(containers)


class InteractiveSession(BaseSession):
    """A session that installs itself as the default (for shells and notebooks)."""

    def __init__(self, target: str = "", graph=None, config=None):
        super().__init__(target, graph, config)
        self._interactive_ctx = self.as_default()
        self._interactive_ctx.__enter__()

    def close(self) -> None:
        ctx, self._interactive_ctx = getattr(self, "_interactive_ctx", None), None
        if ctx is not None:
            with contextlib.suppress(Exception):
                ctx.__exit__(None, None, None)
        super().close()


@dataclass
class _DeviceAttributes:
    name: str
    device_type: str
    memory_limit: int
    incarnation: int

    @property
    def memory_limit_bytes(self) -> int:
        return self.memory_limit


def _flatten_feed_dict(feed_dict):
    """`feed_dict` with each nested-tuple key (an LSTMStateTuple, a cell's state) fed
    element by element from a value of the same structure (TF's nest.flatten_dict_items).

    Raises:
      ValueError: a key and its value of different sizes, or a tensor fed twice.
    """
    if not any(type(k) is not Tensor and isinstance(k, (tuple, list)) for k in feed_dict):
        return feed_dict
    from tensorweave.ops.control_flow_util import flatten, is_sequence

    flat: dict = {}
    for key, value in feed_dict.items():
        pairs = [(key, value)]
        if is_sequence(key):
            keys, values = flatten(key), flatten(value)
            if len(keys) != len(values):
                raise ValueError(f"Could not flatten dictionary. Key had {len(keys)} elements, "
                                 f"but value had {len(values)} elements. Key: {keys}, value: "
                                 f"{values}.")
            pairs = list(zip(keys, values))
        for k, v in pairs:
            if k in flat:
                raise ValueError(f"Could not flatten dictionary: key {k} is not unique.")
            flat[k] = v
    return flat


def _expanded_feeds(entry: _Entry, feed_dict) -> list:
    """Feed values when some key (a SparseTensor) stands for several tensors."""
    vals = [v for k in entry.feed_keys for _, v in fetch_lib.feed_pairs(k, feed_dict[k])]
    return [conv(v) for conv, v in zip(entry.converters, vals)]


def _finisher(mapper):
    if mapper.single:
        return lambda vals: _scalar(vals[0])
    build = mapper.build
    return lambda vals: build([_scalar(v) for v in vals])


def _scalar(v):
    if type(v) is np.ndarray and v.ndim == 0:
        return v[()]
    return v


# -- masters ---------------------------------------------------------------------------------
_local_master = None


def _master_for(target: str, config):
    global _local_master
    if not target:
        if _local_master is None:
            from tensorweave.master.master import LocalMaster

            _local_master = LocalMaster()
        return _local_master
    if target.startswith("grpc://"):
        from tensorweave.distributed.grpc_master import connect

        return connect(target, config)
    raise errors.InvalidArgumentError(None, None, f"Unknown session target '{target}'")


def _options_dict(options) -> dict | None:
    if options is None:
        return None
    if isinstance(options, dict):
        return options
    return {"trace": options.trace_level > 0, "timeout_in_ms": options.timeout_in_ms,
            "partition_graphs": options.output_partition_graphs,
            "inter_op_thread_pool": options.inter_op_thread_pool}


def _fill_run_metadata(run_metadata, meta: dict) -> None:
    from tensorweave.runtime.step_stats import fill_run_metadata

    fill_run_metadata(run_metadata, meta)


