"""`tf.profiler.profile`: tfprof's model analysis over a graph and (optionally) the step stats
of a `RunMetadata`, in the "scope" view (nodes by name scope) and the "op" view (by op type).

A node's statistics: `parameters` (elements of a variable's value), `float_ops` (TF's flops
formulas for the op types TF registers them for, on fully known static shapes), and
`exec_micros`/`run_count` (from the step stats). Which nodes count is chosen by
`account_type_regexes` (op types, plus `_trainable_variables` and `_variables` for variable
ops, full match), which are shown by the name regexes, `max_depth` and the `min_*`
thresholds; a hidden node's shown descendants move up to its shown ancestor, as in tfprof.
The result is a `ProfileNode` with GraphNodeProto's field names (`total_parameters`,
`total_float_ops`, `children`, ...); the report goes to stdout, a file, or nowhere.
The "graph" and "code" views are not built.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

from tensorweave import errors
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.monitoring.tfprof_flops import float_ops
from tensorweave.monitoring.tfprof_options import ProfileOptionBuilder
from tensorweave.ops.registry import OPS

_STATS = ("parameters", "float_ops", "exec_micros", "run_count")


@dataclass
class ProfileNode:
    """One node of the profile (GraphNodeProto / MultiGraphNodeProto's fields)."""

    name: str
    op_type: str = ""
    parameters: int = 0
    float_ops: int = 0
    exec_micros: int = 0
    run_count: int = 0
    total_parameters: int = 0
    total_float_ops: int = 0
    total_exec_micros: int = 0
    total_run_count: int = 0
    total_definition_count: int = 0
    shapes: list = field(default_factory=list)
    children: list = field(default_factory=list)
    graph_nodes: list = field(default_factory=list)


def _account_types(op, trainable: set) -> list[str]:
    return [op.type, "_trainable_variables"] if op.name in trainable else [op.type]


def _parameters(op) -> int:
    op_def = OPS.get(op.type)
    if op_def is None or not op_def.traits.variable:
        return 0
    shape = op.get_attr("shape") if op.type == "VarHandleOp" else op.outputs[0].shape
    return shape.num_elements() if shape.is_fully_defined() else 0


def _step_times(run_meta) -> dict:
    times: dict = {}
    if run_meta is None:
        return times
    for dev in run_meta.step_stats.dev_stats:
        for ns in dev.node_stats:
            entry = times.setdefault(ns.node_name, [0, 0])
            entry[0] += ns.all_end_rel_micros
            entry[1] += 1
    return times


def _leaves(graph, run_meta, opts) -> list[tuple[ProfileNode, bool]]:
    """(node, accounted) per op of the graph, with its own statistics."""
    trainable = {v.op.name for v in graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)}
    times = _step_times(run_meta)
    accounted = [re.compile(r) for r in opts["account_type_regexes"]]
    out = []
    for op in graph.get_operations():
        micros, runs = times.get(op.name, (0, 0))
        node = ProfileNode(op.name, op.type, parameters=_parameters(op),
                           float_ops=float_ops(op), exec_micros=micros, run_count=runs,
                           shapes=[t.shape for t in op.outputs])
        ok = any(r.fullmatch(t) for r in accounted for t in _account_types(op, trainable))
        out.append((node, ok))
    return out


def _scope_tree(leaves) -> tuple[ProfileNode, dict, dict]:
    """The root, each path's child nodes (a scope with no op of its name gets a node of its
    own, as in tfprof), and whether each path's node is accounted."""
    root = ProfileNode("_TFProfRoot")
    nodes: dict[str, ProfileNode] = {}
    accounted: dict[str, bool] = {}
    for node, ok in leaves:
        nodes[node.name], accounted[node.name] = node, ok
    for name in list(nodes):
        parts = name.split("/")
        for i in range(1, len(parts)):
            path = "/".join(parts[:i])
            if path not in nodes:
                nodes[path], accounted[path] = ProfileNode(path), False
    kids: dict[str, list] = {path: [] for path in nodes}
    kids[root.name] = []
    for path, node in nodes.items():
        parent = path.rpartition("/")[0]
        kids[parent if parent else root.name].append(node)
    return root, kids, accounted


