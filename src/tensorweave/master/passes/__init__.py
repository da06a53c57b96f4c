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

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

from tensorweave import ir
from tensorweave.master.passes.graph_view import GraphView
from tensorweave.registry import Registry, caller_site


@dataclass
class PassContext:
    """What passes may use: names to keep, where nodes were placed, and the report."""

    keep: set[str] = field(default_factory=set)
    placement: dict[str, str] = field(default_factory=dict)
    disabled: set[str] = field(default_factory=set)
    report: list[tuple[str, str]] = field(default_factory=list)   # (pass, what it did)
    jit_level: int = 0             # OptimizerOptions.global_jit_level (> 0: auto-clustering)

    def note(self, pass_name: str, text: str) -> None:
        self.report.append((pass_name, text))


@dataclass(frozen=True)
class Pass:
    name: str
    run: Callable[[GraphView, PassContext], None]
    algebra: str           # one line: what the pass rewrites


PASSES: Registry[str, Pass] = Registry("Optimization pass")

# The run order of the built-in passes (each is master/passes/<name>.py): the one place it
# is kept. Passes registered by users run after these, in registration order.
ORDER = ("constant_folding", "arithmetic", "cse", "dependency", "mark_for_compilation",
         "remapper")


def register_pass(name: str, algebra: str):
    """Adds a pass to the table. Raises: AlreadyRegisteredError for a name taken."""

    def wrap(fn):
        PASSES.register(name, Pass(name, fn, algebra), caller_site(2))
        return fn

    return wrap


def pass_names() -> list[str]:
    """Every pass in run order."""
    return [n for n in ORDER if n in PASSES] + [n for n in PASSES if n not in ORDER]


def optimize(graph: ir.GraphDef, ctx: PassContext, only: list[str] | None = None,
             stages: list | None = None) -> ir.GraphDef:
    """Runs the enabled passes in order; `stages` (if given) collects (name, graph) after each.

    Raises:
      ValueError: `only` names a pass that does not exist.
    """
    order = list(only) if only else pass_names()
    for name in order:
        if name not in PASSES:
            raise ValueError(f"Unknown optimization pass '{name}'; passes: {pass_names()}")
    for name in order:
        if name in ctx.disabled:
            continue
        view = GraphView(graph, ctx.keep)
        PASSES[name].run(view, ctx)
        graph = view.to_graph()
        if stages is not None:
            stages.append((name, graph))
    return graph


# NOTE: last, so each pass module finds PassContext and register_pass here when it registers.
for _name in ORDER:
    importlib.import_module(f"tensorweave.master.passes.{_name}")
