"""remapper: fuse patterns into single kernels (TF's remapper names).

- `Relu(BiasAdd(MatMul(a, b), c)) → _FusedMatMul(a, b, c; fused_ops=[BiasAdd, Relu])`
  (and without the Relu); likewise `Conv2D + BiasAdd (+ Relu) → _FusedConv2D`;
- `FusedBatchNorm(Conv2D(x, W), …, is_training=false)` with constant W and statistics
  → `_FusedConv2D(x, W·s, offset − mean·s; fused_ops=[BiasAdd])`, s = scale/√(var+ε);
- a chain of ≥ 2 elementwise unary float ops, each read once → `_TwFusedElementwise`
  (one kernel, in-place after the first op);
- `ReluGrad(MaxPoolGrad(x, y, g), x) → _TwFusedMaxPoolGradReluGrad(x, y, g)` (the gradient
  through MaxPool(Relu(…)): one pass instead of two over the pooled input's size).
Intermediate results must have exactly one consumer, on the same device, and not be kept.
"""

from __future__ import annotations

import numpy as np

from tensorweave import ir
from tensorweave.master.passes import PassContext, register_pass
from tensorweave.master.passes.graph_view import GraphView
from tensorweave.ops.registry import OPS
from tensorweave.runtime.kernels.cpu.fused import FUSIBLE_UNARY
from tensorweave.runtime.kernels.xla.backend import is_compiled_device

_ACTIVATIONS = frozenset(["Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"])
_BASES = {"MatMul": "_FusedMatMul", "Conv2D": "_FusedConv2D"}
_BN = frozenset(["FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"])


@register_pass("remapper", "MatMul/Conv2D+BiasAdd(+act) → fused; BN folded into Conv2D; "
                           "elementwise chains → one kernel; MaxPoolGrad+ReluGrad → one kernel")
def run(view: GraphView, ctx: PassContext) -> None:
    for name in list(view.nodes):
        node = view.nodes.get(name)
        if node is None or _on_xla(ctx, node):
            continue  # NOTE: an XLA device compiles its partition whole: XLA fuses there
        if node.op in _BN and _fold_batch_norm(view, node, ctx):
            ctx.note("remapper", f"folded batch norm {name} into its Conv2D")
        elif node.op == "BiasAdd" or node.op in _ACTIVATIONS:
            fused = _fuse_bias_activation(view, node, ctx)
            if fused:
                ctx.note("remapper", f"fused {fused} into {name}")
        elif node.op == "ReluGrad" and _fuse_pool_grad_relu_grad(view, node, ctx):
            ctx.note("remapper", f"fused MaxPoolGrad + ReluGrad into {name}")
    _fuse_elementwise_chains(view, ctx)


def _on_xla(ctx: PassContext, node: ir.NodeDef) -> bool:
    return is_compiled_device(ctx.placement.get(node.name, node.device or ""))


def _single_use(view: GraphView, name: str, ctx: PassContext, device: str) -> bool:
    return (len(view.consumers(name)) == 1 and name not in view.keep
            and ctx.placement.get(name, view.nodes[name].device) == device)


def _fuse_bias_activation(view: GraphView, node: ir.NodeDef, ctx) -> str | None:
    """Rewrites `node` (a BiasAdd, or an activation over a BiasAdd) into a fused op."""
    dev = ctx.placement.get(node.name, node.device)
    act, bias = (None, node) if node.op == "BiasAdd" else (node, view.producer(node.inputs[0]))
    if bias is None or bias.op != "BiasAdd" or bias.attrs.get("data_format", "NHWC") != "NHWC":
        return None
    if act is not None and not _single_use(view, bias.name, ctx, dev):
        return None
    if act is None and any(view.nodes[c].op in _ACTIVATIONS for c in view.consumers(node.name)):
        return None  # the activation will absorb this BiasAdd
    base = view.producer(bias.inputs[0])
    if base is None or base.op not in _BASES or not _single_use(view, base.name, ctx, dev):
        return None
    ops = ["BiasAdd"] + ([act.op] if act is not None else [])
    _rewrite(view, node, base, [bias.inputs[1]], ops, act)
    removed = [base.name] + ([bias.name] if act is not None else [])
    for r in removed:
        view.remove(r)
    return " + ".join([base.op] + ops)


def _rewrite(view, node, base, args, ops, act) -> None:
    declared = OPS.lookup(_BASES[base.op]).attrs  # NOTE: MatMul's grad_a/grad_b stay behind
    attrs = {k: v for k, v in base.attrs.items() if k in declared or k.startswith("_")}
    attrs.update(num_args=len(args), fused_ops=ops, epsilon=0.0001,
                 leakyrelu_alpha=float((act.attrs.get("alpha", 0.2)) if act else 0.2))
    controls = [i for n in (base, node) for i in n.inputs if i.startswith("^")]
    view.put(ir.NodeDef(node.name, _BASES[base.op], base.data_inputs()[:2] + args + controls,
                        node.device, attrs))


