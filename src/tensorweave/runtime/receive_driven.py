"""Receive-driven straight-line code: a partition without control flow that receives several
tensors runs each part of its plan as soon as the receives that part needs have arrived, in
whatever order they arrive (TF's executor does the same by running whatever is ready).

Each node's *receive set* is the set of receives (`_Recv`, `_HostRecv`) it depends on through
data and control edges, its own included. Nodes with the same set form a *segment*, runnable
once every receive of its set has arrived. A step runs the segment with no receives first
(all the partition can do before it waits, its sends among them), then waits for whichever
receive arrives next (`rendezvous.wait_any`: a `RemoteRendezvous` starts pulling every one of
them from other tasks then, one request per task) and runs each segment that became
runnable, smaller receive sets first (a segment only ever reads segments whose set is a
subset of its own). One generated function holds every segment, so values stay locals.

NOTE: fixed-order straight-line code deadlocked here: a ps partition blocked on its first
receive while its peer waited for a send that only needed the second.
"""

from __future__ import annotations

import time

import numpy as np

from tensorweave.runtime import executor as ex
from tensorweave.runtime.plan import RECV_OPS, Plan
from tensorweave.runtime.resources import deref


def receive_sets(plan: Plan) -> dict[int, int]:
    """Each node's receive set as a bit mask over the plan's receives (in plan order)."""
    bit: dict[int, int] = {}
    for item in plan.items:
        if item.op in RECV_OPS:
            bit[item.index] = 1 << len(bit)
    sets: dict[int, int] = {}
    for item in plan.items:
        mask = bit.get(item.index, 0)
        for j, _ in item.inputs:
            mask |= sets[j]
        for j in item.control_inputs:
            mask |= sets[j]
        sets[item.index] = mask
    return sets


class _Schedule:
    """The segments of a plan (their receive sets, runnable order) and its receives' kernels.
    `start(ctx)` gives one step's `_Waiter`."""

    def __init__(self, plan: Plan, masks: list[int], sets: dict[int, int]):
        recvs = [it for it in plan.items if it.op in RECV_OPS]
        self.recvs = [it.fn for it in recvs]
        self.masks = masks  # segment k's receive set; segment 0 has none
        # the receives each receive waits for (control edges: TF's recv of a ps variable
        # under ^update must not be pulled, reading the variable there, before the update)
        self.deps = [sets[it.index] & ~(1 << r) for r, it in enumerate(recvs)]

    def start(self, ctx) -> _Waiter:
        return _Waiter(self, ctx)


class _Waiter:
    """One step's progress through the segments: `next()` is the next runnable segment,
    waiting for a receive when none is, or -1 once every segment ran."""

    __slots__ = ("_masks", "_deps", "_left", "_keys", "_missing", "_arrived", "_ctx")

    def __init__(self, schedule: _Schedule, ctx):
        self._masks = schedule.masks
        self._deps = schedule.deps
        self._left = list(range(1, len(schedule.masks)))  # not yet run, in runnable order
        self._keys = [fn.key_for(ctx) for fn in schedule.recvs]
        self._missing = list(range(len(self._keys)))  # receives not yet arrived
        self._arrived = 0
        self._ctx = ctx

    def next(self) -> int:
        left, masks = self._left, self._masks
        while left:
            arrived = self._arrived
            for pos, seg in enumerate(left):
                if masks[seg] & ~arrived == 0:
                    del left[pos]
                    return seg
            # NOTE: only receives whose own inputs ran: every segment of arrived receives
            # has run when none is runnable
            deps, ctx = self._deps, self._ctx
            ready = [r for r in self._missing if deps[r] & ~arrived == 0]
            k = ctx.rendezvous.wait_any([self._keys[r] for r in ready], ctx.deadline)
            self._missing.remove(ready[k])
            self._arrived |= 1 << ready[k]
        return -1


def compile_receive_driven(plan: Plan, traced: bool) -> ex._Compiled:
    """Generates `def step(args, ctx)`: segment 0, then `while` the step's waiter names a
    runnable segment, that segment's lines (one branch each)."""
    sets = receive_sets(plan)
    order = {it.index: k for k, it in enumerate(plan.items)}
    first: dict[int, int] = {}
    for item in plan.items:
        first.setdefault(sets[item.index], order[item.index])
    # NOTE: a subset has fewer bits, so fewer bits first is an order in which every segment
    # runs after those it reads
    masks = sorted(first, key=lambda m: (m.bit_count(), first[m]))
    if masks[0] != 0:
        masks.insert(0, 0)
    seg_of = {m: k for k, m in enumerate(masks)}
    filename = f"<tensorweave plan {next(ex._plan_ids)}>"
    ns: dict = {"_rd": deref, "_copy": np.array, "_now": time.perf_counter,
                "_schedule": _Schedule(plan, masks, sets)}
    copies = ex._copy_flags(plan)
    rets: dict = {}
    bodies: list[list] = [[] for _ in masks]
    for item in plan.items:
        code = ex._node_line(item, ns, copies, rets)
        if code is not None:
            bodies[seg_of[sets[item.index]]].append((item, ex._traced_line(item, code)
                                                     if traced else code))
    lines = ["def step(args, ctx):"]
    line_nodes = {}

    def emit(indent: str, body) -> None:
        for item, code in body:
            lines.append(indent + code)
            if item is not None:
                line_nodes[len(lines)] = item.node

    emit("    ", bodies[0])
    lines.append("    _w = _schedule.start(ctx)")
    lines.append("    while (_s := _w.next()) >= 0:")
    lines.append("        pass")  # NOTE: the loop body when the plan has no receive at all
    for k in range(1, len(masks)):
        lines.append(f"        {'if' if k == 1 else 'elif'} _s == {k}:")
        emit("            ", bodies[k] or [(None, "pass")])
    lines.append("    return [" + ", ".join(rets[i] for _, i in plan.retvals) + "]")
    exec(compile("\n".join(lines) + "\n", filename, "exec"), ns)  # noqa: S102 - our own code
    return ex._Compiled(ns["step"], line_nodes, filename)


__all__ = ["compile_receive_driven", "receive_sets"]