class _Shower:
    """tfprof's two passes: keep what is accounted or holds something accounted, then show
    what passes the name regexes, `max_depth` and the `min_*` thresholds (on the node's own
    statistics), moving a hidden node's shown children up."""

    def __init__(self, opts, accounted):
        self.opts, self.accounted = opts, accounted
        self.show = [re.compile(r) for r in opts["show_name_regexes"]]
        self.hide = [re.compile(r) for r in opts["hide_name_regexes"]]

    def shows(self, node, depth) -> bool:
        o = self.opts
        return (depth <= o["max_depth"] and any(r.fullmatch(node.name) for r in self.show)
                and not any(r.fullmatch(node.name) for r in self.hide)
                and node.parameters >= o["min_params"] and node.float_ops >= o["min_float_ops"]
                and node.exec_micros >= o["min_micros"]
                and node.run_count >= o["min_occurrence"])

    def keep(self, node, kids) -> bool:
        """Prunes `kids[node.name]` to the kept children; zeroes unaccounted own stats;
        fills totals over the kept subtree. Returns whether `node` is kept."""
        kept = [c for c in kids.get(node.name, []) if self.keep(c, kids)]
        kids[node.name] = kept
        if not self.accounted.get(node.name, False):
            for s in _STATS:
                setattr(node, s, 0)
        _sum_totals(node, kept)
        return self.accounted.get(node.name, False) or bool(kept)

    def shown(self, node, kids, depth) -> list:
        """The shown nodes among `node`'s kept descendants, each with its shown children."""
        out = []
        for child in kids.get(node.name, []):
            below = self.shown(child, kids, depth + 1)
            if self.shows(child, depth + 1):
                child.children = below
                out.append(child)
            else:
                out.extend(below)
        return out


def _sum_totals(node, children) -> None:
    for s in _STATS:
        setattr(node, f"total_{s}", getattr(node, s) + sum(getattr(c, f"total_{s}")
                                                           for c in children))


def _displayed_totals(node) -> None:
    """Totals over shown nodes only (account_displayed_op_only)."""
    for child in node.children:
        _displayed_totals(child)
    _sum_totals(node, node.children)


def _definition_counts(node) -> int:
    node.total_definition_count = 1 + sum(_definition_counts(c) for c in node.children)
    return node.total_definition_count


_ORDER = {"name": None, "params": "total_parameters", "float_ops": "total_float_ops",
          "micros": "total_exec_micros", "occurrence": "total_run_count"}


def _order(nodes: list, order_by: str) -> None:
    key = _ORDER.get(order_by)
    nodes.sort(key=lambda n: n.name)
    if key is not None:  # NOTE: largest first; ties stay in name order
        nodes.sort(key=lambda n: -getattr(n, key))
    for n in nodes:
        _order(n.children, order_by)


def _scope_view(leaves, opts) -> ProfileNode:
    root, kids, accounted = _scope_tree(leaves)
    shower = _Shower(opts, accounted)
    shower.keep(root, kids)
    root.children = shower.shown(root, kids, 0)
    if opts["account_displayed_op_only"]:
        _displayed_totals(root)
    _order(root.children, opts["order_by"])
    _definition_counts(root)
    return root


