"""dependency: remove Identity and NoOp nodes that only forward, then dead nodes.

`consumer(Identity(x)) → consumer(x)` (the Identity's control inputs move to its consumers);
`^f(a, b) → ^NoOp(^a, ^b)` for a stateless f whose value nobody reads (TF's
DependencyOptimizer does the same: `tf.gradients` gates the gradients of an op's inputs with a
control tuple, so e.g. a first layer's input gradient would be computed only to be waited for);
`^NoOp(^a, ^b) → ^a, ^b`; nodes no fetch or target needs are dropped. Identities that touch
control flow, refs, other devices, or are kept (targets) stay; nothing is turned into a NoOp
in a graph with control flow (deadness).
"""

from __future__ import annotations

from collections import deque

from tensorweave import dtypes, ir
from tensorweave.master.passes import PassContext, register_pass
from tensorweave.master.passes.graph_view import PROTECTED_OPS, GraphView, is_control_flow
from tensorweave.ops.registry import OPS, op_traits

_FORWARDERS = frozenset(["Identity", "Snapshot", "StopGradient", "PreventGradient"])


@register_pass("dependency", "f(Identity(x)) → f(x); ^f(a) → ^NoOp(^a); ^NoOp(^a) → ^a; "
                             "unused nodes removed")
def run(view: GraphView, ctx: PassContext) -> None:
    loops = view.has_control_flow()
    for name in list(view.nodes):
        node = view.nodes.get(name)
        if node is None or name in view.keep:
            continue
        if not loops and _waited_for_only(view, node):
            node = _to_noop(view, node)
            ctx.note("dependency", f"{name}: value never read, made a NoOp")
        if node.op in _FORWARDERS and _removable_identity(view, node, ctx):
            _bypass_identity(view, node)
            ctx.note("dependency", f"removed {node.op} {name}")
        elif node.op == "NoOp" and not node.data_inputs():
            view.replace_control_uses(name, node.control_inputs())
            view.remove(name)
            ctx.note("dependency", f"removed NoOp {name}")
    _drop_dead(view, ctx)


def _waited_for_only(view: GraphView, node: ir.NodeDef) -> bool:
    """A side-effect-free op (TF's IsFreeOfSideEffect: not stateful, no ref or resource
    inputs, not a queue op) whose consumers all take it as a control input only."""
    name, control, tensor = node.name, "^" + node.name, node.name + ":"
    waited = False
    for c in view.consumers(name):   # NOTE: string tests first: most nodes have a data reader
        for i in view.nodes[c].inputs:
            if i == control:
                waited = True
            elif i == name or i.startswith(tensor):
                return False
    if not waited:
        return False
    op_def = OPS.get(node.op)
    return not (op_def is None or op_def.stateful or node.op in PROTECTED_OPS
                or node.op == "NoOp" or is_control_flow(node.op) or "Queue" in node.op
                or any(s.is_ref or s.dtype == dtypes.resource for s in op_def.inputs)
                or any(s.is_ref for s in op_def.outputs))


def _to_noop(view: GraphView, node: ir.NodeDef) -> ir.NodeDef:
    """The NoOp that replaces `node`: it waits for everything `node` read or waited for."""
    controls: list[str] = []
    for i in node.inputs:
        c = "^" + ir.parse_input(i)[0]
        if c not in controls:
            controls.append(c)
    noop = ir.NodeDef(name=node.name, op="NoOp", inputs=controls, device=node.device)
    view.put(noop)
    return noop


def _removable_identity(view: GraphView, node: ir.NodeDef, ctx: PassContext) -> bool:
    src = view.producer(node.inputs[0])
    if src is None or is_control_flow(src.op) or op_traits(src.op).variable:
        return False
    dev = ctx.placement.get(node.name, node.device)
    if ctx.placement.get(src.name, src.device) != dev:
        return False
    for c in view.consumers(node.name):
        cn = view.nodes[c]
        if is_control_flow(cn.op) or ctx.placement.get(c, cn.device) != dev:
            return False
    return True


def _bypass_identity(view: GraphView, node: ir.NodeDef) -> None:
    consumers = list(view.consumers(node.name))
    view.replace_uses(node.name, node.inputs[0])
    controls = node.control_inputs()
    for c in consumers:
        cn = view.edit(c)
        cn.inputs = [i for i in cn.inputs if i != f"^{node.name}"]
        cn.inputs += [f"^{x}" for x in controls if f"^{x}" not in cn.inputs]
    view.remove(node.name)


def _drop_dead(view: GraphView, ctx: PassContext) -> None:
    roots = [n for n, node in view.nodes.items() if node.op == "_Retval" or n in view.keep]
    live: set[str] = set(roots)
    queue = deque(roots)
    while queue:
        for inp in view.nodes[queue.popleft()].inputs:
            src = ir.parse_input(inp)[0]
            if src not in live and src in view.nodes:
                live.add(src)
                queue.append(src)
    for name in [n for n in view.nodes if n not in live]:
        view.remove(name)
        ctx.note("dependency", f"dropped unused {name}")