def _fuse_pool_grad_relu_grad(view: GraphView, node: ir.NodeDef, ctx) -> bool:
    """ReluGrad(g, x) over g = MaxPoolGrad(x, y, dy) (read once) → one fused node."""
    grad = view.producer(node.inputs[0])
    if grad is None or grad.op != "MaxPoolGrad" or len(node.data_inputs()) != 2 or \
            ir.parse_input(node.inputs[1])[:2] != ir.parse_input(grad.inputs[0])[:2] or \
            not _float(node) or \
            not _single_use(view, grad.name, ctx, ctx.placement.get(node.name, node.device)):
        return False
    attrs = {k: v for k, v in grad.attrs.items()
             if k in OPS.lookup("_TwFusedMaxPoolGradReluGrad").attrs or k.startswith("_")}
    controls = [i for n in (grad, node) for i in n.inputs if i.startswith("^")]
    view.put(ir.NodeDef(node.name, "_TwFusedMaxPoolGradReluGrad",
                        grad.data_inputs() + controls, node.device, attrs))
    view.remove(grad.name)
    return True


def _fold_batch_norm(view: GraphView, bn: ir.NodeDef, ctx) -> bool:
    if bn.attrs.get("is_training", True) or bn.attrs.get("data_format", "NHWC") != "NHWC":
        return False
    if any(ir.parse_input(i)[1] != 0 for c in view.consumers(bn.name)
           for i in view.nodes[c].inputs if ir.parse_input(i)[0] == bn.name):
        return False  # the statistics outputs are used
    conv = view.producer(bn.inputs[0])
    dev = ctx.placement.get(bn.name, bn.device)
    if conv is None or conv.op != "Conv2D" or not _single_use(view, conv.name, ctx, dev):
        return False
    consts = [_const(view, i) for i in [conv.inputs[1]] + bn.data_inputs()[1:5]]
    if any(c is None for c in consts):
        return False
    w, scale, offset, mean, var = consts
    s = scale / np.sqrt(var + bn.attrs.get("epsilon", 0.0001))
    w2 = (w * s).astype(w.dtype)
    b2 = (offset - mean * s).astype(w.dtype)
    w_node = _add_const(view, f"{bn.name}/folded_filter", w2, bn.device, bn.name)
    b_node = _add_const(view, f"{bn.name}/folded_bias", b2, bn.device, bn.name)
    base = ir.NodeDef(conv.name, "Conv2D", [conv.inputs[0], w_node], conv.device, conv.attrs)
    _rewrite(view, bn, base, [b_node], ["BiasAdd"], None)
    view.remove(conv.name)
    return True


def _const(view: GraphView, inp: str):
    src = view.producer(inp)
    if src is None or src.op != "Const" or ir.parse_input(inp)[1] != 0:
        return None
    return np.asarray(src.attrs["value"])


def _add_const(view, name, value, device, before) -> str:
    name = view.unique(name)
    value = np.array(value)
    value.flags.writeable = False
    from tensorweave import dtypes

    view.add(ir.NodeDef(name, "Const", [], device,
                        {"dtype": dtypes.as_dtype(value.dtype), "value": value}), before=before)
    return name


def _fuse_elementwise_chains(view: GraphView, ctx) -> None:
    for name in reversed(list(view.nodes)):  # last node first: each chain fuses whole
        node = view.nodes.get(name)
        if node is None or node.op not in FUSIBLE_UNARY or not _float(node) or \
                _on_xla(ctx, node):
            continue
        chain = [node]
        while True:
            prev = view.producer(chain[0].inputs[0])
            if prev is None or prev.op not in FUSIBLE_UNARY or not _float(prev) or \
                    any(i.startswith("^") for i in prev.inputs) or \
                    not _single_use(view, prev.name, ctx, ctx.placement.get(name, node.device)):
                break
            chain.insert(0, prev)
        if len(chain) < 2:
            continue
        controls = [i for i in node.inputs if i.startswith("^")]
        view.put(ir.NodeDef(name, "_TwFusedElementwise", [chain[0].inputs[0]] + controls,
                            node.device, {"T": node.attrs["T"], "ops": [n.op for n in chain]}))
        for n in chain[:-1]:
            view.remove(n.name)
        ctx.note("remapper", f"fused {len(chain)} elementwise ops into {name}")


def _float(node: ir.NodeDef) -> bool:
    t = node.attrs.get("T")
    return t is not None and getattr(t, "is_floating", False) and t.name != "bfloat16"