def _op_view(leaves, opts) -> ProfileNode:
    """Op types as tfprof's op view returns them: a chain, each type the only child of the
    one before it (in `order_by` order), its totals summing it and those after it."""
    groups: dict[str, ProfileNode] = {}
    for node, ok in leaves:
        if ok:
            g = groups.setdefault(node.op_type, ProfileNode(node.op_type))
            g.graph_nodes.append(node)
            for s in _STATS:
                setattr(g, s, getattr(g, s) + getattr(node, s))
    shower = _Shower(opts, {})
    chain = [g for g in groups.values() if shower.shows(g, 1)]
    for g in chain:
        _sum_totals(g, [])
    _order(chain, opts["order_by"])
    root = ProfileNode("_TFProfRoot")
    parent = root
    for g in chain:
        parent.children = [g]
        parent = g
    for i in range(len(chain) - 1, -1, -1):
        _sum_totals(chain[i], chain[i].children)
    _sum_totals(root, root.children)
    return root


def _flat(root: ProfileNode, cmd: str) -> list[tuple[ProfileNode, int]]:
    """(node, depth) in report order: the tree for "scope", the chain as a list for "op"."""
    out = []

    def walk(node, depth):
        out.append((node, depth))
        for c in node.children:
            walk(c, depth + (1 if cmd == "scope" or node is root else 0))

    walk(root, 0)
    return out


def _line(node, depth, select) -> str:
    cells = []
    if "params" in select:
        own = "--" if node.name == "_TFProfRoot" else _count(node.parameters)
        cells.append(f"{own}/{_count(node.total_parameters)} params")
    if "float_ops" in select:
        own = "--" if node.name == "_TFProfRoot" else _count(node.float_ops)
        cells.append(f"{own}/{_count(node.total_float_ops)} flops")
    if "micros" in select:
        own = "--" if node.name == "_TFProfRoot" else f"{node.exec_micros}us"
        cells.append(f"{own}/{node.total_exec_micros}us")
    if "occurrence" in select:
        cells.append(f"{node.total_run_count} occurrence")
    return f"{'  ' * depth}{node.name} ({', '.join(cells)})"


def _count(n: int) -> str:
    for unit, size in (("b", 10 ** 9), ("m", 10 ** 6), ("k", 10 ** 3)):
        if n >= size:
            return f"{n / size:.2f}{unit}"
    return str(n)


def report(root: ProfileNode, select, cmd: str = "scope") -> str:
    """The profile as tfprof prints it: one line per shown node, indented by depth."""
    lines = ["", "Profile:", "node name | " + " | ".join(select)]
    lines += [_line(node, depth, select) for node, depth in _flat(root, cmd)]
    return "\n".join(lines) + "\n"


def _emit(text: str, output: str) -> None:
    if output == "none":
        return
    if output == "stdout":
        sys.stdout.write(text)
    elif output.startswith("file:outfile="):
        with open(output.split("=", 1)[1], "w") as f:
            f.write(text)
    else:
        raise ValueError(f"tf.profiler.profile: output {output!r} is not supported "
                         f"(use stdout, none or file:outfile=...)")


def profile(graph=None, run_meta=None, op_log=None, cmd="scope", options=0) -> ProfileNode:
    """Profiles `graph` (default: the default graph); `options` a ProfileOptionBuilder dict
    (0: the trainable parameters). Returns the root node.

    Raises:
      InvalidArgumentError: an unknown `cmd`.
      NotImplementedError: the "graph" or "code" view.
    """
    graph = get_default_graph() if graph is None else graph
    opts = ProfileOptionBuilder.trainable_variables_parameter() if options == 0 else \
        {**ProfileOptionBuilder().build(), **options}
    if cmd in ("graph", "code"):
        raise NotImplementedError(f"tf.profiler.profile: the {cmd!r} view is not built; use "
                                  f"cmd='scope' or cmd='op'")
    if cmd not in ("scope", "op"):
        raise errors.InvalidArgumentError(None, None, f"unknown cmd: {cmd}\n")
    leaves = _leaves(graph, run_meta, opts)
    root = _scope_view(leaves, opts) if cmd == "scope" else _op_view(leaves, opts)
    _emit(report(root, opts["select"], cmd), opts["output"])
    return root


__all__ = ["ProfileNode", "profile", "report"]
