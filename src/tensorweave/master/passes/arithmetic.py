"""arithmetic: algebraic simplifications that keep values and shapes.

- `x * 1 → x`, `1 * x → x`, `x + 0 → x`, `0 + x → x`, `x - 0 → x`, `x / 1 → x` (the constant
  a scalar of x's dtype, so broadcasting cannot change the shape);
- `-(-x) → x`;
- `Transpose(Transpose(x, p), q) → x` when `p∘q` is the identity, else one Transpose;
- `(x + c1) + c2 → x + (c1 + c2)` for scalar constants.
A rewritten node becomes an Identity of the survivor under its own name (so fetches still
resolve); the dependency pass then removes it.
"""

from __future__ import annotations

import numpy as np

from tensorweave import ir
from tensorweave.master.passes import PassContext, register_pass
from tensorweave.master.passes.graph_view import GraphView

_NEUTRAL = {  # op → (neutral value, sides where the constant may sit: 0 left, 1 right)
    "Mul": (1, (0, 1)), "AddV2": (0, (0, 1)), "Add": (0, (0, 1)), "Sub": (0, (1,)),
    "RealDiv": (1, (1,)), "Div": (1, (1,)),
}
_ADDS = frozenset(["AddV2", "Add"])


@register_pass("arithmetic", "x*1, x+0, x-0, x/1 → x; -(-x) → x; transpose pairs; c1+c2 chains")
def run(view: GraphView, ctx: PassContext) -> None:
    for name in list(view.nodes):
        node = view.nodes.get(name)
        if node is None:
            continue
        rule = _RULES.get(node.op)
        if rule is not None and rule(view, view.edit(name) if _editable(node) else node):
            ctx.note("arithmetic", f"simplified {name} ({node.op})")


def _editable(node: ir.NodeDef) -> bool:
    return node.op in _RULES


def _scalar_const(view: GraphView, inp: str):
    src = view.producer(inp)
    if src is None or src.op != "Const":
        return None
    v = np.asarray(src.attrs["value"])
    return v if v.ndim == 0 else None


def _to_identity(view: GraphView, node: ir.NodeDef, survivor: str) -> None:
    """`node` becomes Identity(survivor), keeping its own control inputs and those of the
    inputs it drops (a constant built inside a control_dependencies block carries them)."""
    controls = [i for i in node.inputs if i.startswith("^")]
    for inp in node.data_inputs():
        src = view.producer(inp)
        if inp != survivor and src is not None:
            controls += [f"^{c}" for c in src.control_inputs() if f"^{c}" not in controls]
    node.op = "Identity"
    node.inputs = [survivor] + controls
    node.attrs = {"T": node.attrs.get("T")}
    view.invalidate()


def _neutral(view: GraphView, node: ir.NodeDef) -> bool:
    value, sides = _NEUTRAL[node.op]
    data = node.data_inputs()
    for side in sides:
        c = _scalar_const(view, data[side])
        if c is not None and c.dtype.kind not in "OSU" and c == value:
            _to_identity(view, node, data[1 - side])
            return True
    return _fold_constant_chain(view, node) if node.op in _ADDS else False


def _fold_constant_chain(view: GraphView, node: ir.NodeDef) -> bool:
    """(x + c1) + c2 → x + c, with c = c1 + c2 (scalars, one consumer of the inner add)."""
    x_in, c2_in = node.data_inputs()
    c2 = _scalar_const(view, c2_in)
    inner = view.producer(x_in)
    if c2 is None or inner is None or inner.op not in _ADDS or \
            len(view.consumers(inner.name)) != 1 or inner.name in view.keep:
        return False
    a, b = inner.data_inputs()
    c1 = _scalar_const(view, b)
    if c1 is not None and inner.control_inputs():
        return False  # keep the inner add: its control inputs order it
    if c1 is None or c1.dtype != c2.dtype:
        return False
    ctl = sorted({f"^{c}" for n in (inner, view.producer(b), view.producer(c2_in))
                  for c in n.control_inputs()})
    const = ir.NodeDef(view.unique(f"{node.name}/folded_c"), "Const", ctl, node.device,
                       {"dtype": node.attrs.get("T"), "value": np.asarray(c1 + c2, c1.dtype)})
    view.add(const, before=node.name)
    node.inputs = [a, const.name] + [i for i in node.inputs if i.startswith("^")]
    view.invalidate()
    return True


def _double_neg(view: GraphView, node: ir.NodeDef) -> bool:
    inner = view.producer(node.inputs[0])
    if inner is None or inner.op != "Neg":
        return False
    _to_identity(view, node, inner.inputs[0])
    return True


def _transposes(view: GraphView, node: ir.NodeDef) -> bool:
    inner = view.producer(node.inputs[0])
    if inner is None or inner.op != "Transpose":
        return False
    p = _const_vector(view, inner.inputs[1])
    q = _const_vector(view, node.inputs[1])
    if p is None or q is None or len(p) != len(q):
        return False
    composed = p[q]
    if np.array_equal(composed, np.arange(len(p))):
        _to_identity(view, node, inner.inputs[0])
        return True
    return False


def _const_vector(view: GraphView, inp: str):
    src = view.producer(inp)
    if src is None or src.op != "Const":
        return None
    return np.asarray(src.attrs["value"]).reshape(-1).astype(np.int64)


_RULES = {op: _neutral for op in _NEUTRAL}
_RULES["Neg"] = _double_neg
_RULES["Transpose"] = _transposes
