"""Chrome-trace timelines of one step, from `RunMetadata.step_stats` (TF's client/timeline.py).

    run_metadata = tf.RunMetadata()
    sess.run(train_op, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=run_metadata)
    trace = Timeline(run_metadata.step_stats).generate_chrome_trace_format()
    open("timeline.json", "w").write(trace)   # open in chrome://tracing or ui.perfetto.dev

The trace has one "Allocators" process, then two per device: "<device> Compute" (each op a
complete "X" event named after its op type, on the first lane free at its start) and
"<device> Tensors" (tensor objects when `show_memory`). Data-flow arrows ("s"/"t" pairs, cat
"DataFlow") join producer and consumer when they run on different devices or lanes; memory
counters ("C", cat "Memory") give each allocator's live bytes over time. The output equals
TensorFlow's for the same StepStats.
"""

from __future__ import annotations

import collections
import copy
import json
import logging
import re

from tensorweave.proto import step_stats_pb2

_log = logging.getLogger("tensorweave.timeline")
_LABEL = re.compile(r"(.*) = (.*)\((.*)\)")

AllocationMaximum = collections.namedtuple("AllocationMaximum",
                                           ("timestamp", "num_bytes", "tensors"))
StepStatsAnalysis = collections.namedtuple("StepStatsAnalysis",
                                           ("chrome_trace", "allocator_maximums"))


