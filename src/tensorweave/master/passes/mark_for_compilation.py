"""mark_for_compilation: XLA clusters on the CPU devices, each run as one compiled `XlaLaunch`.

TF's MarkForCompilationPass, EncapsulateSubgraphsPass and BuildXlaOpsPass in one pass:
`connected compilable ops → XlaLaunch(args; function=cluster_k)`, the cluster's nodes kept as
the FunctionDef `cluster_k` in the graph's library (so a GraphDef stays readable).

Which nodes (`_compilable`): on a CPU device, with an XLA_CPU lowering, stateless, not control
flow, no ref/resource/variant/string tensors in or out, not a target. They take part when
`global_jit_level` is ON_1/ON_2 (auto-clustering) or their `_XlaCompile` attr is true
(`tf.xla.experimental.jit_scope`); `_XlaCompile=False` keeps a node out. Without jax the pass
changes nothing (one log line says why when auto-clustering was asked for).

How clusters grow (TF's rule): along data edges, in topological order, between nodes of the
same device, while frame and deadness (the Switch predicates a node's liveness depends on),
and not across different `_XlaScope`s when auto-clustering is off; an edge is contracted only
when no other path joins its ends, so contracting a cluster never creates a cycle
(`graph_cycles.py`). Constant inputs are copied into the cluster's function.

When a cluster is compiled (`worth_compiling`, the cost rule): always when a member was
marked `_XlaCompile=True` (the user asked, as in TF). Auto-clusters are modelled against our
executor: compiling is faster when the per-op work it removes exceeds what a compiled call
costs,

    Σ_members (OP_US + BYTE_NS · out_bytes / 1000)  >  LAUNCH_US + ARG_US · (inputs + outputs)

where members are the nodes that compute (GEMMs count zero: the same BLAS-class loop runs
either way), OP_US is our per-node dispatch plus a numpy temporary, `out_bytes` the node's
statically known output size (unknown dimensions count 1, so the model errs towards not
compiling), BYTE_NS the memory pass XLA's fusion saves per byte, and LAUNCH_US/ARG_US a
jitted call's fixed and per-argument cost (measured here with jax 0.10 on CPU: ~35 µs for a
2-in/2-out call, ~1.5 µs per further array). Convolutions (traits compute_class POOL) never
join an auto-cluster: XLA:CPU's convolutions run several times slower than our im2col + GEMM
kernels (the CNN step: XLA 69 ms, ours and TF's 11–16 ms); the pooling ops
(SLOW_ON_XLA_CPU) stay out with them.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field

from tensorweave import dtypes, ir
from tensorweave.master.passes import PassContext, register_pass
from tensorweave.master.passes.graph_cycles import GraphCycles
from tensorweave.master.passes.graph_view import GraphView
from tensorweave.master.prune import output_dtypes
from tensorweave.ops.registry import OPS, op_traits
from tensorweave.ops.traits import GEMM, POOL
from tensorweave.runtime.device import DeviceSpec
from tensorweave.runtime.kernels.registry import has_kernel

_LOG = logging.getLogger("tensorweave")

LAUNCH_US = 35.0      # a jitted call with numpy arguments, 2 in / 2 out
ARG_US = 1.5          # each further argument or result
OP_US = 2.0           # one node in our executor: dispatch plus a numpy temporary
BYTE_NS = 0.25        # one fused-away memory pass, per byte of the node's output
FREE_OPS = frozenset(["Identity", "Shape", "Size", "Rank", "NoOp", "StopGradient",
                      "PreventGradient", "Snapshot", "Reshape", "ExpandDims", "Squeeze"])
# Window ops XLA:CPU runs as generic loops (reduce_window, select_and_scatter): kept out of
# auto-clusters with the convolutions (compute_class POOL).
SLOW_ON_XLA_CPU = frozenset(["DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                             "DepthwiseConv2dNativeBackpropFilter", "MaxPool", "AvgPool",
                             "MaxPoolGrad", "AvgPoolGrad", "MaxPoolV2", "Conv3D"])
_BAD_DTYPES = frozenset(["resource", "variant", "string"])
_BACK_EDGE_OPS = frozenset(["NextIteration", "RefNextIteration"])


@dataclass
class Cluster:
    """A set of nodes to compile together (names in topological order)."""

    members: list[str] = field(default_factory=list)
    explicit: bool = False     # a member has _XlaCompile=True


@register_pass("mark_for_compilation",
               "connected compilable ops → XlaLaunch(args; function=cluster_k) where the "
               "cost rule says compiling is faster (global_jit_level, jit_scope)")
def run(view: GraphView, ctx: PassContext) -> None:
    if not _wanted(view, ctx):
        return
    if not _xla_available():
        _log_unavailable(ctx.jit_level)
        return
    order = _topological(view)
    clusters = _clusters(view, ctx, order)
    for cluster in clusters:
        ops = _op_summary(view, cluster)
        unfolded = _unfoldable(view, cluster)
        compile_it, why = worth_compiling(view, cluster)
        if unfolded:
            compile_it, why = False, f"{unfolded} would need a value known only at run time"
        if not compile_it:
            ctx.note("mark_for_compilation",
                     f"left {len(cluster.members)} ops uncompiled ({why}): {ops}")
            continue
        name = encapsulate(view, cluster)
        ctx.note("mark_for_compilation",
                 f"{name}: {len(cluster.members)} ops → XlaLaunch ({why}): {ops}")


def _wanted(view: GraphView, ctx: PassContext) -> bool:
    return ctx.jit_level > 0 or any(n.attrs.get("_XlaCompile") is True
                                    for n in view.nodes.values())


def _xla_available() -> bool:
    from tensorweave.runtime.kernels.xla.backend import available

    if not (available() and has_kernel("XlaLaunch", "CPU")):
        return False
    from tensorweave.runtime.xla_cluster import ensure_trace_time_kernels

    ensure_trace_time_kernels()
    return True


@functools.cache
def _log_unavailable(level: int) -> None:
    if level > 0:
        _LOG.info("global_jit_level=%s asks for XLA auto-clustering, but XLA is not available "
                  "(jax is not installed: pip install tensorweave[xla]); the graph runs "
                  "unclustered", level)


# -- which nodes ------------------------------------------------------------------------------
def _compilable(view: GraphView, node: ir.NodeDef, ctx: PassContext, static: set[str]) -> bool:
    flag = node.attrs.get("_XlaCompile")
    if flag is False or (flag is not True and ctx.jit_level <= 0):
        return False
    op_def = OPS.get(node.op)
    traits = op_traits(node.op)
    if op_def is None or op_def.is_stateful or traits.control_flow or traits.variable or \
            node.op == "Const" or node.name in view.keep:
        return False
    if flag is not True and (traits.compute_class == POOL or node.op in SLOW_ON_XLA_CPU):
        return False   # NOTE: XLA:CPU convolutions are slow (module docstring)
    if not _on_cpu(node.device) or not has_kernel(node.op, "XLA_CPU"):
        return False
    if node.op in _trace_time_ops() and node.name not in static:
        return False
    return _plain_dtypes(view, node)


def _trace_time_ops() -> tuple[str, ...]:
    from tensorweave.runtime.xla_cluster import TRACE_TIME_OPS

    return TRACE_TIME_OPS


def _static_nodes(view: GraphView, order: list[str]) -> set[str]:
    """Nodes whose values follow from shapes and constants alone (known at trace time)."""
    static: set[str] = set()
    for name in order:
        n = view.nodes[name]
        op_def = OPS.get(n.op)
        data = [ir.parse_input(i)[0] for i in n.data_inputs()]
        if n.op == "Const" or op_traits(n.op).metadata_only or \
                (data and op_def is not None and not op_def.is_stateful and
                 not op_traits(n.op).control_flow and all(d in static for d in data)):
            static.add(name)
    return static


def _unfoldable(view: GraphView, cluster: Cluster) -> str | None:
    """A member computed at trace time whose inputs are not all static inside the cluster
    (its shape inputs come from another cluster), or None."""
    members = set(cluster.members)
    static: set[str] = set()
    for m in cluster.members:
        n = view.nodes[m]
        srcs = [ir.parse_input(i)[0] for i in n.data_inputs()]
        if op_traits(n.op).metadata_only or all(
                s in static or (s not in members and _copyable_const(view, s)) for s in srcs):
            static.add(m)
        elif n.op in _trace_time_ops():
            return f"{m} ({n.op})"
    return None


def _on_cpu(device: str) -> bool:
    return (DeviceSpec.from_string(device).device_type or "CPU") == "CPU"


def _plain_dtypes(view: GraphView, node: ir.NodeDef) -> bool:
    try:
        outs = output_dtypes(node)
        ins = [_input_dtype(view, i) for i in node.data_inputs()]
    except Exception:  # noqa: BLE001 - a node we cannot type stays out of clusters
        return False
    return all(d is not None and not d.is_ref_dtype and d.base_dtype.name not in _BAD_DTYPES
               for d in outs + ins)


def _input_dtype(view: GraphView, inp: str):
    src, slot, _ = ir.parse_input(inp)
    producer = view.nodes.get(src)
    return output_dtypes(producer)[slot] if producer is not None else None


# -- frames and deadness ----------------------------------------------------------------------
def _topological(view: GraphView) -> list[str]:
    """Node names in a topological order (NextIteration back edges ignored), stable."""
    names = list(view.nodes)
    indeg = dict.fromkeys(names, 0)
    out: dict[str, list[str]] = {}
    for node in view.nodes.values():
        for i in node.inputs:
            src = ir.parse_input(i)[0]
            if src in view.nodes and view.nodes[src].op not in _BACK_EDGE_OPS:
                indeg[node.name] += 1
                out.setdefault(src, []).append(node.name)
    ready = [n for n in names if indeg[n] == 0]
    ready.reverse()
    order = []
    while ready:
        n = ready.pop()
        order.append(n)
        for c in reversed(out.get(n, [])):
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    return order + [n for n in names if indeg[n] > 0]


def _contexts(view: GraphView, order: list[str]) -> dict[str, tuple]:
    """{node: (frame path, predicate set)}: nodes may share a cluster only with equal ones.

    A frame path grows at an Enter (its frame_name) and shrinks at an Exit. The predicate set
    holds (predicate tensor, branch) for each Switch a node sits behind; a Merge keeps what
    its inputs share when they differ in one predicate's branches (a cond), drops its
    NextIteration input (a loop), and otherwise gets a token of its own (conservative)."""
    frames: dict[str, tuple] = {}
    preds: dict[str, frozenset] = {}
    for name in order:
        n = view.nodes[name]
        srcs = [ir.parse_input(i) for i in n.inputs if ir.parse_input(i)[0] in view.nodes]
        frames[name] = _frame_of(view, n, srcs, frames)
        preds[name] = _pred_of(view, n, srcs, preds)
    return {n: (frames[n], preds[n]) for n in order}


def _frame_of(view, n, srcs, frames) -> tuple:
    inner = [frames[s] for s, _, _ in srcs if s in frames]
    base = inner[0] if inner else ()
    if n.op in ("Enter", "RefEnter"):
        return base + (n.attrs.get("frame_name", ""),)
    if n.op in ("Exit", "RefExit"):
        return base[:-1]
    return base


def _tensor_pred(view, preds, src: str, slot: int) -> frozenset:
    p = preds.get(src, frozenset())
    node = view.nodes[src]
    if node.op in ("Switch", "RefSwitch"):
        p = p | {(_canonical(node.inputs[1]), slot)}
    return p


def _canonical(inp: str) -> str:
    src, slot, _ = ir.parse_input(inp)
    return ir.tensor_name(src, slot)


def _pred_of(view, n, srcs, preds) -> frozenset:
    if n.op in ("Merge", "RefMerge"):
        ins = [_tensor_pred(view, preds, s, k) for s, k, ctl in srcs if not ctl
               and view.nodes[s].op not in _BACK_EDGE_OPS and s in preds]
        return _merge_pred(n.name, ins)
    out: frozenset = frozenset()
    for s, k, ctl in srcs:
        if s in preds:
            out = out | (preds[s] if ctl else _tensor_pred(view, preds, s, k))
    return out


def _merge_pred(name: str, ins: list[frozenset]) -> frozenset:
    if not ins:
        return frozenset({("merge", name)})
    common = frozenset.intersection(*ins)
    rest = [p - common for p in ins]
    keys = {k for r in rest for k, _ in r}
    if all(len(r) <= 1 for r in rest) and len(keys) <= 1:
        return common
    return common | {("merge", name)}


# -- clustering -------------------------------------------------------------------------------
def _clusters(view: GraphView, ctx: PassContext, order: list[str]) -> list[Cluster]:
    """The clusters of two or more compilable nodes, each a connected acyclic contraction."""
    index = {n: i for i, n in enumerate(order)}
    cycles = GraphCycles(len(order))
    for name in order:
        for i in view.nodes[name].inputs:
            src = ir.parse_input(i)[0]
            if src in index and index[src] < index[name]:
                cycles.add_edge(index[src], index[name])
    static = _static_nodes(view, order)
    ok = {n for n in order if _compilable(view, view.nodes[n], ctx, static)}
    contexts = _contexts(view, order)
    rep = {n: n for n in ok}

    def find(x):
        while rep[x] != x:
            rep[x] = rep[rep[x]]
            x = rep[x]
        return x

    for name in order:
        if name not in ok:
            continue
        for i in view.nodes[name].data_inputs():
            src = ir.parse_input(i)[0]
            if src in ok and _joinable(view, ctx, contexts, src, name):
                a, b = find(src), find(name)
                if a != b and cycles.contract(index[a], index[b]):
                    rep[b] = a
    groups: dict[str, list[str]] = {}
    for name in order:
        if name in ok:
            groups.setdefault(find(name), []).append(name)
    return [Cluster(m, any(view.nodes[x].attrs.get("_XlaCompile") is True for x in m))
            for m in groups.values() if len(m) >= 2]


def _joinable(view, ctx, contexts, a: str, b: str) -> bool:
    na, nb = view.nodes[a], view.nodes[b]
    if na.device != nb.device or contexts[a] != contexts[b]:
        return False
    sa, sb = na.attrs.get("_XlaScope"), nb.attrs.get("_XlaScope")
    # NOTE: as TF, user scopes separate clusters only when auto-clustering is off
    return ctx.jit_level > 0 or sa is None or sb is None or sa == sb


# -- the cost rule ----------------------------------------------------------------------------
def worth_compiling(view: GraphView, cluster: Cluster) -> tuple[bool, str]:
    """(compile?, why): the module docstring's rule."""
    if cluster.explicit:
        return True, "requested by _XlaCompile"
    members = set(cluster.members)
    saved = sum(_op_us(view, view.nodes[m]) for m in cluster.members)
    n_in = len(_external_inputs(view, cluster))
    n_out = len(_external_outputs(view, members))
    cost = LAUNCH_US + ARG_US * max(0, n_in + n_out - 4)
    verdict = saved > cost
    return verdict, f"model: saves {saved:.0f} µs of op work, a call costs {cost:.0f} µs"


