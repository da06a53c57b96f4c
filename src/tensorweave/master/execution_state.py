"""A session's graph and its build pipeline (TF's GraphExecutionState).

`GraphExecutionState` holds what a session knows of its graph: the nodes (in creation
order), their shapes, the function library and the placement, which is sticky — a node placed
once (a variable above all) never moves, whatever later signatures need. `build` turns one
signature into a `ClientGraph` by the one pipeline the master and `explain` share:

    place (every node not yet placed) → prune (feeds, fetches, targets)
      → optimize (the ordered, named passes) → partition (one graph per device)

With a `stages` list, `build` also appends a `Stage` for each step (full, placed, pruned,
each pass with its notes, partitioned): that is all `explain` adds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tensorweave import errors, ir
from tensorweave.master.options import BuildOptions
from tensorweave.master.partition import partition
from tensorweave.master.passes import PassContext, optimize
from tensorweave.master.place import Placement, place
from tensorweave.master.prune import prune
from tensorweave.ops.registry import op_traits

_IO_OPS = ("_Arg", "_Retval")


@dataclass(frozen=True)
class Signature:
    """What one step asks for: fed tensors, fetched tensors, target ops (names, in order)."""

    feeds: tuple[str, ...] = ()
    fetches: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()

    @classmethod
    def of(cls, feeds, fetches, targets) -> Signature:
        return cls(tuple(feeds), tuple(fetches), tuple(targets))


@dataclass
class Stage:
    """The graph after one step of the pipeline: {device (or "" for one graph): graph}."""

    name: str
    graphs: dict[str, ir.GraphDef]
    notes: list[str] = field(default_factory=list)

    @property
    def node_count(self) -> int:
        return sum(len(g.nodes) for g in self.graphs.values())


@dataclass
class ClientGraph:
    """A signature's partitions, ready to register (the client device's first)."""

    feed_dtypes: list
    partitions: dict[str, ir.GraphDef]
    client_device: str
    dataflow: bool = False   # whether the partitions need the dataflow interpreter

    def devices(self) -> list[str]:
        """The partitions' devices, the client's first, the rest sorted."""
        rest = sorted(d for d in self.partitions if d != self.client_device)
        head = [self.client_device] if self.client_device in self.partitions else []
        return head + rest


class GraphExecutionState:
    """A session's graph, shapes, functions and sticky placement.

    Not thread-safe: the master calls `extend` and `build` under its session lock.
    """

    def __init__(self, graph_def: ir.GraphDef | None = None):
        self.nodes: dict[str, ir.NodeDef] = {}
        self.order: list[str] = []
        self.shapes: dict[str, list] = {}
        self.library: dict[str, ir.FunctionDef] = {}
        self.placement = Placement()
        if graph_def is not None:
            self.extend(graph_def)

    def extend(self, graph_def: ir.GraphDef) -> None:
        """Adds a graph (or an extension of it); a node already known is replaced.

        Raises: InvalidArgumentError, adding nothing, when an input names no node (TF's
        "Unknown input node").
        """
        new = {n.name for n in graph_def.nodes}
        for n in graph_def.nodes:
            for inp in n.inputs:
                src = ir.parse_input(inp)[0]
                if src not in new and src not in self.nodes:
                    raise errors.InvalidArgumentError(
                        None, None, f"Node '{n.name}': Unknown input node '{inp}'")
        self.shapes.update(graph_def.shapes)
        # NOTE: partitions carry the functions (tf.data, defuns) so a remote task can run them.
        self.library.update((f.name, f) for f in graph_def.library or ())
        for n in graph_def.nodes:
            if n.name not in self.nodes:
                self.order.append(n.name)
            self.nodes[n.name] = n

    def graph(self) -> ir.GraphDef:
        """The full graph as known now."""
        return ir.GraphDef(nodes=[self.nodes[n] for n in self.order],
                           library=list(self.library.values()), shapes=self.shapes)

    def build(self, signature: Signature, options: BuildOptions,
              stages: list[Stage] | None = None) -> ClientGraph:
        """Places, prunes, optimizes and partitions the graph for `signature`.

        Raises: the first placement error of a node the signature needs (InvalidArgumentError
        naming the device), prune's errors (unfed placeholders, unknown names), ValueError for
        an unknown pass name in `options.passes`.
        """
        client = options.client_device
        place(self.nodes, self.order, list(options.devices), self.placement,
              options.soft_placement, options.log_placement)
        if stages is not None:
            self._record_full(stages)
        pruned = prune(self.nodes, self.order, list(signature.feeds),
                       list(signature.fetches), list(signature.targets), client)
        placed = ir.GraphDef(nodes=[self._placed(n, client) for n in pruned.graph.nodes],
                             library=list(self.library.values()), shapes=self.shapes)
        if stages is not None:
            stages.append(Stage("pruned", {"": placed}))
        ctx = PassContext(keep=set(signature.targets), disabled=set(options.disabled_passes),
                          jit_level=options.global_jit_level)
        after: list | None = [] if stages is not None else None
        optimized = optimize(placed, ctx, list(options.passes) if options.passes else None,
                             stages=after)
        if len(options.devices) == 1:  # NOTE: one device: nothing to split
            graphs = {client: optimized}
        else:
            graphs = partition(optimized, {n.name: n.device for n in optimized.nodes})
        if stages is not None:
            for name, g in after or ():
                notes = [t for p, t in ctx.report if p == name] or ["(no change)"]
                stages.append(Stage(f"pass {name}", {"": g}, notes))
            stages.append(Stage("partitioned", graphs))
        dataflow = len(graphs) > 1 and any(op_traits(n.op).control_flow
                                           for g in graphs.values() for n in g.nodes)
        return ClientGraph(pruned.feed_dtypes, graphs, client, dataflow)

    def _placed(self, n: ir.NodeDef, client: str) -> ir.NodeDef:
        """A copy of `n` whose device is its placement (feeds and fetches on the client).

        Raises: the node's placement error, when it could not be placed.
        """
        out = n.copy()
        out.device = client if n.op in _IO_OPS else self.placement.device_of(n.name)
        return out

    def _record_full(self, stages: list[Stage]) -> None:
        full = self.graph()
        placed = []
        for n in full.nodes:
            c = n.copy()
            c.device = self.placement.devices.get(n.name, "?")
            placed.append(c)
        stages.append(Stage("full", {"": full}))
        stages.append(Stage("placed", {"": ir.GraphDef(nodes=placed, shapes=self.shapes)}))


__all__ = ["ClientGraph", "GraphExecutionState", "Signature", "Stage"]
