"""The dataflow interpreter: runs a plan with dead tensors (Switch/Merge) and loop frames.

A tagged node is (node, frame, iteration). A node is ready when all its inputs (data and
control) have arrived in its (frame, iteration); it is dead when any input is dead, and a dead
node produces dead outputs without running its kernel. Merge is ready on its first live data
input, or dead once every data input is dead. Enter moves values into a child frame (constant
Enters are replayed into every iteration), NextIteration into the next iteration (a dead one
stops), Exit back to the parent frame; an Exit that never produced a live value in a frame
sends a dead value to the parent when the frame finishes.
"""

from __future__ import annotations

import time
from collections import deque

import numpy as np

from tensorweave.runtime.plan import Plan
from tensorweave.runtime.resources import deref
from tensorweave.runtime.step import DEAD, StepContext

_MERGE = frozenset(["Merge", "RefMerge"])
_ENTER = frozenset(["Enter", "RefEnter"])
_EXIT = frozenset(["Exit", "RefExit"])
_NEXT = frozenset(["NextIteration", "RefNextIteration"])


class _Iteration:
    __slots__ = ("inputs", "pending", "dead", "merge_done")
    # NOTE: for a Merge, `pending` counts the dead inputs seen so far

    def __init__(self):
        self.inputs: dict[int, list] = {}
        self.pending: dict[int, int] = {}
        self.dead: set[int] = set()
        self.merge_done: set[int] = set()


class _Frame:
    __slots__ = ("name", "parent", "parent_iter", "iters", "outstanding", "pending_enters",
                 "live_exits", "invariants", "children")

    def __init__(self, name, parent, parent_iter, pending_enters):
        self.name = name
        self.parent = parent
        self.parent_iter = parent_iter
        self.iters: dict[int, _Iteration] = {0: _Iteration()}
        self.outstanding = 0
        self.pending_enters = pending_enters
        self.live_exits: set[int] = set()
        self.invariants: list = []       # (dst, slot, value) replayed into new iterations
        self.children: dict = {}


class DataflowRunner:
    """Runs a plan with control flow. Each `run` is independent (no shared mutable state)."""

    def __init__(self, plan: Plan, copies: dict[int, bool]):
        self.plan = plan
        self.copies = copies
        self.items = plan.by_index
        self.n_inputs = {it.index: len(it.inputs) for it in plan.items}
        self.pending0 = {it.index: len(it.inputs) + len(it.control_inputs) for it in plan.items}
        self.roots = [it.index for it in plan.items if self.pending0[it.index] == 0]
        self.frame_of, self.exits_of = _static_frames(plan)
        self.back_inputs = {
            it.index: sum(1 for j, _ in it.inputs if plan.by_index[j].op in _NEXT)
            for it in plan.items if it.op in _MERGE
        }
        self.enters_of: dict[str, int] = {}
        for it in plan.items:
            if it.op in _ENTER:
                name = it.attrs["frame_name"]
                self.enters_of[name] = self.enters_of.get(name, 0) + 1

    def run(self, args: list, ctx: StepContext) -> list:
        state = _Run(self, args, ctx)
        state.execute()
        return [state.retvals[i] for i in range(len(self.plan.retvals))]


