"""A background watcher of CPU and memory that warns before the machine runs out.

    watcher = ResourceWatcher(writer=tf.summary.FileWriter(logdir))
    watcher.add_memory_holders(variable_memory_holders(sess.graph))
    watcher.add_callback(lambda alert: print("!!", alert.message))
    with watcher:
        for step in range(steps):
            t0 = time.perf_counter()
            sess.run(train_op)
            watcher.record_step(time.perf_counter() - t0, session=sess)

Every `interval` seconds a thread samples (psutil) the process's RSS and CPU and the
machine's memory and CPU use (memory is the cgroup's when the process runs under a smaller
memory limit). When memory or CPU use reaches its threshold (default 90%), the watcher logs a
warning and calls the registered callbacks once; it re-arms only when the value falls a margin
below the threshold (hysteresis: 5 points for memory, 15 for CPU, whose 1 s samples swing
widely), so a value hovering at the threshold alerts once, not on every swing.
Memory alerts name the largest holders that registered callables report. With a FileWriter
attached, each sample is also written as TensorBoard scalars under `resources/`.
Cost: a few psutil calls per interval (see benchmarks/monitoring.py: well under 1% of step
time at the default 1 s interval).
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import psutil

from tensorweave.monitoring import step_hooks

_log = logging.getLogger("tensorweave.monitoring")

MemoryHolders = Callable[[], Iterable[tuple[str, int]]]
REARM_MARGIN = {"memory": 0.05, "cpu": 0.15}


def _margins(margin) -> dict[str, float]:
    """Per metric, the re-arm margin (fraction below the threshold). Raises ValueError for an
    unknown metric or a negative margin."""
    if margin is None:
        return dict(REARM_MARGIN)
    given = margin if isinstance(margin, dict) else dict.fromkeys(REARM_MARGIN, margin)
    unknown = set(given) - set(REARM_MARGIN)
    if unknown:
        raise ValueError(f"rearm_margin for unknown metrics {sorted(unknown)}; "
                         f"metrics: {sorted(REARM_MARGIN)}")
    out = {**REARM_MARGIN, **{k: float(v) for k, v in given.items()}}
    if any(v < 0 for v in out.values()):
        raise ValueError(f"rearm_margin must not be negative, got {out}")
    return out


@dataclass(frozen=True)
class ResourceSample:
    """One measurement. Percentages are 0-100; process CPU is per core (may exceed 100)."""

    time: float
    process_rss: int
    process_cpu_percent: float
    memory_used: int
    memory_total: int
    memory_percent: float
    cpu_percent: float


@dataclass(frozen=True)
class ResourceAlert:
    """A threshold crossing: `metric` ("memory" or "cpu"), value and threshold as fractions."""

    metric: str
    value: float
    threshold: float
    sample: ResourceSample
    top_holders: list = field(default_factory=list)
    message: str = ""


@dataclass
class StepTimes:
    """Step durations (seconds) recorded for one session."""

    count: int = 0
    total: float = 0.0
    last: float = 0.0
    min: float = float("inf")
    max: float = 0.0

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    def add(self, seconds: float) -> None:
        self.count += 1
        self.total += seconds
        self.last = seconds
        self.min, self.max = min(self.min, seconds), max(self.max, seconds)


# -- measurements ---------------------------------------------------------------------------
def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None


_CGROUP_FILES = (("/sys/fs/cgroup/memory.current", "/sys/fs/cgroup/memory.max"),
                 ("/sys/fs/cgroup/memory/memory.usage_in_bytes",
                  "/sys/fs/cgroup/memory/memory.limit_in_bytes"))


def cgroup_memory_files(physical_total: int | None = None) -> tuple[str, int] | None:
    """(usage file, limit bytes) of this process's memory cgroup (v2 or v1), or None when
    there is no limit below the machine's memory."""
    physical_total = physical_total or psutil.virtual_memory().total
    for used_path, limit_path in _CGROUP_FILES:
        limit = _read_int(limit_path)
        if limit is not None and limit < physical_total and _read_int(used_path) is not None:
            return used_path, limit
    return None


class _CpuMeter:
    """Machine-wide CPU use between two calls, from psutil.cpu_times() (no shared state)."""

    def __init__(self):
        self._last = psutil.cpu_times()

    def percent(self) -> float:
        now = psutil.cpu_times()
        idle = lambda t: t.idle + getattr(t, "iowait", 0.0)  # noqa: E731
        total = sum(now) - sum(self._last)
        busy = total - (idle(now) - idle(self._last))
        self._last = now
        return 100.0 * busy / total if total > 0 else 0.0


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def variable_memory_holders(graph=None) -> MemoryHolders:
    """A holders callable listing `graph`'s global variables with their static sizes."""
    from tensorweave.framework.graph import GraphKeys, get_default_graph

    graph = graph or get_default_graph()

    def holders():
        for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
            shape = v.shape
            if shape.is_fully_defined():
                n = 1
                for d in shape.as_tuple():
                    n *= d
                yield v.op.name, n * v.dtype.base_dtype.size

    return holders


