"""Graph functions: trace a Python function into an `ir.FunctionDef`.

`trace(fn, input_signature)` builds `fn`'s body in a fresh `FuncGraph` whose inputs are
placeholders; the body's nodes become the FunctionDef's nodes with inputs as `_Arg` nodes
(`index` attr) and outputs as `_Retval` nodes. Outer-graph tensors that `fn` uses are
captured: each becomes an extra `_Arg` after the declared inputs, and the caller feeds it at
run time (`TracedFunction.captures`, in order) — TF's `other_arguments`.

Limitation: an op whose FIRST input is an outer tensor is placed by `apply_op` in the outer
graph; write `x * outer`, not `outer * x`, until `apply_op` prefers a function graph.
"""

from __future__ import annotations

import itertools
import weakref
from dataclasses import dataclass, field

from tensorweave import dtypes, ir
from tensorweave.framework.graph import Graph
from tensorweave.shapes import TensorShape

_fn_ids = itertools.count()
# NOTE: plans do not yet hand the GraphDef library to kernels, so kernels in this process
# also find traced functions here (names are unique per process).
_traced: dict[str, ir.FunctionDef] = {}


# NOTE: a function graph lives as long as the graph using it: py_func tokens and generators
# registered while tracing are released when the graph that registered them is collected.
_keepalive: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def lookup_function(name: str) -> ir.FunctionDef | None:
    """A FunctionDef traced in this process, by name (None when unknown)."""
    return _traced.get(name)


class _CaptureContext:
    """Rewrites outer-graph inputs of ops built in a FuncGraph to placeholders."""

    def __init__(self, graph: FuncGraph):
        self._graph = graph

    def rewrite_inputs(self, op_def, inputs, op_name=None) -> list:
        return [self._graph.capture(t) for t in inputs]

    def add_op(self, op) -> None:
        pass


class FuncGraph(Graph):
    """A Graph that builds a function body; outer tensors used in it are captured."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self.captures: dict[int, tuple] = {}   # id(outer tensor) -> (outer, placeholder)
        self._control_flow_context = _CaptureContext(self)

    @property
    def building_function(self) -> bool:
        return True

    def capture(self, t):
        """`t` itself when it belongs to this graph, else its placeholder (made once)."""
        if t.graph is self:
            return t
        hit = self.captures.get(id(t))
        if hit is None:
            ph = _placeholder(self, t.dtype.base_dtype, t.shape, "captured")
            hit = self.captures[id(t)] = (t, ph)
        return hit[1]


@dataclass
class TracedFunction:
    """A traced function: its FunctionDef, the outer tensors it captured (fed after the
    declared inputs) and its flat outputs' dtypes and static shapes."""

    fdef: ir.FunctionDef
    captures: list = field(default_factory=list)
    output_dtypes: list = field(default_factory=list)
    output_shapes: list = field(default_factory=list)
    structured_outputs: object = None
    library: dict = field(default_factory=dict)
    graph: object = None


def _placeholder(graph, dtype, shape, name):
    from tensorweave.ops.apply import apply_op

    with graph.in_control_flow_context(None), graph.as_default():
        return apply_op("Placeholder", dtype=dtype, shape=TensorShape(shape), name=name)


def trace(fn, input_signature, name: str | None = None, flatten=None) -> TracedFunction:
    """Traces `fn(*placeholders)` into a FunctionDef.

    Args:
      fn: called with one placeholder per `(dtype, shape)` of `input_signature` (or with
        `flatten[0](placeholders)` args when `flatten=(pack, unpack)` is given).
      input_signature: list of `(dtype, shape)`.
      flatten: optional `(call, flat_outputs)`: `call(fn, placeholders)` invokes fn and
        `flat_outputs(result)` gives the flat list of output values.
    Returns:
      TracedFunction. Raises whatever `fn` raises while building.
    """
    from tensorweave.framework.graph import get_default_graph
    from tensorweave.framework.tensor_conversion import convert_to_tensor

    outer = get_default_graph()
    outer_version = outer.version
    g = FuncGraph(name or f"__tw_fn_{next(_fn_ids)}")
    args = [_placeholder(g, dtypes.as_dtype(dt), shape, f"arg{i}")
            for i, (dt, shape) in enumerate(input_signature)]
    with g.as_default():
        result = flatten[0](fn, args) if flatten else fn(*args)
        flat = flatten[1](result) if flatten else _flat_list(result)
        outs = [g.capture(convert_to_tensor(v)) for v in flat]
    _check_nothing_leaked(outer, outer_version, g)
    caps = [t for t, _ in g.captures.values()]
    cap_phs = [ph for _, ph in g.captures.values()]
    fdef = _function_def(g, args + cap_phs, outs)
    g.captures = {}   # no references from the function graph back to the outer graph
    return TracedFunction(fdef, caps, [t.dtype.base_dtype for t in outs],
                          [t.shape for t in outs], result, g.functions, g)


def _check_nothing_leaked(outer, version: int, g: FuncGraph) -> None:
    """Raises ValueError when an op built by the function went into the outer graph with an
    input from the function (apply_op places an op in its first input's graph)."""
    for op in outer.get_operations()[version:]:
        if any(t.graph is g for t in op.inputs):
            raise ValueError(
                f"Op '{op.name}' ({op.type}) built inside a traced function takes an outer "
                "tensor as its first input; write the function's own tensor first "
                "(e.g. `x * outer`, not `outer * x`).")


def _flat_list(result) -> list:
    if result is None:
        return []
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _function_def(g: FuncGraph, arg_tensors, out_tensors) -> ir.FunctionDef:
    arg_index = {t.op.name: i for i, t in enumerate(arg_tensors)}
    nodes = []
    for op in g.get_operations():
        nd = op.node_def
        if nd.name in arg_index:
            nd = ir.NodeDef(nd.name, "_Arg", [], "", {"T": op.outputs[0].dtype.base_dtype,
                                                       "index": arg_index[nd.name]})
        elif nd.op == "Placeholder":
            continue  # an unused capture placeholder made after tracing; never reached
        nodes.append(nd)
    for i, t in enumerate(out_tensors):
        nodes.append(ir.NodeDef(f"_retval_{i}", "_Retval", [t._as_node_input()], "",
                                {"T": t.dtype.base_dtype, "index": i}))
    in_args = [ir_arg(f"arg{i}", t) for i, t in enumerate(arg_tensors)]
    out_args = [ir_arg(f"out{i}", t) for i, t in enumerate(out_tensors)]
    ret = {f"out{i}": t.name for i, t in enumerate(out_tensors)}
    return ir.FunctionDef(g.name, in_args, out_args, {}, nodes, ret)


def ir_arg(name, t) -> ir.ArgDefIR:
    """The `ir.ArgDefIR` of tensor `t`."""
    return ir.ArgDefIR(name=name, type=t.dtype.base_dtype)


def add_to_graph(graph, traced: TracedFunction) -> ir.NameAttrList:
    """Adds the function to `graph`'s library; returns the `func` attr value naming it."""
    _keepalive.setdefault(graph, []).append(traced.graph)
    for fdef in list(traced.library.values()) + [traced.fdef]:
        graph.add_function(fdef)
    _traced.update(traced.library)
    _traced[traced.fdef.name] = traced.fdef
    return ir.NameAttrList(traced.fdef.name)
