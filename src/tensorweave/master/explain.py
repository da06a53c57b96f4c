"""Seeing the stages: a fetch's graph as the master transforms it.

`explain(fetches, feed_dict=None, graph=None, config=None)` returns an `Explanation` with the
graph at each stage — full, placed, pruned, after each optimization pass (with what it removed
or fused), partitioned — as deterministic text (`text()`), Graphviz DOT (`dot()`) and SVG
(`svg(path)`, when Graphviz's `dot` is installed), with node counts per stage. It runs the
same `GraphExecutionState.build` a session's master runs, with a stage collector.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

from tensorweave import ir
from tensorweave.master.execution_state import GraphExecutionState, Signature, Stage
from tensorweave.master.options import BuildOptions


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


def explain(fetches, feed_dict=None, graph=None, config=None, devices=None) -> Explanation:
    """The stages of running `fetches` (tensors, ops or names, nested in lists, tuples and
    dicts) with the feeds' keys fed; `devices` as in `explain_ir`."""
    from tensorweave.framework.graph import get_default_graph

    graph = graph or get_default_graph()
    names, targets = _fetch_names(graph, fetches)
    feeds = [graph.as_graph_element(k, allow_operation=False).name for k in (feed_dict or {})]
    return explain_ir(graph._as_ir(), feeds, names, targets, config, devices)


def explain_ir(full: ir.GraphDef, feeds, fetches, targets, config=None,
               devices: list[str] | None = None) -> Explanation:
    """The stages `GraphExecutionState.build` goes through for one signature of `full`
    (`config`: a ConfigProto, a dict of its fields, or None) on `devices` (a session's
    `list_devices()` names, the client's first; default: this process's CPUs)."""
    stages: list[Stage] = []
    GraphExecutionState(full).build(Signature.of(feeds, fetches, targets),
                                    BuildOptions.from_config(config, devices), stages)
    return Explanation(stages)


def _fetch_names(graph, fetches) -> tuple[list[str], list[str]]:
    """(tensor names, op names) of a nested fetch structure, each once, in order."""
    from tensorweave.framework.operation import Operation

    names: list[str] = []
    targets: list[str] = []

    def walk(f):
        if isinstance(f, dict):
            for v in f.values():
                walk(v)
        elif isinstance(f, (list, tuple)):
            for v in f:
                walk(v)
        else:
            el = graph.as_graph_element(f)
            out, name = (targets, el.name) if isinstance(el, Operation) else (names, el.name)
            if name not in out:
                out.append(name)

    walk(fetches)
    return names, targets


__all__ = ["Explanation", "Stage", "explain", "explain_ir"]
