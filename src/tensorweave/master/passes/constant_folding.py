"""constant_folding: a node whose inputs are all constants becomes a constant.

`f(Const a, Const b) → Const f(a, b)`, evaluated once with the CPU kernels; also
`Shape/Size/Rank(x) → Const` when x's static shape is fully known. Stateful, control-flow,
random and feed/fetch nodes are never folded, nor results above 10 MiB. A folded node keeps
its name (and its control inputs), so fetches and consumers need no rewiring.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes, ir
from tensorweave.master.passes import PassContext, register_pass
from tensorweave.master.passes.graph_view import PROTECTED_OPS, GraphView, is_control_flow
from tensorweave.ops.registry import OPS

MAX_BYTES = 10 << 20
_NEVER = PROTECTED_OPS | {"Placeholder", "PlaceholderWithDefault", "Const", "NoOp", "Print",
                          "Assert"}
_SHAPE_OPS = {"Shape": np.int32, "Size": np.int32, "Rank": np.int32}


@register_pass("constant_folding", "f(Const…) → Const; Shape(x) → Const when x's shape is known")
def run(view: GraphView, ctx: PassContext) -> None:
    values: dict[str, list] = {}
    controls: dict[str, set[str]] = {}   # control inputs a constant value carries
    for name, node in list(view.nodes.items()):
        if node.op == "Const":
            values[name] = [node.attrs["value"]]
            controls[name] = set(node.control_inputs())
            continue
        out = _fold_shape(view, node) if node.op in _SHAPE_OPS else _fold(view, node, values)
        if out is None:
            continue
        values[name] = out
        # NOTE: the folded constant keeps every control input of what it absorbs, so a
        # constant inside a cond branch still depends on (and dies with) the branch pivot.
        controls[name] = set(node.control_inputs()).union(
            *(controls.get(ir.parse_input(i)[0], set()) for i in node.data_inputs()))
        if node.op in _SHAPE_OPS:
            controls[name] |= {ir.parse_input(node.inputs[0])[0]} if _in_cond(view, node) \
                else set()
        if len(out) == 1 and isinstance(out[0], np.ndarray) and out[0].nbytes <= MAX_BYTES:
            _replace_with_const(view, node, out[0], sorted(controls[name]))
            ctx.note("constant_folding", f"folded {name} ({node.op})")


def _in_cond(view: GraphView, node: ir.NodeDef) -> bool:
    """Shape of a tensor that may be dead: keep a control edge to it (deadness flows)."""
    src = view.producer(node.inputs[0])
    return src is not None and (is_control_flow(src.op) or bool(src.control_inputs()))


def _foldable(node: ir.NodeDef) -> bool:
    op_def = OPS.get(node.op)
    return (op_def is not None and not op_def.stateful and node.op not in _NEVER
            and not is_control_flow(node.op)
            and not any(s.is_ref for s in op_def.inputs) and len(op_def.outputs) >= 1)


def _fold(view: GraphView, node: ir.NodeDef, values) -> list | None:
    if not _foldable(node) or not node.data_inputs():
        return None
    args = []
    for inp in node.data_inputs():
        src, slot, _ = ir.parse_input(inp)
        if src not in values or slot >= len(values[src]):
            return None
        args.append(values[src][slot])
    try:
        return _evaluate(node, args)
    except Exception:  # noqa: BLE001 - a node that fails to fold is left to fail at run time
        return None


def _evaluate(node: ir.NodeDef, args: list) -> list:
    from tensorweave.ops.registry import arg_dtypes, full_attrs
    from tensorweave.runtime.kernels.registry import KernelNode, lookup_kernel

    op_def = OPS.get(node.op)
    attrs = full_attrs(op_def, node.attrs)
    kdef = lookup_kernel(node.op, "CPU")
    if kdef.context:
        raise ValueError("kernels needing a step are not folded")
    out_dts = arg_dtypes(op_def.outputs, attrs)
    fn = kdef.factory(KernelNode(node.name, node.op, attrs,
                                 [dtypes.as_dtype(np.asarray(a).dtype) for a in args],
                                 out_dts, "", None, op_def))
    with np.errstate(all="ignore"):
        out = fn(*args)
    outs = [out] if len(out_dts) == 1 else list(out)
    return [np.asarray(o, dtype=dt.np_dtype) if dt != dtypes.string else np.asarray(o)
            for o, dt in zip(outs, out_dts)]


def _fold_shape(view: GraphView, node: ir.NodeDef) -> list | None:
    src = ir.parse_input(node.inputs[0])
    dims = view.shape(src[0], src[1])
    if dims is None or any(d is None for d in dims):
        return None
    out_t = node.attrs.get("out_type", dtypes.int32)
    np_t = out_t.np_dtype if isinstance(out_t, dtypes.DType) else np.int32
    if node.op == "Shape":
        return [np.asarray(dims, dtype=np_t)]
    if node.op == "Size":
        return [np.asarray(int(np.prod(dims)), dtype=np_t)]
    return [np.asarray(len(dims), dtype=np.int32)]


def _replace_with_const(view: GraphView, node: ir.NodeDef, value: np.ndarray,
                        control_names: list[str]) -> None:
    controls = [f"^{c}" for c in control_names if c in view.nodes]
    value = np.array(value)
    value.flags.writeable = False
    dt = dtypes.as_dtype(value.dtype)
    view.put(ir.NodeDef(node.name, "Const", controls, node.device, {"dtype": dt, "value": value}))
