"""The dataflow interpreter: runs a plan with dead tensors (Switch/Merge) and loop frames.

It follows TensorFlow's executor (`executor.cc`, `propagator_state.cc`), single-threaded:

- A *tagged node* is (node, iteration state, is_dead). Every node statically belongs to one
  *frame* (computed from the roots: an Enter's consumers are in its `frame_name` frame, an
  Exit's consumers in the parent frame); each running (frame, iteration) has its own pending
  counts, dead counts and input slots.
- A node is ready when all its inputs (data and control) have arrived in its iteration; it is
  dead when any of them is dead. A dead node produces dead outputs without running its kernel
  (transfer nodes `_Send`/`_Recv` still run: they carry deadness across partitions).
- `Merge` waits for all its control inputs and then fires on its first live data input, or
  dead once every data input is dead, or at once when fed by a dead `Enter` (a loop on an
  untaken branch of a cond).
- `Enter` makes a value available in a child frame (created on first use, one per parent
  iteration); constant Enters are loop invariants, replayed into every iteration.
  `NextIteration` moves a live value to the next iteration, starting it (at most
  `parallel_iterations` iterations are in flight; further ones are deferred); a dead one stops.
  A live `Exit` sends its value to the parent frame; Exits that are dead in the last iteration
  send dead values to the parent when the frame finishes (a whole loop inside an untaken cond).
- An iteration is deleted once it has nothing outstanding and its predecessor is gone; a frame
  finishes when all its Enters have arrived and all its iterations are deleted.

Fetching a dead tensor raises InvalidArgumentError("Retval[i] does not have value ...").
"""

from __future__ import annotations

import hashlib
import time
from collections import deque

import numpy as np

from tensorweave import errors
from tensorweave.runtime.plan import RECV_OPS, Plan
from tensorweave.runtime.resources import deref
from tensorweave.runtime.step import DEAD, StepContext

_NORMAL, _MERGE, _ENTER, _EXIT, _NEXT, _ARG, _RETVAL, _TRIGGER, _TRANSFER = range(9)
_KIND = {
    "Merge": _MERGE, "RefMerge": _MERGE, "Enter": _ENTER, "RefEnter": _ENTER,
    "Exit": _EXIT, "RefExit": _EXIT, "NextIteration": _NEXT, "RefNextIteration": _NEXT,
    "_Arg": _ARG, "_Retval": _RETVAL, "ControlTrigger": _TRIGGER,
    "_Send": _TRANSFER, "_Recv": _TRANSFER, "_HostSend": _TRANSFER, "_HostRecv": _TRANSFER,
}
_CHECK_EVERY = 1023          # call ctx.check() (deadline, cancellation) every 1024 nodes


class _FrameInfo:
    """Static layout of one frame: a pending slot per node and its input slots."""

    __slots__ = ("name", "parent", "n_nodes", "n_inputs", "pending0", "n_enters")

    def __init__(self, name: str, parent: str | None):
        self.name = name
        self.parent = parent
        self.n_nodes = 0
        self.n_inputs = 0
        self.pending0: list[int] = []
        self.n_enters = 0


