"""Seeing the stages: a fetch's graph as the master transforms it.

`explain(fetches, feed_dict=None, graph=None, config=None)` returns an `Explanation` with the
graph at each stage — full, placed, pruned, after each optimization pass (with what it removed
or fused), partitioned — as deterministic text (`text()`), Graphviz DOT (`dot()`) and SVG
(`svg(path)`, when Graphviz's `dot` is installed), with node counts per stage. It runs the
same functions a session's master runs, on the same inputs.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field

from tensorweave import ir
from tensorweave.master.partition import partition
from tensorweave.master.passes import PassContext, disabled_from_config, optimize
from tensorweave.master.place import Placement, place
from tensorweave.master.prune import prune
from tensorweave.runtime.device import local_device_names


@dataclass
class Stage:
    name: str
    graphs: dict[str, ir.GraphDef]          # device (or "") → graph
    notes: list[str] = field(default_factory=list)

    @property
    def node_count(self) -> int:
        return sum(len(g.nodes) for g in self.graphs.values())


@dataclass
class Explanation:
    stages: list[Stage]

    def counts(self) -> dict[str, int]:
        return {s.name: s.node_count for s in self.stages}

    def text(self, full: bool = False) -> str:
        """The node counts, the first stage whole, then what each stage changed
        (`master.explain_text`); `full=True` prints every stage whole."""
        from tensorweave.master.explain_text import render

        return render(self.stages, full)

    def dot(self, stage: str | None = None) -> str:
        """Graphviz DOT of one stage (default: the last), one cluster per device."""
        s = self._stage(stage)
        lines = [f'digraph "{s.name}" {{', "  rankdir=TB;", "  node [shape=box, fontsize=10];"]
        for k, dev in enumerate(sorted(s.graphs)):
            lines.append(f'  subgraph cluster_{k} {{ label="{dev or "graph"}";')
            lines.extend(f'    "{n.name}" [label="{n.name}\\n{n.op}"];'
                         for n in s.graphs[dev].nodes)
            lines.append("  }")
        for g in s.graphs.values():
            for n in g.nodes:
                for i in n.inputs:
                    src, _, ctl = ir.parse_input(i)
                    style = " [style=dashed]" if ctl else ""
                    lines.append(f'  "{src}" -> "{n.name}"{style};')
        lines.append("}")
        return "\n".join(lines) + "\n"

    def svg(self, path: str, stage: str | None = None) -> bool:
        """Renders a stage to SVG with Graphviz; returns False when `dot` is not installed."""
        exe = shutil.which("dot")
        if exe is None:
            return False
        subprocess.run([exe, "-Tsvg", "-o", path], input=self.dot(stage).encode(), check=True,
                       timeout=120)
        return True

    def _stage(self, name):
        if name is None:
            return self.stages[-1]
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(f"no stage '{name}'; stages: {[s.name for s in self.stages]}")


def explain(fetches, feed_dict=None, graph=None, config=None) -> Explanation:
    """The stages of running `fetches` (tensors, ops or names) with the feeds' keys fed."""
    from tensorweave.client.fetch import FetchMapper
    from tensorweave.client.session import _config_dict
    from tensorweave.framework.graph import get_default_graph

    graph = graph or get_default_graph()
    mapper = FetchMapper(graph, fetches)
    feeds = [graph.as_graph_element(k, allow_operation=False).name for k in (feed_dict or {})]
    cfg = _config_dict(config)
    return explain_ir(graph._as_ir(), feeds, mapper.fetch_names, mapper.targets, cfg)


def explain_ir(full: ir.GraphDef, feeds, fetches, targets, config: dict) -> Explanation:
    n_cpu = int(config.get("device_count", {}).get("CPU", 1) or 1)
    devices = local_device_names(cpus=n_cpu)
    nodes, order = full.node_map(), [n.name for n in full.nodes]
    placement = place(nodes, order, devices, Placement(),
                      bool(config.get("allow_soft_placement")))
    placed = ir.GraphDef(nodes=[_with_device(n, placement.devices.get(n.name, "?"))
                                for n in full.nodes], shapes=full.shapes)
    stages = [Stage("full", {"": full}), Stage("placed", {"": placed})]
    pruned = prune(nodes, order, feeds, fetches, targets, devices[0]).graph
    pruned = ir.GraphDef(nodes=[_with_device(n, devices[0] if n.op in ("_Arg", "_Retval")
                                             else placement.device_of(n.name))
                                for n in pruned.nodes], shapes=full.shapes)
    stages.append(Stage("pruned", {"": pruned}))
    disabled, only = disabled_from_config(config)
    ctx = PassContext(keep=set(targets), disabled=disabled)
    after: list = []
    optimized = optimize(pruned, ctx, only, stages=after)
    for name, g in after:
        stages.append(Stage(f"pass {name}", {"": g},
                            [t for p, t in ctx.report if p == name] or ["(no change)"]))
    parts = partition(optimized, {n.name: n.device for n in optimized.nodes})
    stages.append(Stage("partitioned", parts))
    return Explanation(stages)


def _with_device(n: ir.NodeDef, device: str) -> ir.NodeDef:
    out = n.copy()
    out.device = device
    return out
