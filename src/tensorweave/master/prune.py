"""Prune: rewrite a graph for one (feeds, fetches, targets) signature and keep what it needs.

Fed tensors become `_Arg` nodes (their consumers read the argument, so whatever computed
them is cut off), fetches become `_Retval` nodes, and a backward walk from the retvals and the
targets keeps only the nodes they need. An unfed placeholder that is still needed is an
error here, before anything runs, and the message shows the chain of ops to the fetch.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from tensorweave import errors, ir
from tensorweave.ops.registry import OPS, arg_dtypes, full_attrs

PLACEHOLDER_OPS = frozenset(["Placeholder", "PlaceholderV2"])


@dataclass
class Pruned:
    """The rewritten graph and the dtype of each fed value, in feed order."""

    graph: ir.GraphDef
    feed_dtypes: list


def output_dtypes(node: ir.NodeDef) -> list:
    op_def = OPS.get(node.op)
    if op_def is None:
        raise errors.NotFoundError(node, None, f"Op type not registered '{node.op}'")
    return arg_dtypes(op_def.outputs, full_attrs(op_def, node.attrs))


def prune(nodes: dict[str, ir.NodeDef], order: list[str], feeds: list[str],
          fetches: list[str], targets: list[str], client_device: str = "") -> Pruned:
    """Returns the pruned, rewritten graph for a signature.

    Args:
      nodes / order: the full graph by name, and node names in creation order.
      feeds / fetches: tensor names (`op:k`); targets: op names.
    Raises:
      InvalidArgumentError: nothing to fetch or run, a tensor fed twice, a bad output index,
        or a needed placeholder that is not fed.
      NotFoundError: a feed, fetch or target names no node.
    """
    if not fetches and not targets:
        raise errors.InvalidArgumentError(None, None,
                                          "Must specify at least one target to fetch or execute.")
    feed_ids = [_endpoint(nodes, f, "Feed") for f in feeds]
    if len(set(feed_ids)) != len(feed_ids):
        raise errors.InvalidArgumentError(None, None, f"Endpoint fed more than once: {feeds}")
    fetch_ids = [_endpoint(nodes, f, "Fetch") for f in fetches]
    for t in targets:
        if t not in nodes:
            raise errors.NotFoundError(None, None, f"Target node '{t}' not found in the graph.")
    new_nodes, feed_dtypes = _rewrite(nodes, feed_ids, fetch_ids, client_device)
    keep, parent = _reachable(new_nodes, [n.name for n in new_nodes.values()
                                         if n.op == "_Retval"] + list(targets))
    _check_placeholders(new_nodes, keep, parent)
    ordered = [new_nodes[n] for n in order if n in keep]
    ordered += [n for n in new_nodes.values() if n.op in ("_Arg", "_Retval") and n.name in keep]
    return Pruned(ir.GraphDef(nodes=ordered), feed_dtypes)


def _endpoint(nodes, name: str, what: str) -> tuple[str, int]:
    node, idx, _ = ir.parse_input(name)
    if node not in nodes:
        raise errors.NotFoundError(None, None, f"{what} '{name}': node '{node}' not found "
                                               "in the graph.")
    n_out = len(output_dtypes(nodes[node]))
    if idx >= n_out:
        raise errors.InvalidArgumentError(
            nodes[node], None, f"{what} '{name}': node '{node}' has only {n_out} outputs"
            + (" (fetch an op with no outputs as a target instead)" if not n_out else ""))
    return node, idx


def _rewrite(nodes, feed_ids, fetch_ids, device):
    """Copies the graph with `_Arg`s replacing fed tensors and `_Retval`s added for fetches."""
    out = dict(nodes)
    renames: dict[str, str] = {}
    feed_dtypes = []
    for i, (node, idx) in enumerate(feed_ids):
        dt = output_dtypes(nodes[node])[idx].base_dtype
        feed_dtypes.append(dt)
        arg = ir.NodeDef(f"_arg_{node}_{idx}_{i}", "_Arg", [], device, {"T": dt, "index": i})
        out[arg.name] = arg
        renames[ir.tensor_name(node, idx)] = arg.name
        if idx == 0:
            renames[f"{node}:0"] = arg.name
    if renames:
        for name, n in nodes.items():
            if any(i in renames for i in n.inputs):
                out[name] = ir.NodeDef(n.name, n.op, [renames.get(i, i) for i in n.inputs],
                                       n.device, n.attrs)
    for i, (node, idx) in enumerate(fetch_ids):
        src = renames.get(ir.tensor_name(node, idx), ir.tensor_name(node, idx))
        dt = output_dtypes(nodes[node])[idx].base_dtype
        ret = ir.NodeDef(f"_retval_{node}_{idx}_{i}", "_Retval", [src], device,
                         {"T": dt, "index": i})
        out[ret.name] = ret
    return out, feed_dtypes


def _reachable(nodes, roots):
    """Names reachable backwards from `roots`, and each one's consumer toward a root."""
    keep: set[str] = set()
    parent: dict[str, str] = {}
    queue = deque(roots)
    keep.update(roots)
    while queue:
        name = queue.popleft()
        for inp in nodes[name].inputs:
            src = ir.parse_input(inp)[0]
            if src not in keep:
                keep.add(src)
                parent[src] = name
                queue.append(src)
    return keep, parent


def _check_placeholders(nodes, keep, parent) -> None:
    for name in sorted(keep):
        n = nodes[name]
        if n.op in PLACEHOLDER_OPS:
            chain = [name]
            while chain[-1] in parent:
                chain.append(parent[chain[-1]])
            path = " -> ".join(_display(nodes[c]) for c in chain)
            shape = n.attrs.get("shape")
            dt = n.attrs.get("dtype")
            raise errors.InvalidArgumentError(
                n, None,
                f"You must feed a value for placeholder tensor '{name}' with dtype "
                f"{getattr(dt, 'name', dt)} and shape {_shape_str(shape)}\n"
                f"  needed by: {path}")


def _display(node) -> str:
    if node.op == "_Retval":
        return "(fetch)"
    return f"{node.name} ({node.op})"


def _shape_str(shape) -> str:
    if shape is None or shape.as_tuple() is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_tuple()) + "]"