class DataflowRunner:
    """Runs a plan with control flow. Built once; each `run` is an independent step."""

    def __init__(self, plan: Plan, copies: dict[int, bool]):
        self.plan = plan
        self.copies = copies
        frame_of, parent_of = static_frames(plan)
        _check_feeds_and_fetches(plan, frame_of)
        self.infos = {name: _FrameInfo(name, parent) for name, parent in parent_of.items()}
        n = max((it.index for it in plan.items), default=-1) + 1
        self.kind = [_NORMAL] * n
        self.fn = [None] * n
        self.ctx_flag = [False] * n
        self.pid = [0] * n
        self.start = [0] * n
        self.nin = [0] * n
        self.derefs: list[tuple] = [()] * n
        self.nout = [0] * n
        self.edges: list[tuple] = [()] * n
        self.attr = [None] * n       # Enter: (frame, is_constant, parallel); _Arg/_Retval: index
        for item in plan.items:
            self._layout(item, self.infos[frame_of[item.index]])
        for item in plan.items:
            self.edges[item.index] = self._edges(item)
        self.roots = [it.index for it in plan.items if not it.inputs and not it.control_inputs]
        self.is_recv = [False] * n
        for item in plan.items:
            self.is_recv[item.index] = item.op in RECV_OPS
        self.value_index = [np.int32(k) for k in range(max(self.nin, default=0) + 1)]

    def _layout(self, item, info: _FrameInfo) -> None:
        i = item.index
        k = _KIND.get(item.op, _NORMAL)
        self.kind[i] = k
        self.fn[i] = item.fn
        self.ctx_flag[i] = item.context
        self.pid[i] = info.n_nodes
        self.start[i] = info.n_inputs
        self.nin[i] = len(item.inputs)
        self.derefs[i] = tuple(q for q, d in enumerate(item.deref) if d)
        self.nout[i] = len(item.output_dtypes)
        n_ctl = len(item.control_inputs)
        # NOTE: a Merge's pending count is 2 per control input plus a low bit that is
        # cleared by the first live data input (TF's encoding).
        info.pending0.append(2 * n_ctl + 1 if k == _MERGE else len(item.inputs) + n_ctl)
        info.n_nodes += 1
        info.n_inputs += len(item.inputs)
        if k == _ENTER:
            a = item.attrs
            self.attr[i] = (a["frame_name"], bool(a.get("is_constant")),
                            max(int(a.get("parallel_iterations", 10)), 1))
            self.infos[a["frame_name"]].n_enters += 1
        elif k in (_ARG, _RETVAL):
            self.attr[i] = item.attrs["index"]

    def _edges(self, item) -> tuple:
        """(dst, dst pending slot, dst input slot or -1 for control, src output slot, kind)."""
        out = []
        for dst, slot in item.consumers:
            dk = self.kind[dst]
            merge = 0 if dk != _MERGE else (2 if self.kind[item.index] == _ENTER else 1)
            if slot < 0:
                out.append((dst, self.pid[dst], -1, -1, merge))
            else:
                src_slot = self.plan.by_index[dst].inputs[slot][1]
                out.append((dst, self.pid[dst], self.start[dst] + slot, src_slot, merge))
        return tuple(out)

    def run(self, args: list, ctx: StepContext) -> list:
        """Runs one step; returns the retvals in index order.

        Raises:
          errors.OpError: the first failing node (annotated), or InvalidArgumentError when a
            fetched tensor is dead.
        """
        step = _Step(self, args, ctx)
        with np.errstate(all="ignore"):  # NOTE: as TF: inf/nan results, no warnings
            step.execute()
        return step.results()


class _Iter:
    """The state of one iteration of one frame instance."""

    __slots__ = ("frame", "k", "pending", "dead", "inputs", "outstanding", "nframes",
                 "children")

    def __init__(self, frame: _Frame, k: int):
        info = frame.info
        self.frame = frame
        self.k = k
        self.pending = info.pending0[:]
        self.dead = [0] * info.n_nodes
        self.inputs = [None] * info.n_inputs
        self.outstanding = 0          # tagged nodes scheduled and not yet completed
        self.nframes = 0              # child frames started in this iteration, not finished
        self.children: dict | None = None


