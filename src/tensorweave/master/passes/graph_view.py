"""A mutable view of an IR graph for rewrite passes: lookup, consumers, rewiring."""

from __future__ import annotations

from tensorweave import ir
from tensorweave.ops.registry import op_traits

PROTECTED_OPS = frozenset(["_Arg", "_Retval", "_Send", "_Recv"])


def is_control_flow(op_type: str) -> bool:
    return op_traits(op_type).control_flow


class GraphView:
    """Nodes by name in their original order. Copy-on-write: a pass calls `edit(name)` before
    changing a node, so the input graph is never changed and untouched nodes are shared."""

    def __init__(self, graph: ir.GraphDef, keep: set[str] = frozenset()):
        self.graph = graph
        self.nodes: dict[str, ir.NodeDef] = {n.name: n for n in graph.nodes}
        self.keep = set(keep)          # names that must survive (targets)
        self._consumers: dict[str, list[str]] | None = None
        self._owned: set[str] = set()

    def edit(self, name: str) -> ir.NodeDef:
        """The node `name`, copied on first edit so it may be changed in place."""
        if name not in self._owned:
            self.nodes[name] = self.nodes[name].copy()
            self._owned.add(name)
        return self.nodes[name]

    def put(self, node: ir.NodeDef) -> None:
        """Replaces (or adds) a node with one the pass built itself."""
        self.nodes[node.name] = node
        self._owned.add(node.name)
        self.invalidate()

    def to_graph(self) -> ir.GraphDef:
        return ir.GraphDef(nodes=list(self.nodes.values()), library=self.graph.library,
                           producer=self.graph.producer, min_consumer=self.graph.min_consumer,
                           shapes=self.graph.shapes)

    # -- queries ------------------------------------------------------------------------------
    def consumers(self, name: str) -> list[str]:
        """Names of nodes that read `name` (data or control)."""
        if self._consumers is None:
            self._consumers = {}
            for n in self.nodes.values():
                for i in n.inputs:
                    self._consumers.setdefault(ir.parse_input(i)[0], []).append(n.name)
        return self._consumers.get(name, [])

    def producer(self, inp: str) -> ir.NodeDef | None:
        return self.nodes.get(ir.parse_input(inp)[0])

    def shape(self, name: str, slot: int = 0):
        shapes = self.graph.shapes.get(name)
        return shapes[slot] if shapes and slot < len(shapes) else None

    def has_control_flow(self) -> bool:
        return any(is_control_flow(n.op) for n in self.nodes.values())

    # -- edits --------------------------------------------------------------------------------
    def invalidate(self) -> None:
        self._consumers = None

    def replace_uses(self, old: str, new: str) -> None:
        """Every data input reading tensor `old` (e.g. "a" or "a:1") reads `new` instead."""
        old_node, old_slot, _ = ir.parse_input(old)
        for name in list(self.consumers(old_node)):
            n = self.edit(name)
            changed = False
            for k, i in enumerate(n.inputs):
                src, slot, ctl = ir.parse_input(i)
                if not ctl and src == old_node and slot == old_slot:
                    n.inputs[k] = new
                    changed = True
            if changed:
                _sort_controls(n)
        self.invalidate()

    def replace_control_uses(self, old: str, new_controls: list[str]) -> None:
        """Nodes depending on `^old` depend on each of `new_controls` instead."""
        for name in list(self.consumers(old)):
            if f"^{old}" not in self.nodes[name].inputs:
                continue
            n = self.edit(name)
            n.inputs = [i for i in n.inputs if i != f"^{old}"]
            reads = {ir.parse_input(i)[0] for i in n.inputs}
            for c in new_controls:
                if c not in reads and c != n.name:   # a data input already orders it
                    n.inputs.append(f"^{c}")
                    reads.add(c)
        self.invalidate()

    def remove(self, name: str) -> None:
        self.nodes.pop(name, None)
        self.invalidate()

    def add(self, node: ir.NodeDef, before: str | None = None) -> None:
        self._owned.add(node.name)
        if before is None or before not in self.nodes:
            self.nodes[node.name] = node
        else:
            items = list(self.nodes.items())
            i = [k for k, _ in items].index(before)
            items.insert(i, (node.name, node))
            self.nodes = dict(items)
        self.invalidate()

    def unique(self, base: str) -> str:
        name, k = base, 1
        while name in self.nodes:
            name = f"{base}_{k}"
            k += 1
        return name


def _sort_controls(n: ir.NodeDef) -> None:
    data = [i for i in n.inputs if not i.startswith("^")]
    ctl = []
    for i in n.inputs:
        if i.startswith("^") and i not in ctl:
            ctl.append(i)
    n.inputs = data + ctl
