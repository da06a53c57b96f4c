"""Placement: give every node of the full graph a concrete device, once per graph version.

Rules, in order (TF's placer, simplified where TF is clumsy):
1. Colocation groups: `_class` = ["loc:@x"] attrs, and reference edges (an Assign or Apply op
   consuming a variable's ref) tie nodes together; a group goes to one device.
2. Sticky: a node placed before keeps its device (variables never move), and so does its group.
3. Constraints: the members' requested devices (partial specs) are merged; a conflict is an
   error naming the chain of nodes that asked for each device.
4. Kernels: the device type must have a kernel for every member's op.
5. Soft placement (`allow_soft_placement`) drops the requested device when nothing matches.
6. Unconstrained nodes: metadata ops (Shape, Size, Rank) follow their input; nodes without
   inputs (constants, generators) follow their first consumer; the rest go to the first device.
A node that cannot be placed is recorded, not raised: the error surfaces only if a step needs it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from tensorweave import dtypes, errors, ir
from tensorweave.ops.registry import OPS, op_traits
from tensorweave.runtime.device import DeviceSpec
from tensorweave.runtime.kernels.registry import has_kernel
from tensorweave.runtime.kernels.xla.backend import is_compiled
from tensorweave.runtime.xla_control_flow import placement_off_xla


@dataclass
class Placement:
    """{node: device} plus the errors of nodes that could not be placed."""

    devices: dict[str, str] = field(default_factory=dict)
    failed: dict[str, errors.OpError] = field(default_factory=dict)

    def device_of(self, name: str) -> str:
        if name in self.failed:
            raise self.failed[name]
        return self.devices[name]


def place(nodes: dict[str, ir.NodeDef], order: list[str], devices: list[str],
          placement: Placement, allow_soft: bool = False, log: bool = False) -> Placement:
    """Places every node of `order` not yet in `placement` (which is updated and returned)."""
    todo = [n for n in order if n not in placement.devices and n not in placement.failed]
    if not todo:
        return placement
    if len(devices) == 1:
        _place_single(nodes, todo, devices[0], placement, allow_soft)
    else:
        _place_groups(nodes, order, todo, devices, placement, allow_soft)
    if log:
        for n in todo:
            if n in placement.devices:
                print(f"{n}: ({nodes[n].op}): {placement.devices[n]}", file=sys.stderr)
    return placement


def _place_single(nodes, todo, device, placement, allow_soft) -> None:
    """One device: every node goes there unless it asks for another or lacks a kernel.

    NOTE: colocation cannot split anything on one device, so groups are not built.
    """
    spec = DeviceSpec.from_string(device)
    for name in todo:
        n = nodes[name]
        if (n.device and not allow_soft and not DeviceSpec.from_string(n.device).matches(spec)) \
                or not _kernel_ok(n, spec.device_type):
            placement.failed[name] = _no_device(nodes, [name], [(name, n.device)] if n.device
                                                else [], [device])
        else:
            placement.devices[name] = device


def _place_groups(nodes, order, todo, devices, placement, allow_soft) -> None:
    groups = _groups(nodes, order)
    specs = [DeviceSpec.from_string(d) for d in devices]
    # NOTE: an XLA partition is compiled whole: cond branches, and the while loops it
    # cannot compile (runtime/xla_control_flow.py says why), stay on a CPU
    off_xla = placement_off_xla(nodes, order, control_flow_nodes(nodes, order)) if any(
        is_compiled(s.device_type) for s in specs) else set()
    by_group: dict[str, list[str]] = {}
    for n in order:
        by_group.setdefault(groups.find(n), []).append(n)
    chosen: dict[str, str] = {}
    for members in by_group.values():
        if any(m in placement.devices or m in placement.failed for m in members) and \
                not any(m in todo for m in members):
            continue
        _place_group(nodes, members, devices, specs, placement, allow_soft, chosen, off_xla)
    _place_followers(nodes, order, todo, placement, devices, chosen)


class _UnionFind:
    def __init__(self):
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        p = self.parent.setdefault(x, x)
        while p != self.parent.setdefault(p, p):
            self.parent[p] = self.parent[self.parent[p]]
            p = self.parent[p]
        return p

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _groups(nodes, order) -> _UnionFind:
    uf = _UnionFind()
    for name in order:
        n = nodes[name]
        uf.find(name)
        for loc in n.attrs.get("_class", []) or []:
            other = loc[5:] if isinstance(loc, str) and loc.startswith("loc:@") else None
            if other in nodes:
                uf.union(name, other)
        for src in _ref_sources(nodes, n):
            uf.union(name, src)
    return uf


def _ref_sources(nodes, n: ir.NodeDef) -> list[str]:
    """Producers whose ref or resource output this node takes (Assign ← VariableV2,
    QueueDequeueV2 ← FIFOQueueV2): TF colocates both ends of such an edge, since a handle
    is meaningless on another device."""
    op_def = OPS.get(n.op)
    if op_def is None or not any(_is_handle(s) for s in op_def.inputs):
        return []
    out = []
    for spec, inp in zip(op_def.inputs, n.data_inputs()):
        if spec.is_list:
            break  # NOTE: positions after a list input depend on its length
        src = ir.parse_input(inp)[0]
        if _is_handle(spec) and src in nodes:
            out.append(src)
    return out


def _is_handle(spec) -> bool:
    return spec.is_ref or spec.dtype == dtypes.resource


def _place_group(nodes, members, devices, specs, placement, allow_soft, chosen,
                 off_xla=frozenset()) -> None:
    sticky = [placement.devices[m] for m in members if m in placement.devices]
    if sticky:
        for m in members:
            placement.devices.setdefault(m, sticky[0])
        return
    requested = [(m, nodes[m].device) for m in members if nodes[m].device]
    try:
        want = _merge_requests(requested, members)
        candidates = [d for d, s in zip(devices, specs) if want.matches(s)
                      and all(_kernel_ok(nodes[m], s.device_type, off_xla) for m in members)]
        if not candidates and allow_soft:
            candidates = [d for d, s in zip(devices, specs)
                          if all(_kernel_ok(nodes[m], s.device_type, off_xla) for m in members)]
        if not candidates:
            raise _no_device(nodes, members, requested, devices)
    except errors.OpError as e:
        for m in members:
            placement.failed[m] = e
        return
    if not requested and len(members) == 1:
        chosen[members[0]] = candidates[0]  # free to follow its input or consumer
        return
    for m in members:
        placement.devices[m] = candidates[0]


def _kernel_ok(node: ir.NodeDef, device_type: str | None, off_xla=frozenset()) -> bool:
    """Whether `node` can run on `device_type` (`off_xla`: nodes no XLA device takes)."""
    if node.name in off_xla and is_compiled(device_type):
        return False
    return has_kernel(node.op, device_type or "CPU", node.attrs)


_ENTER = frozenset(["Enter", "RefEnter"])
_EXIT = frozenset(["Exit", "RefExit"])
_SWITCH = frozenset(["Switch", "RefSwitch"])
_MERGE = frozenset(["Merge", "RefMerge"])


def control_flow_nodes(nodes: dict[str, ir.NodeDef], order: list[str]) -> set[str]:
    """The nodes inside a while-loop frame or a cond branch (TF1's Enter/Exit and
    Switch/Merge), and those ops themselves.

    A node's context is its deepest input's (data or control), with Enter pushing a frame and
    Switch a branch, Merge popping a branch (a loop's Merge, fed by Enter, pops nothing) and
    Exit popping the loop's branch and frame. NextIteration back edges are not followed.
    """
    ctx: dict[str, tuple[str, ...]] = {}
    for name in order:
        n = nodes[name]
        srcs = [ctx[s] for s in (ir.parse_input(i)[0] for i in n.inputs) if s in ctx]
        base = max(srcs, key=len, default=())
        if n.op in _ENTER:
            base += ("frame",)
        elif n.op in _SWITCH:
            base += ("branch",)
        elif n.op in _MERGE and base[-1:] == ("branch",):
            base = base[:-1]
        elif n.op in _EXIT:
            base = base[:-1] if base[-1:] == ("branch",) else base
            base = base[:-1]
        ctx[name] = base
    cf_ops = _ENTER | _EXIT | _SWITCH | _MERGE
    return {m for m, c in ctx.items() if c or nodes[m].op in cf_ops}


def _merge_requests(requested, members) -> DeviceSpec:
    spec = DeviceSpec()
    first: dict[str, str] = {}
    for name, dev in requested:
        s = DeviceSpec.from_string(dev)
        for field_name, value in s.__dict__.items():
            have = getattr(spec, field_name)
            if value is not None and have is not None and have != value:
                raise errors.InvalidArgumentError(
                    None, None,
                    f"Cannot colocate nodes {first[field_name]} and {name}: conflicting "
                    f"{field_name} ({have} vs {value}); colocation group: {sorted(members)}")
            if value is not None:
                first.setdefault(field_name, name)
        spec = spec.merge_from(s)
    return spec


def _no_device(nodes, members, requested, devices) -> errors.OpError:
    head = members[0]
    asked = ", ".join(f"{m} → {d}" for m, d in requested) or "no device requested"
    kernels = {nodes[m].op for m in members}
    chain = f" (colocation group: {sorted(members)})" if len(members) > 1 else ""
    return errors.InvalidArgumentError(
        nodes[head], None,
        f"Cannot assign a device for operation {head}: {asked}{chain}. Ops {sorted(kernels)} "
        f"need kernels on the device. Available devices: [{', '.join(devices)}]. Make sure the "
        "device specification refers to a valid device, or set allow_soft_placement.")


def _place_followers(nodes, order, todo, placement, devices, chosen) -> None:
    """Unconstrained nodes: metadata ops follow inputs, input-less nodes their consumers."""
    consumers: dict[str, list[str]] = {}
    for name in order:
        for inp in nodes[name].inputs:
            consumers.setdefault(ir.parse_input(inp)[0], []).append(name)
    pending = [n for n in todo if n in chosen and n not in placement.devices]
    for n in pending:
        node = nodes[n]
        if op_traits(node.op).metadata_only and node.inputs:
            src = ir.parse_input(node.inputs[0])[0]
            placement.devices[n] = placement.devices.get(src, chosen[n])
        elif node.inputs:
            placement.devices[n] = chosen[n]
    for n in reversed(pending):
        if n in placement.devices:
            continue
        follow = [placement.devices[c] for c in consumers.get(n, []) if c in placement.devices]
        placement.devices[n] = follow[0] if follow else chosen[n]