class _ChromeTrace:
    """Trace events in Chrome's Trace Event Format: metadata first, then events."""

    def __init__(self):
        self.metadata: list[dict] = []
        self.events: list[dict] = []

    @staticmethod
    def _event(ph, cat, name, pid, tid, ts) -> dict:
        return {"ph": ph, "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts}

    def process(self, name: str, pid: int) -> None:
        self.metadata.append({"name": "process_name", "ph": "M", "pid": pid,
                              "args": {"name": name}})

    def region(self, ts, dur, pid, tid, cat, name, args) -> None:
        self.events.append({**self._event("X", cat, name, pid, tid, ts), "dur": dur,
                            "args": args})

    def obj(self, ph, name, ts, pid, tid, obj_id, snapshot=None) -> None:
        event = {**self._event(ph, "Tensor", name, pid, tid, ts), "id": obj_id}
        if snapshot is not None:
            event["args"] = {"snapshot": snapshot}
        self.events.append(event)

    def flow(self, ph, name, ts, pid, tid, flow_id) -> None:
        self.events.append({**self._event(ph, "DataFlow", name, pid, tid, ts), "id": flow_id})

    def counter(self, cat, name, pid, ts, counter, value) -> None:
        self.events.append({**self._event("C", cat, name, pid, 0, ts),
                            "args": {counter: value}})

    def format_to_string(self, pretty: bool = False) -> str:
        trace = {"traceEvents": self.metadata + self.events}
        if pretty:
            return json.dumps(trace, indent=4, separators=(",", ": "))
        return json.dumps(trace, separators=(",", ":"))


class _Tensor:
    """A tensor's lifetime: created when its op starts, last unreferenced by a consumer."""

    def __init__(self, name, object_id, create_time, pid, allocator, num_bytes):
        self.name, self.object_id, self.create_time = name, object_id, create_time
        self.pid, self.allocator, self.num_bytes = pid, allocator, num_bytes
        self.unref_times: list[int] = []

    @property
    def last_unref(self) -> int:
        return max(self.unref_times)


def parse_op_label(label: str) -> tuple[str, str, list[str]]:
    """`"name = Op(a, b)"` → (name, op, [a, b]); anything else → ("unknown", "unknown", [])."""
    m = _LABEL.match(label)
    if m is None:
        return "unknown", "unknown", []
    name, op, inputs = m.groups()
    return name, op, inputs.split(", ") if inputs else []


def _kernel_label(label: str, node_name: str) -> tuple[str, str]:
    start, end = label.find("@@"), label.find("#")
    if start >= 0 and end >= 0 and start + 2 < end:
        node_name = label[start + 2:end]
    fields = node_name.split(":") + ["unknown"]
    return fields[0], fields[1]


def _is_gputrace_device(device: str) -> bool:
    return "/stream:" in device or "/memcpy" in device


def _as_step_stats(step_stats) -> step_stats_pb2.StepStats:
    """A private copy as our StepStats (accepts TF's own StepStats or RunMetadata too)."""
    if hasattr(step_stats, "step_stats") and not hasattr(step_stats, "dev_stats"):
        step_stats = step_stats.step_stats
    return step_stats_pb2.StepStats.FromString(step_stats.SerializeToString())


class Timeline:
    """A Chrome-trace view of one step's `StepStats`. Not thread-safe.

    Args:
      step_stats: `RunMetadata.step_stats` (ours or TensorFlow's), or the RunMetadata itself.
      graph: optional, unused (TF's signature).
    """

    def __init__(self, step_stats, graph=None):
        self._origin_step_stats = _as_step_stats(step_stats)
        self._graph = graph

    def _reset(self) -> None:
        self._trace = _ChromeTrace()
        self._next_pid = 0
        self._device_pids: dict[str, int] = {}
        self._tensor_pids: dict[str, int] = {}
        self._tensors: dict[str, _Tensor] = {}
        self._next_flow_id = 0
        self._flow_starts: dict[str, tuple[int, int, int]] = {}

    def _alloc_pid(self) -> int:
        self._next_pid += 1
        return self._next_pid - 1

    # -- analysis steps, in TF's order ---------------------------------------------------
    def _allocate_pids(self) -> None:
        self._allocators_pid = self._alloc_pid()
        self._trace.process("Allocators", self._allocators_pid)
        for dev in self._step_stats.dev_stats:
            self._device_pids[dev.device] = self._alloc_pid()
            self._tensor_pids[dev.device] = self._alloc_pid()
            self._trace.process(dev.device + " Compute", self._device_pids[dev.device])
            self._trace.process(dev.device + " Tensors", self._tensor_pids[dev.device])

    def _assign_lanes(self) -> None:
        """Per device, each op goes to the first lane whose last op ended before it starts."""
        for dev in self._step_stats.dev_stats:
            lanes = [0]
            for ns in dev.node_stats:
                end = ns.all_start_micros + ns.all_end_rel_micros
                lane = next((i for i, t in enumerate(lanes) if ns.all_start_micros > t), -1)
                if lane < 0:
                    lane = len(lanes)
                    lanes.append(end)
                else:
                    lanes[lane] = end
                ns.thread_id = lane

    def _analyze_tensors(self, show_memory: bool) -> None:
        for dev in self._step_stats.dev_stats:
            device_pid, tensors_pid = self._device_pids[dev.device], self._tensor_pids[dev.device]
            for ns in dev.node_stats:
                start, end = ns.all_start_micros, ns.all_start_micros + ns.all_end_rel_micros
                for index, output in enumerate(ns.output):
                    name = f"{ns.node_name}:{index}" if index else ns.node_name
                    alloc = output.tensor_description.allocation_description
                    tensor = _Tensor(name, len(self._tensors), start, tensors_pid,
                                     alloc.allocator_name, alloc.requested_bytes)
                    self._tensors[name] = tensor
                    tensor.unref_times.append(end)
                    self._flow_starts[name] = (end, device_pid, ns.thread_id)
                    if show_memory:
                        self._trace.obj("N", name, start, tensors_pid, ns.thread_id,
                                        tensor.object_id)
                        desc = str(output.tensor_description).replace('"', "")
                        self._trace.obj("O", name, end - 1, tensors_pid, ns.thread_id,
                                        tensor.object_id, {"tensor_description": desc})

    def _emit_op(self, ns, pid: int, is_gputrace: bool) -> list[str]:
        """Emits the op's X event; returns its input tensor names."""
        node_name, inputs = ns.node_name, list[str]()
        if is_gputrace:
            node_name, op = _kernel_label(ns.timeline_label, node_name)
        elif node_name == "RecvTensor":
            op = "RecvTensor"
        else:
            _, op, inputs = parse_op_label(ns.timeline_label)
        args = {"name": node_name, "op": op}
        args.update({f"input{i}": name for i, name in enumerate(inputs)})
        self._trace.region(ns.all_start_micros, ns.all_end_rel_micros, pid, ns.thread_id, "Op",
                           op, args)
        return [] if is_gputrace or node_name == "RecvTensor" else inputs

    def _show_compute(self, show_dataflow: bool) -> None:
        for dev in self._step_stats.dev_stats:
            pid, is_gputrace = self._device_pids[dev.device], _is_gputrace_device(dev.device)
            for ns in dev.node_stats:
                for name in self._emit_op(ns, pid, is_gputrace):
                    self._consume(ns, pid, self._resolve_input(name), show_dataflow)

    def _resolve_input(self, name: str) -> str:
        # NOTE: partitioning renames inputs `x/_3`; the flow then starts at the original `x`.
        if name not in self._tensors:
            cut = name.rfind("/_")
            if cut > 0:
                name = name[:cut]
        return name

    def _consume(self, ns, pid: int, name: str, show_dataflow: bool) -> None:
        tensor = self._tensors.get(name)
        if tensor is None:
            _log.debug("Can't find tensor %s - removed by CSE?", name)
            return
        start, end = ns.all_start_micros, ns.all_start_micros + ns.all_end_rel_micros
        tensor.unref_times.append(end - 1)
        if not show_dataflow:
            return
        create_time, create_pid, create_tid = self._flow_starts[name]
        if create_pid != pid or create_tid != ns.thread_id:
            flow_id, self._next_flow_id = self._next_flow_id, self._next_flow_id + 1
            self._trace.flow("s", name, create_time, create_pid, create_tid, flow_id)
            self._trace.flow("t", name, start, pid, ns.thread_id, flow_id)

    def _show_memory_counters(self) -> dict:
        allocations: dict[str, list] = {}
        for name, tensor in self._tensors.items():
            self._trace.obj("D", name, tensor.last_unref, tensor.pid, 0, tensor.object_id)
            allocations.setdefault(tensor.allocator, []).extend([
                (tensor.create_time, tensor.num_bytes, name),
                (tensor.last_unref, -tensor.num_bytes, name)])
        return {allocator: self._allocator_series(allocator, sorted(events))
                for allocator, events in allocations.items()}

    def _allocator_series(self, allocator: str, events: list) -> AllocationMaximum:
        total, live = 0, set[str]()
        peak = AllocationMaximum(timestamp=0, num_bytes=0, tensors=set())
        for ts, num_bytes, name in events:
            total += num_bytes
            (live.discard if num_bytes < 0 else live.add)(name)
            if total > peak.num_bytes:
                peak = AllocationMaximum(timestamp=ts, num_bytes=total, tensors=set(live))
            self._trace.counter("Memory", allocator, self._allocators_pid, ts, allocator, total)
        return peak

    def _preprocess_op_time(self, op_time: str) -> None:
        """"schedule": times as recorded; "gpu"/"all": stretch ops over their GPU kernels."""
        self._step_stats = copy.deepcopy(self._origin_step_stats)
        if op_time == "schedule":
            return
        gpu_start: dict[str, int] = {}
        gpu_end: dict[str, int] = {}
        for dev in self._step_stats.dev_stats:
            if "/stream:all" not in dev.device:
                continue
            for k in dev.node_stats:
                name, _ = _kernel_label(k.timeline_label, k.node_name)
                start, end = k.all_start_micros, k.all_start_micros + k.all_end_rel_micros
                gpu_start[name] = min(gpu_start.get(name, start), start)
                gpu_end[name] = max(gpu_end.get(name, end), end)
        for dev in self._step_stats.dev_stats:
            if "/stream:all" in dev.device or "/job" not in dev.device:
                continue
            for op in dev.node_stats:
                if op.node_name in gpu_start:
                    end = max(gpu_end[op.node_name], op.all_start_micros + op.all_end_rel_micros)
                    if op_time == "gpu":
                        op.all_start_micros = gpu_start[op.node_name]
                    op.all_end_rel_micros = end - op.all_start_micros

    # -- public API ----------------------------------------------------------------------
    def analyze_step_stats(self, show_dataflow: bool = True, show_memory: bool = True,
                           op_time: str = "schedule") -> StepStatsAnalysis:
        """The trace and, per allocator, its peak (`AllocationMaximum`) when `show_memory`."""
        self._reset()
        self._preprocess_op_time(op_time)
        self._allocate_pids()
        self._assign_lanes()
        self._analyze_tensors(show_memory)
        self._show_compute(show_dataflow)
        maximums = self._show_memory_counters() if show_memory else {}
        return StepStatsAnalysis(chrome_trace=self._trace, allocator_maximums=maximums)

    def generate_chrome_trace_format(self, show_dataflow: bool = True, show_memory: bool = False,
                                     op_time: str = "schedule") -> str:
        """The step as Chrome Trace Format JSON text (pretty-printed, as TF's)."""
        analysis = self.analyze_step_stats(show_dataflow, show_memory, op_time)
        return analysis.chrome_trace.format_to_string(pretty=True)

    def save(self, path, show_dataflow: bool = True, show_memory: bool = False) -> str:
        """Writes the trace to `path` (for chrome://tracing or ui.perfetto.dev); returns it."""
        with open(path, "w") as f:
            f.write(self.generate_chrome_trace_format(show_dataflow, show_memory))
        return str(path)


def run_traced(sess, fetches, feed_dict=None, writer=None, tag: str = "traced_step",
               global_step=None, trace_path=None, show_memory: bool = False):
    """Runs one step with FULL_TRACE; returns `(results, run_metadata)`.

    With `writer` (a FileWriter) the RunMetadata is added under `tag` (TensorBoard's "Session
    runs"); with `trace_path` the step's Chrome trace is written there.
    """
    from tensorweave.proto import config_pb2

    run_metadata = config_pb2.RunMetadata()
    options = config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE)
    results = sess.run(fetches, feed_dict, options=options, run_metadata=run_metadata)
    if writer is not None:
        writer.add_run_metadata(run_metadata, tag, global_step)
    if trace_path is not None:
        Timeline(run_metadata.step_stats).save(trace_path, show_memory=show_memory)
    return results, run_metadata


__all__ = ["Timeline", "AllocationMaximum", "StepStatsAnalysis", "parse_op_label", "run_traced"]