class _Frame:
    """One instance of a frame: a loop started in one iteration of its parent frame."""

    __slots__ = ("info", "key", "fid", "parent_iter", "iters", "count", "pending_inputs",
                 "n_iters", "inv", "dead_exits", "next_roots", "max_par")

    def __init__(self, info: _FrameInfo, parent_iter: _Iter | None, max_par: int):
        self.info = info
        self.parent_iter = parent_iter
        if parent_iter is None:
            self.key, self.fid = "", 0
        else:
            pf = parent_iter.frame
            self.key = f"{pf.key};{parent_iter.k};{info.name}"
            # NOTE: a stable id (same in every process) so rendezvous keys of _Send/_Recv in
            # loops match across partitions, as TF's Hash64(frame name).
            self.fid = int.from_bytes(
                hashlib.blake2b(self.key.encode(), digest_size=8).digest(), "little")
        self.iters = {0: _Iter(self, 0)}
        self.count = 0                # the highest iteration started
        self.pending_inputs = info.n_enters
        self.n_iters = 1              # iterations not yet deleted
        self.inv: list = []           # (enter node, value) loop invariants
        self.dead_exits: list = []    # exits dead in the highest iteration
        self.next_roots: list = []    # deferred NextIteration outputs (parallel limit)
        self.max_par = max_par