def _op_us(view: GraphView, node: ir.NodeDef) -> float:
    if node.op in FREE_OPS or op_traits(node.op).compute_class == GEMM:
        return 0.0
    return OP_US + BYTE_NS * _known_bytes(view, node) / 1000.0


def _known_bytes(view: GraphView, node: ir.NodeDef) -> int:
    shape = view.shape(node.name)
    if shape is None:
        return 0
    try:
        size = output_dtypes(node)[0].size
    except Exception:  # noqa: BLE001 - an untyped output counts nothing
        return 0
    elems = 1
    for d in shape:
        elems *= d if isinstance(d, int) and d > 0 else 1
    return elems * size


def _op_summary(view: GraphView, cluster: Cluster) -> str:
    counts: dict[str, int] = {}
    for m in cluster.members:
        op = view.nodes[m].op
        counts[op] = counts.get(op, 0) + 1
    return ", ".join(f"{op}×{k}" if k > 1 else op for op, k in sorted(counts.items()))


# -- encapsulation ----------------------------------------------------------------------------
def _external_inputs(view: GraphView, cluster: Cluster) -> list[str]:
    """Tensors from outside the cluster that its members read, first-seen order (constants,
    which are copied in, excluded)."""
    members = set(cluster.members)
    out: dict[str, None] = {}
    for m in cluster.members:
        for i in view.nodes[m].data_inputs():
            src, slot, _ = ir.parse_input(i)
            if src not in members and not _copyable_const(view, src):
                out[ir.tensor_name(src, slot)] = None
    return list(out)


