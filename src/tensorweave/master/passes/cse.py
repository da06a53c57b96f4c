"""cse: common-subexpression elimination.

`f(a, b) … f(a, b) → one f(a, b)`: two stateless nodes with the same op, inputs (data and
control), attrs and device are one; consumers of the duplicate read the survivor. Constants
merge when their values are equal.
"""

from __future__ import annotations

import numpy as np

from tensorweave import ir
from tensorweave.master.passes import PassContext, register_pass
from tensorweave.master.passes.graph_view import PROTECTED_OPS, GraphView, is_control_flow
from tensorweave.ops.registry import OPS


@register_pass("cse", "f(a, b) twice → once (stateless nodes with equal inputs and attrs)")
def run(view: GraphView, ctx: PassContext) -> None:
    cheap: dict = {}      # (op, data inputs) → names: the full key only on a collision
    seen: dict = {}
    renames: dict[str, str] = {}
    for name, node in list(view.nodes.items()):
        if renames and any(ir.parse_input(i)[0] in renames for i in node.inputs):
            node = view.edit(name)
            node.inputs = _dedupe([_rename(i, renames) for i in node.inputs])
        if name in view.keep:
            continue
        bucket = cheap.setdefault((node.op, tuple(sorted(node.inputs))), [])
        bucket.append(name)
        if len(bucket) == 1:
            continue
        for other in bucket[:-1] if len(bucket) == 2 else []:
            k = _key(view.nodes[other], ctx.placement.get(other, view.nodes[other].device))
            if k is not None:
                seen.setdefault(k, other)
        key = _key(node, ctx.placement.get(name, node.device))
        first = seen.get(key) if key is not None else None
        if key is None:
            continue
        if first is None:
            seen[key] = name
            continue
        renames[name] = first
        view.remove(name)
        ctx.note("cse", f"merged {name} into {first} ({node.op})")


def _rename(inp: str, renames: dict[str, str]) -> str:
    ctl = inp.startswith("^")
    base = inp[1:] if ctl else inp
    node, sep, slot = base.partition(":")
    if node in renames:
        node = renames[node]
    out = node + (sep + slot if sep else "")
    return "^" + out if ctl else out


def _dedupe(inputs: list[str]) -> list[str]:
    out = []
    for i in inputs:
        if not (i.startswith("^") and i in out):
            out.append(i)
    return out


def _key(node, device):
    op_def = OPS.get(node.op)
    if (op_def is None or op_def.stateful or node.op in PROTECTED_OPS
            or is_control_flow(node.op)
            or any(s.is_ref for s in op_def.inputs + op_def.outputs)):
        return None
    try:
        attrs = tuple(sorted((k, _hashable(v)) for k, v in node.attrs.items()))
    except TypeError:
        return None
    data = tuple(i for i in node.inputs if not i.startswith("^"))
    if op_def.is_commutative:
        data = tuple(sorted(data))
    ctl = tuple(sorted(i for i in node.inputs if i.startswith("^")))
    return (node.op, data, ctl, attrs, device)


def _hashable(v):
    if isinstance(v, np.ndarray):
        if v.size > 4096:
            raise TypeError("large constants are not compared")
        return ("nd", v.dtype.str, v.shape, v.tobytes() if v.dtype != object else repr(v.tolist()))
    if isinstance(v, np.generic):
        return ("np", v.dtype.str, v.tobytes())
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    hash(v)
    return v