class _Run:
    def __init__(self, runner: DataflowRunner, args, ctx):
        self.r = runner
        self.args = args
        self.ctx = ctx
        self.root = _Frame("", None, 0, 0)
        self.ready: deque = deque()
        self.retvals: dict[int, object] = {}

    def execute(self) -> None:
        for i in self.r.roots:
            self._schedule(i, self.root, 0, False)
        while self.ready:
            i, frame, it, dead = self.ready.popleft()
            item = self.r.items[i]
            try:
                outputs = self._compute(item, frame, it, dead)
            except Exception as e:  # noqa: BLE001 - every kernel failure becomes an OpError
                from tensorweave.runtime.executor import to_op_error

                raise to_op_error(e, item.node) from None
            self._propagate(item, frame, it, outputs)
            frame.outstanding -= 1
            self._maybe_finish(frame)

    # -- running one node -------------------------------------------------------------------
    def _compute(self, item, frame, it, dead):
        n_out = len(item.output_dtypes)
        state = frame.iters[it]
        inputs = state.inputs.pop(item.index, None) or [DEAD] * len(item.inputs)
        if item.op in _MERGE:
            return self._merge(inputs, dead, n_out)
        if dead:
            return [DEAD] * n_out
        if item.op == "_Arg":
            return [self.args[item.attrs["index"]]]
        vals = [deref(v) if d else v for v, d in zip(inputs, item.deref)]
        if item.op == "_Retval":
            v = vals[0]
            self.retvals[item.attrs["index"]] = np.array(v) if self.r.copies.get(item.index) \
                else v
            return []
        self.ctx.frame_id, self.ctx.iter_id = id(frame), it
        t0 = time.perf_counter() if self.ctx.stats is not None else 0.0
        out = item.fn(self.ctx, *vals) if item.context else item.fn(*vals)
        outs = [] if n_out == 0 else [out] if n_out == 1 else list(out)
        if self.ctx.stats is not None:
            self.ctx.stats.record(item.index, t0, time.perf_counter(), outs)
        return outs

    @staticmethod
    def _merge(inputs, dead, n_out):
        for k, v in enumerate(inputs):
            if v is not DEAD:
                return [v, np.int32(k)][:n_out]
        return [DEAD] * n_out

    # -- moving outputs along edges ---------------------------------------------------------
    def _propagate(self, item, frame, it, outputs) -> None:
        op = item.op
        if op in _ENTER:
            self._enter(item, frame, it, outputs[0])
            return
        if op in _EXIT:
            if outputs[0] is DEAD:
                return  # parked: sent as dead only if no live exit happens in this frame
            frame.live_exits.add(item.index)
            frame, it = frame.parent, frame.parent_iter
        elif op in _NEXT:
            if outputs[0] is DEAD:
                return
            it = it + 1
            self._new_iteration(frame, it)
        self._send(item, frame, it, outputs)

    def _send(self, item, frame, it, outputs, dead_all=False) -> None:
        node_dead = dead_all or (bool(outputs) and all(o is DEAD for o in outputs))
        for dst, slot in item.consumers:
            if slot < 0:
                self._deliver(dst, -1, DEAD if node_dead else None, frame, it)
            else:
                src_slot = self.r.items[dst].inputs[slot][1]
                value = DEAD if dead_all else outputs[src_slot]
                self._deliver(dst, slot, value, frame, it)

    def _enter(self, item, frame, it, value) -> None:
        name = item.attrs["frame_name"]
        key = (name, it)
        child = frame.children.get(key)
        if child is None:
            child = frame.children[key] = _Frame(name, frame, it, self.r.enters_of[name])
            frame.outstanding += 1  # a live child frame keeps its parent open
        child.pending_enters -= 1
        if item.attrs.get("is_constant") and value is not DEAD:
            for dst, slot in item.consumers:
                child.invariants.append((dst, slot, value))
            for k in list(child.iters):
                if k > 0:
                    for dst, slot in item.consumers:
                        self._deliver(dst, slot, value, child, k)
        self._send(item, child, 0, [value])
        self._maybe_finish(child)

    def _new_iteration(self, frame, it) -> None:
        if it in frame.iters:
            return
        frame.iters[it] = _Iteration()
        for dst, slot, value in frame.invariants:
            self._deliver(dst, slot, value, frame, it)

    def _deliver(self, dst, slot, value, frame, it) -> None:
        state = frame.iters[it]
        item = self.r.items[dst]
        if item.op in _MERGE:
            self._deliver_merge(item, slot, value, frame, it, state)
            return
        if slot >= 0:
            state.inputs.setdefault(dst, [DEAD] * len(item.inputs))[slot] = value
        if value is DEAD:
            state.dead.add(dst)
        pending = state.pending.get(dst, self.r.pending0[dst]) - 1
        if pending:
            state.pending[dst] = pending
            return
        state.pending.pop(dst, None)
        self._schedule(dst, frame, it, dst in state.dead)
        state.dead.discard(dst)

    def _deliver_merge(self, item, slot, value, frame, it, state) -> None:
        """Merge fires on its first live input, or dead once every input it can get is dead.

        NOTE: control edges do not gate a Merge here; in a loop's first iteration the
        NextIteration inputs never arrive, so they are not waited for.
        """
        dst = item.index
        if slot < 0 or dst in state.merge_done:
            return
        state.inputs.setdefault(dst, [DEAD] * len(item.inputs))[slot] = value
        if value is not DEAD:
            state.merge_done.add(dst)
            self._schedule(dst, frame, it, False)
            return
        dead = state.pending.get(dst, 0) + 1
        state.pending[dst] = dead
        need = len(item.inputs) - (self.r.back_inputs.get(dst, 0) if it == 0 else 0)
        if dead >= need:
            state.merge_done.add(dst)
            self._schedule(dst, frame, it, True)

    def _schedule(self, i, frame, it, dead) -> None:
        frame.outstanding += 1
        self.ready.append((i, frame, it, dead))

    # -- frames -----------------------------------------------------------------------------
    def _maybe_finish(self, frame) -> None:
        if frame.parent is None or frame.outstanding or frame.pending_enters:
            return
        parent, pit = frame.parent, frame.parent_iter
        del parent.children[(frame.name, pit)]
        for i in self.r.exits_of.get(frame.name, ()):
            if i not in frame.live_exits:
                self._send(self.r.items[i], parent, pit, [DEAD], dead_all=True)
        parent.outstanding -= 1
        self._maybe_finish(parent)


def _static_frames(plan: Plan):
    """Each node's frame name (by flow from the roots) and the Exit nodes of each frame."""
    frame_of: dict[int, str] = {}
    parent_of: dict[str, str] = {}
    queue = deque((it.index, "") for it in plan.items if not it.inputs and
                  not it.control_inputs)
    while queue:
        i, f = queue.popleft()
        if i in frame_of:
            continue
        frame_of[i] = f
        item = plan.by_index[i]
        out_f = f
        if item.op in _ENTER:
            out_f = item.attrs["frame_name"]
            parent_of.setdefault(out_f, f)
        elif item.op in _EXIT:
            out_f = parent_of.get(f, "")
        for dst, _ in item.consumers:
            if dst not in frame_of:
                queue.append((dst, out_f))
    exits: dict[str, list[int]] = {}
    for it in plan.items:
        if it.op in _EXIT:
            exits.setdefault(frame_of.get(it.index, ""), []).append(it.index)
    return frame_of, exits