def _copyable_const(view: GraphView, name: str) -> bool:
    n = view.nodes.get(name)
    return n is not None and n.op == "Const" and not n.data_inputs() and \
        n.attrs.get("dtype") is not None and n.attrs["dtype"].name not in _BAD_DTYPES


def _external_outputs(view: GraphView, members: set[str]) -> list[str]:
    """Member tensors read by data inputs outside the cluster, first-seen order."""
    out: dict[str, None] = {}
    for n in view.nodes.values():
        if n.name in members:
            continue
        for i in n.data_inputs():
            src, slot, _ = ir.parse_input(i)
            if src in members:
                out[ir.tensor_name(src, slot)] = None
    return list(out)


def encapsulate(view: GraphView, cluster: Cluster) -> str:
    """Replaces the cluster by one `XlaLaunch` node and adds its FunctionDef to the library;
    returns the node's name (also the function's)."""
    members = set(cluster.members)
    args = _external_inputs(view, cluster)
    results = _external_outputs(view, members)
    name = _unique_function_name(view)
    consts, controls = _constants_and_controls(view, cluster)
    fdef = _function(view, name, cluster, args, results, consts)
    arg_types = [_tensor_dtype(view, t) for t in args]
    res_types = [_tensor_dtype(view, t) for t in results]
    device = view.nodes[cluster.members[0]].device
    launch = ir.NodeDef(name, "XlaLaunch", args + [f"^{c}" for c in controls], device, {
        "Tconstants": [], "Targs": arg_types, "Nresources": 0, "Tresults": res_types,
        "function": ir.NameAttrList(name)})
    view.graph = _with_function(view.graph, fdef)
    view.add(launch, before=cluster.members[0])
    for j, t in enumerate(results):
        view.replace_uses(t, f"{name}:{j}" if j else name)
    for m in cluster.members:
        view.replace_control_uses(m, [name])
    for m in cluster.members:
        view.remove(m)
    _drop_unused_constants(view, consts)
    return name