class _Step:
    """One run of a DataflowRunner."""

    def __init__(self, runner: DataflowRunner, args, ctx: StepContext):
        self.r = runner
        self.args = args
        self.ctx = ctx
        self.ready: deque = deque()
        self.root = _Frame(runner.infos[""], None, 1)
        self.values: dict[int, object] = {}
        self.dead_retvals: set[int] = set()
        self._current = -1
        self.deferred: list = []      # ready receives, run when nothing else is ready

    def _arrived_recv(self):
        """The deferred receive whose tensor arrived first (blocks until one does)."""
        if len(self.deferred) == 1:
            return self.deferred.pop()
        self._current = self.deferred[0][0]   # NOTE: a timeout names a receive waited for
        keys = []
        for i, its, _ in self.deferred:
            self.ctx.frame_id, self.ctx.iter_id = its.frame.fid, its.k
            keys.append(self.r.fn[i].key_for(self.ctx))
        k = self.ctx.rendezvous.wait_any(keys, self.ctx.deadline)
        return self.deferred.pop(k)

    # -- the loop -----------------------------------------------------------------------------
    def execute(self) -> None:
        it0 = self.root.iters[0]
        for i in self.r.roots:
            it0.outstanding += 1
            self.ready.append((i, it0, False))
        try:
            self._loop()
        except Exception as e:  # noqa: BLE001 - every kernel failure becomes an OpError
            from tensorweave.runtime.executor import to_op_error

            if self._current < 0:
                raise
            raise to_op_error(e, self.r.plan.by_index[self._current].node) from None

    def _loop(self) -> None:
        # NOTE: the hot path of every loop iteration: locals only, one branch per node kind.
        r = self.r
        kind, fn, ctx_flag, start, nin = r.kind, r.fn, r.ctx_flag, r.start, r.nin
        derefs, nout = r.derefs, r.nout
        ready, popleft, activate = self.ready, self.ready.popleft, self._activate
        ctx = self.ctx
        stats = ctx.stats
        n = 0
        deferred = self.deferred
        is_recv = r.is_recv
        while ready or deferred:
            if not ready:
                i, its, dead = self._arrived_recv()
            else:
                i, its, dead = popleft()
                if is_recv[i]:
                    # NOTE: receive only when nothing else can run, and then whichever tensor
                    # arrives first: a receive run inline could wait on a peer that waits for
                    # a send this partition has not made yet
                    deferred.append((i, its, dead))
                    continue
            self._current = i
            k = kind[i]
            if k == _NORMAL:
                if dead:
                    activate(i, None, True, its)
                else:
                    s = start[i]
                    vals = its.inputs[s:s + nin[i]]
                    for q in derefs[i]:
                        vals[q] = deref(vals[q])
                    if ctx_flag[i]:
                        ctx.frame_id, ctx.iter_id = its.frame.fid, its.k
                        if stats is None:
                            out = fn[i](ctx, *vals)
                        else:
                            out = self._traced(i, vals, True)
                    elif stats is None:
                        out = fn[i](*vals)
                    else:
                        out = self._traced(i, vals, False)
                    activate(i, (out,) if nout[i] == 1 else out, False, its)
            elif k == _MERGE:
                self._merge(i, its, dead)
            else:
                self._special(k, i, its, dead)
            its.outstanding -= 1
            if not its.outstanding and its.frame.parent_iter is not None:
                self._cleanup(its.frame, its.k)
            n += 1
            if not n & _CHECK_EVERY:
                ctx.check()

    def _traced(self, i, vals, with_ctx):
        t0 = time.perf_counter()
        f = self.r.fn[i]
        out = f(self.ctx, *vals) if with_ctx else f(*vals)
        n = self.r.nout[i]
        outs = () if n == 0 else (out,) if n == 1 else tuple(out)
        self.ctx.stats.record(i, t0, time.perf_counter(), outs)
        return out

    # -- propagation --------------------------------------------------------------------------
    def _activate(self, i, outs, node_dead, its) -> None:
        """Delivers node i's outputs (`outs`, or all dead) along its edges in iteration `its`."""
        pending, deadc, inputs, ready = its.pending, its.dead, its.inputs, self.ready
        for dst, pid, loc, slot, merge in self.r.edges[i]:
            if not merge:
                if loc >= 0:
                    v = DEAD if node_dead else outs[slot]
                    inputs[loc] = v
                    if v is DEAD:
                        deadc[pid] += 1
                elif node_dead:
                    deadc[pid] += 1
                p = pending[pid] - 1
                pending[pid] = p
                if not p:
                    its.outstanding += 1
                    ready.append((dst, its, deadc[pid] > 0))
            elif loc < 0:
                p = pending[pid] - 2
                pending[pid] = p
                d = deadc[pid] == self.r.nin[dst]
                if not p or (p == 1 and d):
                    its.outstanding += 1
                    ready.append((dst, its, d))
            else:
                v = DEAD if node_dead else outs[slot]
                p = pending[pid]
                if v is not DEAD:
                    if p & 1:
                        pending[pid] = p - 1
                        inputs[loc] = v
                        if p == 1:
                            its.outstanding += 1
                            ready.append((dst, its, False))
                else:
                    deadc[pid] += 1
                    # NOTE: a dead Enter makes its Merge dead at once (the loop is on an
                    # untaken branch); its NextIteration input will never arrive.
                    d = merge == 2 or deadc[pid] == self.r.nin[dst]
                    if p == 1 and d:
                        its.outstanding += 1
                        ready.append((dst, its, True))

    def _merge(self, i, its, dead) -> None:
        if dead:
            self._activate(i, None, True, its)
            return
        s = self.r.start[i]
        inputs = its.inputs
        for q in range(self.r.nin[i]):
            v = inputs[s + q]
            if v is not None:
                if q in self.r.derefs[i]:
                    v = deref(v)
                self._activate(i, (v, self.r.value_index[q]), False, its)
                return
        raise errors.InternalError(None, None, "Merge scheduled without a live input")

    def _input(self, i, its, dead):
        if dead:
            return DEAD
        v = its.inputs[self.r.start[i]]
        return deref(v) if self.r.derefs[i] else v

    def _special(self, k, i, its, dead) -> None:
        if k == _ENTER:
            self._enter(i, its, self._input(i, its, dead))
        elif k == _EXIT:
            self._exit(i, its, self._input(i, its, dead))
        elif k == _NEXT:
            if not dead:
                self._next(i, its, self._input(i, its, False))
        elif k == _ARG:
            self._activate(i, (self.args[self.r.attr[i]],), False, its)
        elif k == _RETVAL:
            self._retval(i, self._input(i, its, dead))
        elif k == _TRIGGER:
            self._activate(i, None, False, its)   # a ControlTrigger is never dead
        else:
            self._transfer(i, its)

    def _transfer(self, i, its) -> None:
        """_Send/_Recv run even when dead: they pass deadness (DEAD inputs) along. A dead
        transfer (a dead input sent, a dead tensor received) is a dead node: its control
        edges, too, carry deadness (a pop in a gradient loop's last iteration waits on one)."""
        r = self.r
        s = r.start[i]
        vals = its.inputs[s:s + r.nin[i]]
        for q in r.derefs[i]:
            if vals[q] is not DEAD:
                vals[q] = deref(vals[q])
        if r.ctx_flag[i]:
            self.ctx.frame_id, self.ctx.iter_id = its.frame.fid, its.k
            out = r.fn[i](self.ctx, *vals)
        else:
            out = r.fn[i](*vals)
        if r.nout[i] == 1:
            self._activate(i, (out,), out is DEAD, its)
        else:
            self._activate(i, out, any(v is DEAD for v in vals), its)

    def _retval(self, i, v) -> None:
        idx = self.r.attr[i]
        if v is DEAD:
            self.dead_retvals.add(i)
        else:
            self.values[idx] = np.array(v) if self.r.copies.get(i) else v

    # -- frames -------------------------------------------------------------------------------
    def _enter(self, i, its, v) -> None:
        name, is_constant, max_par = self.r.attr[i]
        children = its.children
        if children is None:
            children = its.children = {}
        child = children.get(name)
        if child is None:
            child = children[name] = _Frame(self.r.infos[name], its, max_par)
            its.nframes += 1
        dead = v is DEAD
        if is_constant:
            child.inv.append((i, v))
            for it in list(child.iters.values()):
                self._activate(i, (v,), dead, it)
        else:
            self._activate(i, (v,), dead, child.iters[0])
        child.pending_inputs -= 1
        if not child.pending_inputs:
            self._cleanup(child, 0)

    def _exit(self, i, its, v) -> None:
        frame = its.frame
        if v is DEAD:
            if its.k == frame.count:
                frame.dead_exits.append(i)
        else:
            self._activate(i, (v,), False, frame.parent_iter)

    def _next(self, i, its, v) -> None:
        frame = its.frame
        if its.k == frame.count:
            if frame.n_iters >= frame.max_par:
                frame.next_roots.append((i, v))
                return
            self._new_iteration(frame)
        self._activate(i, (v,), False, frame.iters[its.k + 1])

    def _new_iteration(self, frame: _Frame) -> None:
        frame.count += 1
        it = frame.iters[frame.count] = _Iter(frame, frame.count)
        frame.n_iters += 1
        frame.dead_exits.clear()
        roots, frame.next_roots = frame.next_roots, []
        for i, v in roots:
            self._activate(i, (v,), False, it)
        for i, v in frame.inv:
            self._activate(i, (v,), v is DEAD, it)

    def _cleanup(self, frame: _Frame, k: int) -> None:
        """Deletes finished iterations from `k` on; finishes the frame when all are gone."""
        iters = frame.iters
        while k <= frame.count:
            it = iters.get(k)
            if it is None or it.outstanding or it.nframes:
                break
            if (frame.pending_inputs if k == 0 else (k - 1) in iters):
                break
            del iters[k]
            frame.n_iters -= 1
            k += 1
            if frame.next_roots:
                self._new_iteration(frame)
        if not frame.pending_inputs and not frame.n_iters:
            self._finish_frame(frame)

    def _finish_frame(self, frame: _Frame) -> None:
        pit = frame.parent_iter
        if pit.children.pop(frame.info.name, None) is None:
            return                      # already finished
        for i in frame.dead_exits:
            self._activate(i, None, True, pit)
        pit.nframes -= 1
        if not pit.outstanding and not pit.nframes and pit.frame.parent_iter is not None:
            self._cleanup(pit.frame, pit.k)

    # -- results ------------------------------------------------------------------------------
    def results(self) -> list:
        plan = self.r.plan
        out = []
        for idx, i in plan.retvals:
            if idx in self.values:
                out.append(self.values[idx])
                continue
            src = plan.by_index[plan.by_index[i].inputs[0][0]]
            fetch = plan.by_index[i].node.inputs[0]
            if i in self.dead_retvals:
                err = errors.InvalidArgumentError(
                    src.node, None,
                    f"Retval[{idx}] does not have value: the fetched tensor '{fetch}' is dead "
                    "(it is on the untaken side of a Switch, e.g. inside the branch of a "
                    "tf.cond that did not run)")
            else:
                err = errors.InternalError(
                    src.node, None,
                    f"Retval[{idx}] does not have value: the step ended before '{fetch}' was "
                    "computed (a node waited for an input that never came)")
            raise errors.annotate(err, src.node, None)
        return out


