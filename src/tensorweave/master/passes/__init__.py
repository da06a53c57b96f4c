"""Graph optimization passes: an ordered table of named graph → graph rewrites.

Each pass is a pure function `run(view: GraphView, ctx: PassContext) -> None` that edits a
copy of the pruned graph and notes what it did in `ctx.report`. Passes are switched off by
name (`PassContext.disabled`), from the session config (parsed in master/options.py):
- TF's toggles: `graph_options.rewrite_options.<constant_folding | arithmetic_optimization |
  dependency_optimization | remapping | common_subgraph_elimination> = OFF`, and
  `graph_options.optimizer_options.opt_level = L0` (no folding, no CSE);
- `graph_options.rewrite_options.optimizers = [...]`: run exactly these, in this order;
- a dict config's `"disabled_passes": [...]`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tensorweave import ir
from tensorweave.master.passes.graph_view import GraphView


@dataclass
class PassContext:
    """What passes may use: names to keep, where nodes were placed, and the report."""

    keep: set[str] = field(default_factory=set)
    placement: dict[str, str] = field(default_factory=dict)
    disabled: set[str] = field(default_factory=set)
    report: list[tuple[str, str]] = field(default_factory=list)   # (pass, what it did)

    def note(self, pass_name: str, text: str) -> None:
        self.report.append((pass_name, text))


@dataclass(frozen=True)
class Pass:
    name: str
    run: Callable[[GraphView, PassContext], None]
    algebra: str           # one line: what the pass rewrites


PASSES: list[Pass] = []


def register_pass(name: str, algebra: str):
    """Appends a pass to the ordered table (registration order is run order)."""

    def wrap(fn):
        if any(p.name == name for p in PASSES):
            raise ValueError(f"pass '{name}' already registered")
        PASSES.append(Pass(name, fn, algebra))
        return fn

    return wrap


def pass_names() -> list[str]:
    _load()
    return [p.name for p in PASSES]


def optimize(graph: ir.GraphDef, ctx: PassContext, only: list[str] | None = None,
             stages: list | None = None) -> ir.GraphDef:
    """Runs the enabled passes in order; `stages` (if given) collects (name, graph) after each.

    Raises:
      ValueError: `only` names a pass that does not exist.
    """
    _load()
    table = {p.name: p for p in PASSES}
    order = only if only else [p.name for p in PASSES]
    for name in order:
        if name not in table:
            raise ValueError(f"Unknown optimization pass '{name}'; passes: {list(table)}")
    for name in order:
        if name in ctx.disabled:
            continue
        view = GraphView(graph, ctx.keep)
        table[name].run(view, ctx)
        graph = view.to_graph()
        if stages is not None:
            stages.append((name, graph))
    return graph


ORDER = ["constant_folding", "arithmetic", "cse", "dependency", "remapper"]


def _load() -> None:
    from tensorweave.master.passes import (  # noqa: F401  (importing registers them)
        arithmetic,
        constant_folding,
        cse,
        dependency,
        remapper,
    )

    PASSES.sort(key=lambda p: ORDER.index(p.name) if p.name in ORDER else len(ORDER))