def _unique_function_name(view: GraphView) -> str:
    taken = {f.name for f in view.graph.library} | set(view.nodes)
    k = 0
    while f"cluster_{k}" in taken:
        k += 1
    return f"cluster_{k}"


def _constants_and_controls(view, cluster: Cluster) -> tuple[list[str], list[str]]:
    """(constants copied in, control inputs of the launch: the members' and those
    constants' control inputs from outside)."""
    members = set(cluster.members)
    consts: dict[str, None] = {}
    controls: dict[str, None] = {}
    for m in cluster.members:
        node = view.nodes[m]
        for i in node.data_inputs():
            src = ir.parse_input(i)[0]
            if src not in members and _copyable_const(view, src):
                consts[src] = None
        for c in node.control_inputs():
            if c not in members:
                controls[c] = None
    for c in consts:
        for cc in view.nodes[c].control_inputs():
            controls[cc] = None
    return list(consts), list(controls)


def _function(view, name, cluster, args, results, consts) -> ir.FunctionDef:
    """The cluster as a graph function: `_Arg`s, the copied constants, the members (internal
    control edges dropped: the members are pure), `_Retval`s."""
    members = set(cluster.members)
    remap = {t: f"_arg_{k}" for k, t in enumerate(args)}
    nodes = [ir.NodeDef(f"_arg_{k}", "_Arg", [], "", {"T": _tensor_dtype(view, t), "index": k})
             for k, t in enumerate(args)]
    for c in consts:
        node = view.nodes[c].copy()
        node.inputs, node.device = [], ""
        nodes.append(node)
    for m in cluster.members:
        node = view.nodes[m].copy()
        node.device = ""
        node.inputs = [_inner_input(i, members, remap, consts) for i in node.inputs
                       if not i.startswith("^") or i[1:] in members]
        node.inputs = [i for i in node.inputs if not i.startswith("^")]
        nodes.append(node)
    nodes += [ir.NodeDef(f"_retval_{k}", "_Retval", [t], "",
                         {"T": _tensor_dtype(view, t), "index": k})
              for k, t in enumerate(results)]
    return ir.FunctionDef(name=name, nodes=nodes,
                          attrs={"_XlaCompiledKernel": True, "_noinline": True})


def _inner_input(i: str, members, remap, consts) -> str:
    src, slot, ctl = ir.parse_input(i)
    if ctl or src in members or src in consts:
        return i
    return remap[ir.tensor_name(src, slot)]


def _tensor_dtype(view: GraphView, tensor: str):
    t = _input_dtype(view, tensor)
    return t.base_dtype if t is not None else dtypes.float32


def _with_function(graph: ir.GraphDef, fdef: ir.FunctionDef) -> ir.GraphDef:
    return ir.GraphDef(nodes=graph.nodes, library=list(graph.library) + [fdef],
                       producer=graph.producer, min_consumer=graph.min_consumer,
                       shapes=graph.shapes)


def _drop_unused_constants(view: GraphView, consts: list[str]) -> None:
    for c in consts:
        if c not in view.keep and not view.consumers(c):
            view.remove(c)