class ResourceWatcher:
    """Samples CPU and memory on a background thread; alerts on threshold crossings.

    Thread-safe: `record_step`, `sample`, `add_*` may be called from any thread.

    Args:
      interval: seconds between samples.
      memory_threshold, cpu_threshold: fractions (0-1) of memory / CPU in use that alert.
      rearm_margin: how far (a fraction) below its threshold a value must fall before the
        metric can alert again: one number for every metric, or {"memory": m, "cpu": c}
        (default `REARM_MARGIN`).
      writer: optional `FileWriter`; samples go to TensorBoard as scalars.
      memory_holders: optional callable returning (name, bytes) pairs (largest named first
        in memory alerts); more with `add_memory_holders`.
      history: samples kept in `samples`.
      top_k: holders named in a memory alert.
    """

    def __init__(self, interval: float = 1.0, memory_threshold: float = 0.9,
                 cpu_threshold: float = 0.9, writer=None,
                 rearm_margin: float | dict[str, float] | None = None,
                 memory_holders: MemoryHolders | None = None, history: int = 3600,
                 top_k: int = 5, tag_prefix: str = "resources"):
        self.interval = float(interval)
        self.thresholds = {"memory": float(memory_threshold), "cpu": float(cpu_threshold)}
        self.rearm_margins = _margins(rearm_margin)
        self.writer = writer
        self.top_k, self.tag_prefix = top_k, tag_prefix
        self._holders: list[MemoryHolders] = [memory_holders] if memory_holders else []
        self._callbacks: list[Callable[[ResourceAlert], None]] = []
        self._armed = {"memory": True, "cpu": True}
        self._samples: collections.deque = collections.deque(maxlen=history)
        self._steps: dict[str, StepTimes] = {}
        self._step_queue: collections.deque = collections.deque()  # (session, seconds)
        self._window: dict[str, list[float]] = {}  # step times since the last sample
        self._lock = threading.Lock()
        self._process = psutil.Process(os.getpid())
        self._process.cpu_percent(None)  # NOTE: psutil's first call returns 0.0; prime it
        self._cpu = _CpuMeter()
        self._cgroup = cgroup_memory_files()  # NOTE: looked up once; /sys reads cost ~20 us
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._sample_count = 0
        self._failed = False
        self.cpu_seconds = 0.0  # CPU time the sampling thread has used (its own cost)

    # -- registration ----------------------------------------------------------------------
    def add_callback(self, fn: Callable[[ResourceAlert], None]):
        """Calls `fn(alert)` on each threshold crossing (exceptions are logged). Returns fn."""
        with self._lock:
            self._callbacks.append(fn)
        return fn

    def add_memory_holders(self, fn: MemoryHolders) -> MemoryHolders:
        """Registers a callable returning (name, bytes) pairs of large memory users."""
        with self._lock:
            self._holders.append(fn)
        return fn

    def attach_writer(self, writer) -> None:
        """Writes later samples to `writer` (a FileWriter) as scalars; None detaches."""
        self.writer = writer

    # -- step times ------------------------------------------------------------------------
    def record_step(self, seconds: float, session=None) -> None:
        """Records one step's duration, per session (`session` or its name/id as key).

        Called every step, so it only appends to a thread-safe deque (well under a
        microsecond); statistics are folded in when sampled or read.
        """
        self._step_queue.append((session, seconds))
        if len(self._step_queue) > 4096:
            self._drain_steps()

    def _drain_steps(self) -> None:
        q = self._step_queue
        with self._lock:
            while True:
                try:
                    session, seconds = q.popleft()
                except IndexError:
                    return
                key = _session_key(session)
                self._steps.setdefault(key, StepTimes()).add(float(seconds))
                self._window.setdefault(key, []).append(float(seconds))

    def step_times(self) -> dict[str, StepTimes]:
        """Per session key, the step time statistics so far (copies)."""
        self._drain_steps()
        with self._lock:
            return {k: StepTimes(v.count, v.total, v.last, v.min, v.max)
                    for k, v in self._steps.items()}

    # -- sampling --------------------------------------------------------------------------
    @property
    def samples(self) -> list[ResourceSample]:
        with self._lock:
            return list(self._samples)

    @property
    def latest(self) -> ResourceSample | None:
        with self._lock:
            return self._samples[-1] if self._samples else None

    def measure(self) -> ResourceSample:
        """Takes one measurement (no threshold checks, nothing recorded)."""
        vm = psutil.virtual_memory()
        used, total = vm.total - vm.available, vm.total
        if self._cgroup is not None:
            used, total = _read_int(self._cgroup[0]) or used, self._cgroup[1]
        return ResourceSample(
            time=time.time(), process_rss=self._process.memory_info().rss,
            process_cpu_percent=self._process.cpu_percent(None), memory_used=used,
            memory_total=total, memory_percent=100.0 * used / total if total else 0.0,
            cpu_percent=self._cpu.percent())

    def sample(self, measurement: ResourceSample | None = None) -> ResourceSample:
        """Records a sample (taken now unless given), checks thresholds, writes scalars."""
        s = measurement or self.measure()
        self._drain_steps()
        with self._lock:
            self._samples.append(s)
            self._sample_count += 1
            index = self._sample_count
            step_means, self._window = self._window, {}
        self._check("memory", s.memory_percent / 100.0, s)
        self._check("cpu", s.cpu_percent / 100.0, s)
        if self.writer is not None:
            self._write(s, index, step_means)
        return s

    def _check(self, metric: str, value: float, s: ResourceSample) -> None:
        threshold = self.thresholds[metric]
        with self._lock:
            fire = self._armed[metric] and value >= threshold
            if fire:
                self._armed[metric] = False
            elif value < threshold - self.rearm_margins[metric]:
                self._armed[metric] = True
        if not fire:
            return
        holders = self.top_holders() if metric == "memory" else []
        alert = ResourceAlert(metric, value, threshold, s, holders,
                              _alert_message(metric, value, threshold, s, holders))
        _log.warning("%s", alert.message)
        for fn in list(self._callbacks):
            try:
                fn(alert)
            except Exception:  # noqa: BLE001 - a callback must not stop the watcher
                _log.exception("resource watcher callback %r failed", fn)

    def top_holders(self) -> list[tuple[str, int]]:
        """The `top_k` largest (name, bytes) pairs over all registered holder callables."""
        found: list[tuple[str, int]] = []
        for fn in list(self._holders):
            try:
                found.extend((str(n), int(b)) for n, b in fn())
            except Exception:  # noqa: BLE001
                _log.exception("memory holders callable %r failed", fn)
        return sorted(found, key=lambda p: (-p[1], p[0]))[: self.top_k]

    def _write(self, s: ResourceSample, index: int, step_lists: dict) -> None:
        from tensorweave.proto import summary_pb2

        p = self.tag_prefix
        summ = summary_pb2.Summary()
        for tag, value in ((f"{p}/process_rss_mb", s.process_rss / 2**20),
                           (f"{p}/process_cpu_percent", s.process_cpu_percent),
                           (f"{p}/memory_percent", s.memory_percent),
                           (f"{p}/cpu_percent", s.cpu_percent)):
            summ.value.add(tag=tag, simple_value=value)
        for key, times in sorted(step_lists.items()):
            summ.value.add(tag=f"{p}/step_time_ms/{key}",
                           simple_value=1000.0 * sum(times) / len(times))
        try:
            self.writer.add_summary(summ, global_step=index)
        except Exception:  # noqa: BLE001 - monitoring never stops training
            _log.exception("resource watcher: writing samples failed")

    # -- life cycle ------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> ResourceWatcher:
        """Starts the sampling thread (idempotent). Returns self."""
        if self.running:
            return self
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="tensorweave-resource-watcher",
                                        daemon=True)
        self._thread.start()
        if self not in step_hooks.LISTENERS:
            step_hooks.LISTENERS.append(self)  # every session reports its step times
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stops the thread (waits up to `timeout` s); a later start() resumes."""
        self._stop.set()
        if self in step_hooks.LISTENERS:
            step_hooks.LISTENERS.remove(self)
        if self._thread is not None:
            self._thread.join(timeout)
        self._thread = None

    def __enter__(self) -> ResourceWatcher:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            t0 = time.thread_time()
            try:
                self.sample()
                self._failed = False
            except Exception:  # noqa: BLE001 - log once, keep watching
                if not self._failed:
                    _log.exception("resource watcher: sampling failed")
                self._failed = True
            self.cpu_seconds += time.thread_time() - t0


def _session_key(session) -> str:
    if session is None:
        return "default"
    if isinstance(session, str):
        return session
    return f"session_{id(session):x}"


def _alert_message(metric, value, threshold, s: ResourceSample, holders) -> str:
    if metric == "cpu":
        return (f"CPU use at {value:.0%} (threshold {threshold:.0%}); this process uses "
                f"{s.process_cpu_percent:.0f}% of a core")
    msg = (f"Memory use at {value:.0%} (threshold {threshold:.0%}): "
           f"{_fmt_bytes(s.memory_used)} of {_fmt_bytes(s.memory_total)}; this process holds "
           f"{_fmt_bytes(s.process_rss)}")
    if holders:
        msg += "; largest: " + ", ".join(f"{n} ({_fmt_bytes(b)})" for n, b in holders)
    return msg


__all__ = ["ResourceWatcher", "ResourceSample", "ResourceAlert", "StepTimes",
           "variable_memory_holders", "cgroup_memory_files"]
