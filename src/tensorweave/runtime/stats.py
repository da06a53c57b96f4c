"""Step statistics collected while a step runs (RunOptions.trace_level > NO_TRACE).

Plain data shaped like TF's StepStats: one entry per device, one record per node with start
and end times (microseconds), output shapes and bytes, and the thread that ran it.
"""

from __future__ import annotations

import threading
import time

import numpy as np


class StatsCollector:
    """Records node executions of one partition for one step. Thread-safe."""

    def __init__(self, device: str, plan):
        self.device = device
        self._plan = plan
        self._records: list = []
        self._lock = threading.Lock()
        self._t0_wall = time.time()
        self._t0_perf = time.perf_counter()

    def record(self, index: int, start: float, end: float, outputs) -> None:
        rec = (index, start, end, [_describe(o) for o in outputs], threading.get_ident())
        with self._lock:
            self._records.append(rec)

    def to_dict(self, transfers=()) -> dict:
        """`{"device": name, "node_stats": [...]}` with TF's NodeExecStats field names; each
        of `transfers` (a rendezvous's `transfers(device)`) adds a `RecvTensor` record."""
        base = self._t0_wall * 1e6 - self._t0_perf * 1e6
        nodes = []
        for index, start, end, outs, tid in self._records:
            item = self._plan.by_index[index]
            start_us = int(base + start * 1e6)
            dur = max(int((end - start) * 1e6), 0)
            nodes.append({
                "node_name": item.name,
                "op": item.op,
                "all_start_micros": start_us,
                "op_start_rel_micros": 0,
                "op_end_rel_micros": dur,
                "all_end_rel_micros": dur,
                "output": outs,
                "timeline_label": f"{item.name} = {item.op}("
                                  f"{', '.join(_input_names(item, self._plan))})",
                "thread_id": tid & 0x7FFFFFFF,
            })
        nodes += [transfer_stats(t) for t in transfers]
        return {"device": self.device, "node_stats": nodes}


def transfer_stats(t: dict) -> dict:
    """A tensor pulled from another task as TF's WorkerCacheLogger records it: node
    `RecvTensor`, one output whose requested bytes are the payload, and the label
    `[<bytes>B] [<rate>Mb/s] <tensor> from <src device> to <dst device>`."""
    start_us, end_us = int(t["start"] * 1e6), int(t["end"] * 1e6)
    dur = max(end_us - start_us, 0)
    return {"node_name": "RecvTensor", "op": "RecvTensor", "all_start_micros": start_us,
            "op_start_rel_micros": 0, "op_end_rel_micros": dur, "all_end_rel_micros": dur,
            "output": [{"dtype": None, "shape": [], "bytes": t["bytes"]}],
            "timeline_label": f"{_bytes_label(t['bytes'])} {_rate_label(t['bytes'], dur)} "
                              f"{t['tensor']} from {t['src']} to {t['dst']}",
            "thread_id": 0}


def _bytes_label(n: int) -> str:
    return f"[{n / 1048576.0:.1f}MB]" if n >= 0.1 * 1048576.0 else f"[{n}B]"


def _rate_label(n: int, dur_us: int) -> str:
    mbps = 8.0 * n / max(dur_us, 1)
    return f"[{mbps / 1000.0:.1f}Gb/s]" if mbps >= 1000.0 else f"[{mbps:f}Mb/s]"


def _input_names(item, plan) -> list[str]:
    return [plan.by_index[j].name + (f":{s}" if s else "") for j, s in item.inputs]


def _describe(value) -> dict:
    if isinstance(value, (np.ndarray, np.generic)):
        return {"dtype": value.dtype.str, "shape": list(np.shape(value)),
                "bytes": int(value.nbytes)}
    return {"dtype": type(value).__name__, "shape": [], "bytes": 0}
