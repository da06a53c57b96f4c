"""The bytes that crossed the network in a step, read from its `RunMetadata.step_stats`.

A traced step (`RunOptions(trace_level=FULL_TRACE)`) records each tensor one task pulled
from another as a `RecvTensor` node of the receiving device, as TensorFlow's
WorkerCacheLogger does: one output whose `requested_bytes` is the payload, and the label
`[<bytes>] [<rate>] <tensor> from <src device> to <dst device>`. The same reading works on
RunMetadata written by TensorFlow.

    md = tf.RunMetadata()
    sess.run(train_op, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=md)
    network_bytes(md)   # {("/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"): 33024, ...}
"""

from __future__ import annotations

import re
from typing import NamedTuple

_ENDS = re.compile(r" from (\S+) to (\S+)$")
_TASK = re.compile(r"^(/job:[^/]+(?:/replica:\d+)?/task:\d+)")


class Transfer(NamedTuple):
    """One tensor pulled across the network in a step."""

    tensor: str
    src: str
    dst: str
    bytes: int
    micros: int


def network_transfers(run_metadata) -> list[Transfer]:
    """Every `RecvTensor` record of `run_metadata` (a RunMetadata or its step_stats)."""
    stats = getattr(run_metadata, "step_stats", run_metadata)
    out = []
    for dev in stats.dev_stats:
        for ns in dev.node_stats:
            m = _ENDS.search(ns.timeline_label)
            if ns.node_name != "RecvTensor" or m is None:
                continue
            size = ns.output[0].tensor_description.allocation_description.requested_bytes \
                if ns.output else 0
            tensor = ns.timeline_label[:m.start()].rsplit("] ", 1)[-1]
            out.append(Transfer(tensor, m.group(1), m.group(2), int(size),
                                int(ns.all_end_rel_micros)))
    return out


def network_bytes(run_metadata, by: str = "task") -> dict[tuple[str, str], int]:
    """Bytes pulled per (source, destination), `by` "task" or "device".

    Raises: ValueError for another `by`.
    """
    if by not in ("task", "device"):
        raise ValueError(f"by must be 'task' or 'device', got {by!r}")
    totals: dict[tuple[str, str], int] = {}
    for t in network_transfers(run_metadata):
        pair = (t.src, t.dst) if by == "device" else (_task(t.src), _task(t.dst))
        totals[pair] = totals.get(pair, 0) + t.bytes
    return totals


def _task(device: str) -> str:
    m = _TASK.match(device)
    return m.group(1) if m else device


__all__ = ["Transfer", "network_bytes", "network_transfers"]