def static_frames(plan: Plan) -> tuple[dict[int, str], dict[str, str | None]]:
    """Each node's frame (where its inputs arrive) and each frame's parent frame.

    Raises:
      InvalidArgumentError: a node has inputs from different frames, an Exit or NextIteration
        is outside any loop frame, or one frame is entered from two different frames.
    """
    by_index = plan.by_index
    frame_of: dict[int, str] = {}
    via: dict[int, int] = {}
    parent_of: dict[str, str | None] = {"": None}
    queue = deque(it.index for it in plan.items if not it.inputs and not it.control_inputs)
    for i in queue:
        frame_of[i] = ""
    outside: list = []          # Exit/NextIteration reached from the root frame
    while queue:
        i = queue.popleft()
        item = by_index[i]
        out_f = _output_frame(item, frame_of[i], parent_of)
        if out_f is None:
            outside.append(item)
            continue
        for dst, _ in item.consumers:
            have = frame_of.get(dst)
            if have is None:
                frame_of[dst], via[dst] = out_f, i
                queue.append(dst)
            elif have != out_f:
                if item.op == "_Arg" or by_index[via[dst]].op == "_Arg":
                    raise errors.InvalidArgumentError(
                        by_index[dst].node, None,
                        f"Cannot feed an input of '{by_index[dst].name}': it is inside a while "
                        "loop frame; feed a tensor outside the loop instead")
                raise errors.InvalidArgumentError(
                    by_index[dst].node, None,
                    f"The node '{by_index[dst].name}' has inputs from different frames. The "
                    f"input '{by_index[via[dst]].name}' is in frame '{have}'. The input "
                    f"'{item.name}' is in frame '{out_f}'.")
    if outside:
        item = outside[0]
        raise errors.InvalidArgumentError(
            item.node, None, f"{item.op} node '{item.name}' is not inside a loop frame (no "
                             f"Enter leads to it)")
    for it in plan.items:
        frame_of.setdefault(it.index, "")
    return frame_of, parent_of


def _check_feeds_and_fetches(plan: Plan, frame_of) -> None:
    """Fetched (and fed) tensors must live outside loops, as in TF."""
    for _, i in plan.retvals:
        frame = frame_of[i]
        if frame:
            item = plan.by_index[i]
            raise errors.InvalidArgumentError(
                item.node, None,
                f"Cannot fetch '{item.node.inputs[0]}': it is computed inside the while loop "
                f"frame '{frame}' (once per iteration); fetch an output of the loop instead")


def _output_frame(item, f: str, parent_of: dict) -> str | None:
    """The frame of `item`'s consumers (None: an Exit/NextIteration outside any loop)."""
    kind = _KIND.get(item.op, _NORMAL)
    if kind == _ENTER:
        child = item.attrs["frame_name"]
        prev = parent_of.setdefault(child, f)
        if prev != f:
            raise errors.InvalidArgumentError(
                item.node, None, f"Frame '{child}' is entered from frame '{prev}' and from "
                                 f"frame '{f}' (node '{item.name}')")
        return child
    if kind in (_EXIT, _NEXT) and f == "":
        return None
    if kind == _EXIT:
        return parent_of[f]
    return f
