"""The plan of one partition: nodes in topological order, inputs resolved to producer slots,
kernels instantiated. Built once per registered partition; both executors run from it.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from tensorweave import errors, ir
from tensorweave.ops.registry import OPS, OpDef, arg_dtypes, full_attrs  # noqa: F401
from tensorweave.runtime.kernels.registry import KernelNode, lookup_kernel

RECV_OPS = frozenset(["_Recv", "_HostRecv"])
SEND_OPS = frozenset(["_Send", "_HostSend"])


@dataclass
class NodeItem:
    """One node of a plan. `inputs` are (producer index, output slot) pairs."""

    index: int
    node: ir.NodeDef
    op_def: OpDef
    attrs: dict
    fn: object = None
    context: bool = False
    forwards_input: bool = False
    inputs: list = field(default_factory=list)
    control_inputs: list = field(default_factory=list)
    deref: list = field(default_factory=list)
    output_dtypes: list = field(default_factory=list)
    consumers: list = field(default_factory=list)       # (dst index, dst slot); slot -1 = ctl

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def op(self) -> str:
        return self.node.op


class Plan:
    """Nodes of one partition in topological order with kernels ready to call.

    Raises (from the constructor):
      NotFoundError: an op type is not registered, or has no kernel for the device.
      InvalidArgumentError: an input names a missing node, or the graph has a cycle.
    """

    def __init__(self, graph_def: ir.GraphDef, device_type: str = "CPU", resources=None,
                 device: str = "", dataflow: bool = False):
        """`dataflow=True` forces the dataflow interpreter (a partition whose `_Recv`s may
        carry dead values from a partition with control flow). `receive_driven`: a partition
        without control flow that receives twice or more runs each part as soon as the
        receives it needs arrive (runtime/receive_driven.py), not in one fixed order: a peer
        may send the second only after a send of ours that waits behind the first (a ps
        partition of a sharded step deadlocked so)."""
        self.device_type = device_type
        self.device = device
        self.resources = resources
        self.library = {f.name: f for f in graph_def.library}
        nodes = graph_def.nodes
        self.by_name = {n.name: i for i, n in enumerate(nodes)}
        items = [self._make_item(i, n) for i, n in enumerate(nodes)]
        self._link(items)
        self.items = self._toposort(items)
        self.has_control_flow = dataflow or any(it.op_def.traits.control_flow
                                                for it in self.items)
        self.receive_driven = (not self.has_control_flow
                               and sum(it.op in RECV_OPS for it in self.items) >= 2)
        self.args = sorted((it.attrs["index"], it.index) for it in items if it.op == "_Arg")
        self.retvals = sorted((it.attrs["index"], it.index) for it in items if it.op == "_Retval")
        self.by_index = {it.index: it for it in items}

    def _make_item(self, i: int, node: ir.NodeDef) -> NodeItem:
        op_def = OPS.get(node.op)
        if op_def is None:
            raise errors.NotFoundError(node, None, f"Op type not registered '{node.op}' "
                                                   f"(node '{node.name}')")
        attrs = full_attrs(op_def, node.attrs)
        item = NodeItem(i, node, op_def, attrs)
        item.output_dtypes = arg_dtypes(op_def.outputs, attrs)
        return item

    def _link(self, items: list[NodeItem]) -> None:
        for item in items:
            for name in item.node.inputs:
                src, slot, ctl = ir.parse_input(name)
                j = self.by_name.get(src)
                if j is None:
                    raise errors.InvalidArgumentError(
                        item.node, None,
                        f"Node '{item.name}': input '{name}' refers to a node not in the graph")
                if ctl:
                    item.control_inputs.append(j)
                    items[j].consumers.append((item.index, -1))
                else:
                    items[j].consumers.append((item.index, len(item.inputs)))
                    item.inputs.append((j, slot))
        for item in items:
            self._bind_kernel(item, items)

    def _bind_kernel(self, item: NodeItem, items) -> None:
        in_specs = arg_dtypes(item.op_def.inputs, item.attrs)
        in_refs = _ref_flags(item.op_def, item.attrs)
        input_dtypes = []
        for k, (j, slot) in enumerate(item.inputs):
            src_dt = items[j].output_dtypes[slot] if slot < len(items[j].output_dtypes) else None
            is_ref_src = src_dt is not None and src_dt.is_ref_dtype
            wants_ref = in_refs[k] if k < len(in_refs) else False
            item.deref.append(is_ref_src and not wants_ref)
            input_dtypes.append(src_dt.base_dtype if src_dt is not None and not wants_ref
                                else src_dt or (in_specs[k] if k < len(in_specs) else None))
        kdef = lookup_kernel(item.op, self.device_type)
        knode = KernelNode(item.name, item.op, item.attrs, input_dtypes, item.output_dtypes,
                           self.device, self.resources, item.op_def,
                           {"library": self.library})
        try:
            item.fn = kdef.factory(knode)
        except errors.OpError as e:
            raise errors.annotate(e, item.node, None) from None
        except (ValueError, TypeError, KeyError) as e:
            raise errors.InvalidArgumentError(
                item.node, None, f"Cannot build kernel for node '{item.name}' ({item.op}): {e}"
            ) from None
        item.context = kdef.context
        item.forwards_input = kdef.forwards_input

    def _toposort(self, items: list[NodeItem]) -> list[NodeItem]:
        """Kahn's order, stable by node position; NextIteration back-edges are ignored.

        Receives go as late as possible: a partition sends everything it can before it blocks
        waiting for another partition (which may be waiting for those sends).
        """
        indeg = [0] * len(items)
        for item in items:
            for dst, _ in item.consumers:
                if item.op not in ("NextIteration", "RefNextIteration"):
                    indeg[dst] += 1
        def key(i):
            return (items[i].op in RECV_OPS, i)

        heap = [key(i) for i, d in enumerate(indeg) if d == 0]
        heapq.heapify(heap)
        order = []
        while heap:
            _, i = heapq.heappop(heap)
            order.append(items[i])
            if items[i].op in ("NextIteration", "RefNextIteration"):
                continue
            for dst, _ in items[i].consumers:
                indeg[dst] -= 1
                if indeg[dst] == 0:
                    heapq.heappush(heap, key(dst))
        if len(order) != len(items):
            stuck = sorted(items[i].name for i, d in enumerate(indeg) if d > 0)[:5]
            raise errors.InvalidArgumentError(
                None, None, f"Graph has a cycle (not through NextIteration) at nodes {stuck}")
        return order


def _ref_flags(op_def: OpDef, attrs) -> list[bool]:
    out = []
    for spec in op_def.inputs:
        n = 1
        if spec.number_attr:
            n = int(attrs.get(spec.number_attr, 1))
        elif spec.type_list_attr:
            n = len(attrs.get(spec.type_list_attr, []))
        out.extend([spec.is_ref] * n)
    return out
