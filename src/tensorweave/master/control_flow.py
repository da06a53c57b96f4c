"""Control loops for while loops split over devices (TF's graph_partition.cc, AddControlFlow).

A loop frame whose nodes sit on several devices runs as one loop per partition, all
iterating in lockstep. Every device that receives a tensor inside frame F gets a *control
loop* for F, built of dummy nodes that do nothing but iterate:

    Const (root frame) or the parent frame's control-loop Merge
      → Enter(F) → Merge ⇄ NextIteration
                   Merge → Switch(pred = F's LoopCond) → :1 → NextIteration

The Switch's predicate is F's `LoopCond`, received from its device (the frame's *leader*)
once per iteration, so a control loop stops when the real loop does. Every `_Recv` of an
edge inside F waits for its device's control-loop Merge: that puts the recv in F and in the
right iteration, so its rendezvous key carries `frame_id:iter_id` and matches the send of the
same iteration. A nested frame's control loop is entered from its parent frame's control
loop on the same device, so it starts once per parent iteration.

Before that, the control-flow nodes of such frames move next to their data (TF's
`OptimizeControlFlowColocation`): a `Switch` to its data input's device, an `Exit` to its
input's, a (non-ref) `Enter` and a `NextIteration` to their first data consumer's, which
keeps most loop skeleton edges inside one partition.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tensorweave import dtypes, errors, ir
from tensorweave.master.prune import output_dtypes

_ENTERS, _EXITS = ("Enter", "RefEnter"), ("Exit", "RefExit")
_NEXTS, _SWITCHES = ("NextIteration", "RefNextIteration"), ("Switch", "RefSwitch")
_CLOOP = "_cloop"


@dataclass
class Frames:
    """Each node's loop frame, as TF's ControlFlowInfo ("" is the root frame).

    `in_frame[n]` is where n's inputs live (for an Enter: the parent frame); `own(n)` is n's
    frame (an Enter's is the frame it enters); `out(n)` is where its outputs go (an Exit's:
    the parent frame).
    """

    in_frame: dict[str, str] = field(default_factory=dict)
    parent: dict[str, str] = field(default_factory=dict)
    enter_attrs: dict[str, dict] = field(default_factory=dict)
    loop_cond: dict[str, str] = field(default_factory=dict)
    ops: dict[str, str] = field(default_factory=dict)
    entered: dict[str, str] = field(default_factory=dict)   # Enter → the frame it enters

    def own(self, name: str) -> str:
        return self.entered.get(name) or self.in_frame.get(name, "")

    def out(self, name: str) -> str:
        if name in self.entered:
            return self.entered[name]
        f = self.in_frame.get(name, "")
        return self.parent.get(f, "") if self.ops.get(name) in _EXITS else f

    def add(self, node: ir.NodeDef, in_frame: str) -> None:
        """Records `node` (whose inputs live in `in_frame`)."""
        self.ops[node.name] = node.op
        self.in_frame[node.name] = in_frame
        if node.op in _ENTERS:
            child = node.attrs["frame_name"]
            self.entered[node.name] = child
            self.parent.setdefault(child, in_frame)
            self.enter_attrs.setdefault(child, node.attrs)
        elif node.op == "LoopCond" and in_frame:
            self.loop_cond[in_frame] = node.name


def find_frames(graph: ir.GraphDef) -> Frames:
    """Each node's frame, propagated from the roots along data and control edges.

    A node the roots do not reach is in the root frame; inconsistent frames (a node fed from
    two frames) are left for the runtime, which names the node.
    """
    consumers: dict[str, list[ir.NodeDef]] = {}
    for n in graph.nodes:
        for inp in n.inputs:
            consumers.setdefault(ir.parse_input(inp)[0], []).append(n)
    frames = Frames()
    queue = [n for n in graph.nodes if not n.inputs]
    for n in queue:
        frames.add(n, "")
    for n in queue:   # NOTE: the list grows while it is walked (a breadth-first walk)
        f = frames.out(n.name)
        for dst in consumers.get(n.name, ()):
            if dst.name not in frames.ops:
                frames.add(dst, f)
                queue.append(dst)
    for n in graph.nodes:
        if n.name not in frames.ops:
            frames.add(n, "")
    return frames


def split_frames(graph: ir.GraphDef, device: dict[str, str], frames: Frames) -> set[str]:
    """The loop frames whose nodes sit on more than one device."""
    seen: dict[str, str] = {}
    split = set()
    for n in graph.nodes:
        f = frames.own(n.name)
        if f and seen.setdefault(f, device[n.name]) != device[n.name]:
            split.add(f)
    return split


def colocate(graph: ir.GraphDef, device: dict[str, str], frames: Frames,
             split: set[str]) -> dict[str, str]:
    """`device` with the control-flow nodes of `split` frames moved next to their data.

    Only within one device type: a move never asks a device for a kernel it may lack.
    """
    out = dict(device)
    first_use: dict[str, str] = {}
    for n in graph.nodes:
        for inp in n.data_inputs():
            first_use.setdefault(ir.parse_input(inp)[0], n.name)
    for n in graph.nodes:
        if frames.own(n.name) not in split:
            continue
        target = _colocation_target(n, first_use)
        if target is not None and _same_type(out[target], out[n.name]):
            out[n.name] = out[target]
    return out


def _colocation_target(n: ir.NodeDef, first_use: dict[str, str]) -> str | None:
    if n.op in _SWITCHES or n.op in _EXITS:
        return ir.parse_input(n.inputs[0])[0] if n.inputs else None
    is_ref = n.op == "RefEnter" or (n.op in _ENTERS and output_dtypes(n)[0].is_ref_dtype)
    if (n.op in _ENTERS and not is_ref) or n.op in _NEXTS:
        return first_use.get(n.name)
    return None


def _same_type(a: str, b: str) -> bool:
    return _device_type(a) == _device_type(b)


def _device_type(name: str) -> str:
    for part in name.split("/"):
        if part.startswith("device:"):
            part = part[len("device:"):]
        if ":" in part and not part.startswith(("job:", "replica:", "task:")):
            return part.split(":")[0].upper()
    return ""


class ControlLoops:
    """The control loops added to a graph: {(frame, device): its Merge's name}."""

    def __init__(self, frames: Frames, device: dict[str, str]):
        self.frames = frames
        self.device = device
        self.merges: dict[tuple[str, str], str] = {}
        self.nodes: list[ir.NodeDef] = []
        self.count = 0

    def merge_for(self, frame: str, dev: str) -> str:
        """The Merge of `frame`'s control loop on `dev` (built, with its parents', if new).

        Raises: InvalidArgumentError when the frame has no LoopCond (TF: "A cross-device
          loop must have a pivot predicate").
        """
        known = self.merges.get((frame, dev))
        if known is not None:
            return known
        cond = self.frames.loop_cond.get(frame)
        if cond is None:
            raise errors.InvalidArgumentError(
                None, None, f"A cross-device loop must have a pivot predicate: {frame}")
        parent = self.frames.parent.get(frame, "")
        base = f"{_CLOOP}/{self.count}"
        self.count += 1
        feed = self.merge_for(parent, dev) if parent else self._dummy(f"{base}/Const", dev)
        attrs = self.frames.enter_attrs[frame]
        f32 = {"T": dtypes.float32}
        enter = ir.NodeDef(f"{base}/Enter", "Enter", [feed], dev, dict(
            f32, frame_name=frame, is_constant=False,
            parallel_iterations=attrs.get("parallel_iterations", 10)))
        merge = ir.NodeDef(f"{base}/Merge", "Merge", [enter.name, f"{base}/NextIteration"],
                           dev, dict(f32, N=2))
        switch = ir.NodeDef(f"{base}/Switch", "Switch", [merge.name, cond], dev, dict(f32))
        nxt = ir.NodeDef(f"{base}/NextIteration", "NextIteration", [f"{switch.name}:1"], dev,
                         dict(f32))
        self.frames.add(enter, parent)
        for n in (merge, switch, nxt):
            self.frames.add(n, frame)
        self._keep(enter, merge, switch, nxt)
        self.merges[(frame, dev)] = merge.name
        return merge.name

    def _dummy(self, name: str, dev: str) -> str:
        const = ir.NodeDef(name, "Const", [], dev, {"dtype": dtypes.float32,
                                                    "value": np.zeros(0, np.float32)})
        self.frames.add(const, "")
        self._keep(const)
        return name

    def _keep(self, *nodes: ir.NodeDef) -> None:
        for n in nodes:
            self.nodes.append(n)
            self.device[n.name] = n.device


def add_control_flow(graph: ir.GraphDef, placement: dict[str, str]
                     ) -> tuple[ir.GraphDef, dict[str, str], Frames, ControlLoops]:
    """(graph with control loops, its placement, its frames, the loops). Pure.

    A graph without split frames comes back as it is (no control loop, same placement).

    Raises: InvalidArgumentError for a split frame without a LoopCond.
    """
    frames = find_frames(graph)
    split = split_frames(graph, placement, frames)
    device = colocate(graph, placement, frames, split) if split else dict(placement)
    loops = ControlLoops(frames, device)
    if not split:
        return graph, device, frames, loops
    for dst in graph.nodes:
        for inp in dst.inputs:
            src = ir.parse_input(inp)[0]
            f = frames.out(src)
            if f and device[src] != device[dst.name] and f == frames.in_frame[dst.name]:
                loops.merge_for(f, device[dst.name])
    nodes = list(graph.nodes) + loops.nodes
    return (ir.GraphDef(nodes=nodes, library=graph.library, shapes=graph.shapes),
            device, frames, loops)


__all__ = ["ControlLoops", "Frames", "add_control_flow", "find_frames"]
