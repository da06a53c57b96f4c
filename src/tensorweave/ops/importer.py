"""Graph ↔ GraphDef: `graph_to_proto` (what `Graph.as_graph_def` returns) and TF1's
`import_graph_def`.

Import follows TensorFlow's graph constructor:

* every op type must be registered; all unknown types are reported in one ValueError;
* attrs the OpDef declares get their defaults; an attr the OpDef does not know (and that does
  not start with `_`) is an error, unless `producer_op_list` shows it at its default value;
* nodes may come in any order: they are created in topological order (smallest GraphDef
  index first among the ready ones, as TF does); a `Merge` fed by a `NextIteration` (a while
  loop's back edge) is created once one input is ready and the back edge is wired afterwards;
* names get the prefix `name` (default "import", made unique like a name scope; `""` imports
  without a prefix, renaming `x` to `x_1` where `x` is taken); inputs, control inputs and
  `_class` colocation groups (`loc:@x`) are rewritten to the new names;
* devices are merged under the active `tf.device` scope; an op colocated with another op
  takes that op's device, as TF's importer does;
* the active `tf.control_dependencies` blocks apply to imported ops, as in TF.

Every error TF reports while importing is a ValueError (TypeError for arguments of the wrong
kind). Everything but shape-function errors is found before the graph changes; when a shape
function fails, the ops created so far are removed again, so a failed import adds nothing.

Known difference: tensorweave's graph reserves names case-insensitively (as TF's Python layer
does), so a GraphDef holding both `a` and `A` imports the second as `A_1`.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tensorweave import dtypes, ir
from tensorweave.framework import device_spec as device_lib
from tensorweave.framework.graph import get_default_graph, graph_to_proto  # noqa: F401
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.printing import format_node
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import add_op
from tensorweave.ops.registry import OPS, AttrSpec, OpDef, arg_dtypes, full_attrs
from tensorweave.proto import convert, graph_pb2
from tensorweave.shapes import TensorShape, as_shape

_NEXT_ITERATION = frozenset(["NextIteration", "RefNextIteration"])
_MERGE = frozenset(["Merge", "RefMerge"])
_NODE_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")
_LOC = "loc:@"


# ---------------------------------------------------------------------------------------------
# export
# ---------------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------------
# import: the plan of one GraphDef node
# ---------------------------------------------------------------------------------------------
@dataclass
class _Node:
    """A GraphDef node checked against its OpDef: attrs complete, inputs split, dtypes known."""

    index: int
    node: ir.NodeDef
    op_def: OpDef
    data: list[tuple[str, int]]
    controls: list[str]
    in_dtypes: list
    out_dtypes: list

    @property
    def name(self) -> str:
        return self.node.name


@dataclass
class _InputMap:
    """`input_map` split into data keys `(node, index)` and control keys (`^node` → node)."""

    data: dict[tuple[str, int], Any] = field(default_factory=dict)
    control: dict[str, Any] = field(default_factory=dict)


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None, op_dict=None,
                     producer_op_list=None):
    """Imports the graph `graph_def` into the default graph (TF1's `tf.import_graph_def`).

    Args:
      graph_def: a GraphDef proto (`tf.GraphDef`, or TensorFlow's own GraphDef message), or an
        `ir.GraphDef`.
      input_map: `{"x:0" or "x": Tensor, "^x": Tensor/Operation}`: inputs in `graph_def` that
        read `x:0` read the given tensor instead (`^x`: control inputs on `x` depend on the
        given op). Non-Tensor values are converted to constants in `<name>/_inputs`.
      return_elements: names in `graph_def` to return: `"op"` gives the imported Operation,
        `"op:1"` the Tensor (the mapped tensor when that name is in `input_map`).
      name: the prefix of the imported names; default "import" (made unique); `""` for none.
      op_dict: ignored (deprecated in TensorFlow too).
      producer_op_list: an `OpList` proto of the producer's op definitions; attrs our OpDefs
        do not know are dropped when they hold the producer's default value.

    Returns:
      None without `return_elements`, else the list of requested Operations and Tensors.

    Raises:
      RuntimeError: the default graph is finalized.
      TypeError: `graph_def`, `input_map` or `return_elements` has the wrong kind.
      ValueError: unknown op types (all listed), bad attrs, an input naming a missing node or
        output, a dtype mismatch, a cycle not through NextIteration → Merge, input_map keys not
        in `graph_def`, unknown return elements, a shape function's error.
    """
    del op_dict  # NOTE: deprecated and unused in TF1 as well
    graph_ir = _as_ir_graph(graph_def)
    raw_map = _check_input_map(input_map)
    returns = _check_return_elements(return_elements)
    _check_versions(graph_ir)
    nodes = _prepare_nodes(graph_ir.nodes, _producer_ops(producer_op_list))
    by_name = {n.name: n for n in nodes}
    keys = _split_keys(raw_map)
    used = _check_edges(nodes, by_name, keys)
    order = _topological_order(nodes, by_name, keys)
    _check_returns(returns, by_name, keys)
    _check_unused_keys(keys, used, by_name)
    graph = get_default_graph()
    graph.check_not_finalized()
    prefix, mapped = _open_scope(graph, name, keys)
    names = _final_names(graph, nodes, prefix)
    _check_types(nodes, by_name, mapped, names)
    created = _create_ops(graph, nodes, order, names, prefix, mapped)
    _colocate(graph, created)
    _add_functions(graph, graph_ir.library)
    return None if returns is None else _gather(returns, created, mapped)


# ---------------------------------------------------------------------------------------------
# arguments
# ---------------------------------------------------------------------------------------------
def _as_ir_graph(graph_def) -> ir.GraphDef:
    """The IR of `graph_def` (ours, TF's GraphDef message, or already IR)."""
    if isinstance(graph_def, ir.GraphDef):
        return graph_def
    if not isinstance(graph_def, graph_pb2.GraphDef):
        descriptor = getattr(graph_def, "DESCRIPTOR", None)
        if getattr(descriptor, "name", None) != "GraphDef" or \
                not hasattr(graph_def, "SerializeToString"):
            raise TypeError("graph_def must be a GraphDef proto.")
        graph_def = graph_pb2.GraphDef.FromString(graph_def.SerializeToString())
    return convert.graph_from_proto(graph_def)


def _check_input_map(input_map) -> dict[str, Any]:
    if input_map is None:
        return {}
    if not isinstance(input_map, dict) or \
            not all(isinstance(k, (str, bytes)) for k in input_map):
        raise TypeError("input_map must be a dictionary mapping strings to Tensor objects.")
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in input_map.items()}


def _check_return_elements(return_elements) -> tuple[str, ...] | None:
    if return_elements is None:
        return None
    if isinstance(return_elements, (str, bytes)) or \
            not all(isinstance(x, (str, bytes)) for x in return_elements):
        raise TypeError("return_elements must be a list of strings.")
    return tuple(x.decode() if isinstance(x, bytes) else x for x in return_elements)


def _parse_tensor_name(name: str) -> tuple[str, int]:
    """`"x"` → ("x", 0), `"x:1"` → ("x", 1) (TF's `_ParseTensorName`)."""
    parts = name.split(":")
    if len(parts) == 1:
        return parts[0], 0
    if len(parts) == 2 and parts[1].isdigit():
        return parts[0], int(parts[1])
    raise ValueError(f"Cannot convert {name!r} to a tensor name.")


def _split_keys(raw_map: dict[str, Any]) -> _InputMap:
    out = _InputMap()
    for key, value in raw_map.items():
        if key.startswith("^"):
            out.control[key[1:]] = value
        else:
            out.data[_parse_tensor_name(key)] = value
    return out


def _check_versions(graph_ir: ir.GraphDef) -> None:
    if graph_ir.min_consumer > ir.PRODUCER_VERSION:
        raise ValueError(
            f"GraphDef min consumer version {graph_ir.min_consumer} above current version "
            f"{ir.PRODUCER_VERSION} for TensorFlow. Please upgrade TensorFlow.")


def _producer_ops(producer_op_list) -> dict[str, Any]:
    if producer_op_list is None:
        return {}
    return {op.name: op for op in producer_op_list.op}


# ---------------------------------------------------------------------------------------------
# nodes: op types, attrs, inputs
# ---------------------------------------------------------------------------------------------
def _prepare_nodes(raw_nodes: list[ir.NodeDef], producer_ops: dict) -> list[_Node]:
    _check_names(raw_nodes)
    _check_known_ops(raw_nodes)
    return [_prepare_node(i, n, producer_ops.get(n.op)) for i, n in enumerate(raw_nodes)]


def _check_names(raw_nodes: list[ir.NodeDef]) -> None:
    seen: set[str] = set()
    for n in raw_nodes:
        if not _NODE_NAME.match(n.name):
            raise ValueError(f"Node '{n.name}': Node name contains invalid characters")
        if n.name in seen:
            raise ValueError(f"Node '{n.name}' is not unique")
        seen.add(n.name)


def _check_known_ops(raw_nodes: list[ir.NodeDef]) -> None:
    """One ValueError naming every unregistered op type (and a node of each)."""
    unknown: dict[str, str] = {}
    for n in raw_nodes:
        if n.op not in OPS:
            unknown.setdefault(n.op, n.name)
    if unknown:
        types = sorted(unknown)
        where = ", ".join(f"'{unknown[t]}' ({t})" for t in types)
        raise ValueError(f"GraphDef has unknown op types: {types} (first node of each: {where})."
                         " Register these ops before importing.")


def _prepare_node(index: int, raw: ir.NodeDef, producer_op) -> _Node:
    op_def = OPS.lookup(raw.op)
    node = raw.copy()
    node.attrs = full_attrs(op_def, _strip_producer_defaults(raw.attrs, op_def, producer_op))
    _check_attrs(node, op_def)
    node.device = _canonical_device(node)
    data, controls = _split_inputs(node)
    in_dtypes = arg_dtypes(op_def.inputs, node.attrs)
    if len(data) != len(in_dtypes):
        expected = ", ".join(_dtype_name(d) for d in in_dtypes)
        raise ValueError(f"NodeDef expected inputs '{expected}' do not match {len(data)} inputs "
                         f"specified; NodeDef: {format_node(node)}")
    return _Node(index, node, op_def, data, controls, in_dtypes,
                 arg_dtypes(op_def.outputs, node.attrs))


def _strip_producer_defaults(attrs: dict, op_def: OpDef, producer_op) -> dict:
    """`attrs` without those our OpDef lacks that hold the producer OpDef's default value."""
    if producer_op is None:
        return attrs
    out = dict(attrs)
    for spec in producer_op.attr:
        if spec.name in op_def.attrs or spec.name not in out or \
                not spec.HasField("default_value"):
            continue
        if _same_value(out[spec.name], convert.attr_from_proto(spec.default_value)):
            del out[spec.name]
    return out


def _same_value(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    return a == b


def _check_attrs(node: ir.NodeDef, op_def: OpDef) -> None:
    """Every declared attr present and allowed; no undeclared attr (except `_`-prefixed)."""
    for key in node.attrs:
        if key not in op_def.attrs and not key.startswith("_"):
            raise ValueError(
                f"NodeDef mentions attr '{key}' not in {_op_summary(op_def)}; NodeDef: "
                f"{format_node(node)}. (Check whether your GraphDef-interpreting binary is up "
                "to date with your GraphDef-generating binary.)")
    for spec in op_def.attrs.values():
        if spec.name not in node.attrs or node.attrs[spec.name] is None:
            raise ValueError(f"NodeDef missing attr '{spec.name}' from {_op_summary(op_def)}; "
                             f"NodeDef: {format_node(node)}")
        try:
            node.attrs[spec.name] = _coerce_attr(spec, node.attrs[spec.name])
        except (TypeError, ValueError) as e:
            raise ValueError(f"{e}; NodeDef: {format_node(node)}") from None


def _op_summary(op_def: OpDef) -> str:
    return f"Op<name={op_def.name}; attrs={', '.join(sorted(op_def.attrs))}>"


def _coerce_attr(spec: AttrSpec, value):
    """`value` as the Python type of `spec.type`, checked against allowed values and minimum."""
    kind = spec.type
    if kind.startswith("list("):
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"Attr '{spec.name}' must be a {kind}, got {value!r}")
        if spec.minimum is not None and len(value) < spec.minimum:
            raise ValueError(f"Attr '{spec.name}' has {len(value)} values, less than minimum "
                             f"{spec.minimum}")
        return [_coerce_one(spec, kind[5:-1], v, in_list=True) for v in value]
    return _coerce_one(spec, kind, value)


def _coerce_one(spec: AttrSpec, kind: str, value, in_list: bool = False):
    if kind == "type":
        value = dtypes.as_dtype(value)
    elif kind == "shape":
        value = as_shape(value)
    elif kind == "int":
        value = int(value)
        if spec.minimum is not None and not in_list and value < spec.minimum:
            raise ValueError(f"Value for attr '{spec.name}' of {value} must be at least minimum "
                             f"{spec.minimum}")
    elif kind == "float":
        value = float(value)
    elif kind == "bool":
        value = bool(value)
    elif kind == "tensor":
        value = _read_only(value)
    if spec.allowed and kind in ("type", "string") and value not in spec.allowed:
        shown = ", ".join(_dtype_name(a) if kind == "type" else f'"{a}"' for a in spec.allowed)
        name = _dtype_name(value) if kind == "type" else f'"{value}"'
        raise ValueError(f"Value for attr '{spec.name}' of {name} is not in the list of allowed "
                         f"values: {shown}")
    return value


def _read_only(value) -> np.ndarray:
    """The graph owns imported constants; nothing may change them afterwards."""
    arr = np.array(value, copy=True) if not isinstance(value, np.ndarray) else value
    arr.flags.writeable = False
    return arr


def _dtype_name(dtype) -> str:
    return dtype.name if isinstance(dtype, dtypes.DType) else str(dtype)


def _canonical_device(node: ir.NodeDef) -> str:
    try:
        return device_lib.canonical(node.device)
    except (ValueError, TypeError) as e:
        raise ValueError(f"Node '{node.name}': invalid device '{node.device}': {e}") from None


def _split_inputs(node: ir.NodeDef) -> tuple[list[tuple[str, int]], list[str]]:
    data: list[tuple[str, int]] = []
    controls: list[str] = []
    for text in node.inputs:
        src, index, is_control = ir.parse_input(text)
        if is_control:
            controls.append(src)
        elif controls:
            raise ValueError(f"Node '{node.name}': Control dependencies must come after regular "
                             "dependencies")
        else:
            data.append((src, index))
    return data, controls


# ---------------------------------------------------------------------------------------------
# edges, order, requested names
# ---------------------------------------------------------------------------------------------
def _check_edges(nodes: list[_Node], by_name: dict[str, _Node], keys: _InputMap) -> set:
    """Checks that every input names a node and output in `graph_def` (or a mapped key).

    Returns the input_map keys some input uses: `(node, index)` or `"^node"`.
    """
    used: set = set()
    for n in nodes:
        for text, (src, index) in zip(n.node.inputs, n.data):
            if (src, index) in keys.data:
                used.add((src, index))
                continue
            source = by_name.get(src)
            if source is None:
                raise ValueError(f"Node '{n.name}': Unknown input node '{text}'")
            if index >= len(source.out_dtypes):
                raise ValueError(f"Node '{n.name}': Connecting to invalid output {index} of "
                                 f"source node {src} which has {len(source.out_dtypes)} outputs.")
        for src in n.controls:
            if src in keys.control:
                used.add(f"^{src}")
            elif src not in by_name:
                raise ValueError(f"Node '{n.name}': Unknown input node '^{src}'")
    return used


def _topological_order(nodes: list[_Node], by_name: dict[str, _Node],
                       keys: _InputMap) -> list[int]:
    """Node indices in creation order: Kahn's algorithm, smallest GraphDef index first.

    A Merge fed by a NextIteration waits for its control inputs and one data input only (the
    other inputs are wired after their producers exist), so while loops import.

    Raises:
      ValueError: nodes that can never become ready (a cycle not through NextIteration).
    """
    pending = [0] * len(nodes)
    consumers: list[list[int]] = [[] for _ in nodes]
    for n in nodes:
        data = [by_name[s].index for s, i in n.data if (s, i) not in keys.data]
        ctl = [by_name[s].index for s in n.controls if s not in keys.control]
        for j in data + ctl:
            consumers[j].append(n.index)
        forward = [j for j in data if nodes[j].node.op not in _NEXT_ITERATION]
        if n.node.op in _MERGE and len(forward) < len(data):
            pending[n.index] = len(ctl) + min(len(forward), 1)
        else:
            pending[n.index] = len(ctl) + len(data)
    ready = [i for i, p in enumerate(pending) if p == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for j in consumers[i]:
            pending[j] -= 1
            if pending[j] == 0:
                heapq.heappush(ready, j)
    if len(order) < len(nodes):
        done = set(order)
        stuck = [n.name for n in nodes if n.index not in done]
        raise ValueError(f"GraphDef contains a cycle: {len(stuck)} nodes in a cycle (only "
                         f"NextIteration → Merge back edges may close one), e.g. {stuck[:8]}")
    return order


def _check_returns(returns, by_name: dict[str, _Node], keys: _InputMap) -> None:
    for name in returns or ():
        if ":" not in name:
            if name not in by_name:
                raise ValueError(f"Requested return node '{name}' not found in graph def")
            continue
        src, index = _parse_tensor_name(name)
        if (src, index) in keys.data:
            continue
        if src not in by_name:
            raise ValueError(f"Requested return tensor '{src}:{index}' not found in graph def")
        n_out = len(by_name[src].out_dtypes)
        if index >= n_out:
            raise ValueError(f"Invalid return output {index} of node '{src}', which has {n_out} "
                             "output(s)")


def _check_unused_keys(keys: _InputMap, used: set, by_name: dict[str, _Node]) -> None:
    """input_map keys that no input uses and that name nothing in `graph_def` are typos."""
    missing = [f"{src}:{index}" for src, index in keys.data
               if (src, index) not in used and
               (src not in by_name or index >= len(by_name[src].out_dtypes))]
    missing += [f"^{src}" for src in keys.control
                if f"^{src}" not in used and src not in by_name]
    if missing:
        raise ValueError("Attempted to map inputs that were not found in graph_def: "
                         f"[{', '.join(missing)}]")


# ---------------------------------------------------------------------------------------------
# names, mapped values, dtypes
# ---------------------------------------------------------------------------------------------
def _open_scope(graph, name, keys: _InputMap) -> tuple[str, _InputMap]:
    """The import prefix (a fresh name scope, as TF) and the input_map values as graph
    elements: non-Tensor values become constants in `<prefix>/_inputs`."""
    values = list(keys.data.values()) + list(keys.control.values())
    if name == "" and not all(isinstance(v, (Tensor, Operation)) for v in values):
        raise ValueError(
            "tf.import_graph_def() requires a non-empty `name` if `input_map` contains "
            "non-Tensor values. Try calling tf.convert_to_tensor() on `input_map` values "
            "before calling tf.import_graph_def().")
    with graph.as_default(), name_scope(name, "import") as scope:
        prefix = scope[:-1] if scope else ""
        mapped = _InputMap(
            data={k: _as_tensor(graph, v) for k, v in keys.data.items()},
            control={k: _as_control(graph, v) for k, v in keys.control.items()},
        )
    return prefix, mapped


def _as_tensor(graph, value) -> Tensor:
    if not isinstance(value, Tensor):
        with name_scope("_inputs"):
            value = convert_to_tensor(value)
    if value.graph is not graph:
        raise ValueError(f"input_map value {value!r} is not an element of the graph being "
                         "imported into.")
    return value


def _as_control(graph, value) -> Operation:
    op = value.op if isinstance(value, Tensor) else value
    if not isinstance(op, Operation):
        raise TypeError(f"input_map values for control inputs ('^name') must be Tensors or "
                        f"Operations, got {value!r}")
    if op.graph is not graph:
        raise ValueError(f"input_map value {value!r} is not an element of the graph being "
                         "imported into.")
    return op


def _final_names(graph, nodes: list[_Node], prefix: str) -> dict[str, str]:
    """GraphDef name → graph name: `prefix/name`, suffixed `_1`, `_2`, ... where taken."""
    taken: set[str] = set()
    names: dict[str, str] = {}
    with graph.name_scope(""):
        for n in nodes:
            base = f"{prefix}/{n.name}" if prefix else n.name
            final, k = base, 0
            while final.lower() in taken or graph.unique_name(final, mark_as_used=False) != final:
                k += 1
                final = f"{base}_{k}"
            taken.add(final.lower())
            names[n.name] = final
    return names


def _check_types(nodes: list[_Node], by_name: dict[str, _Node], mapped: _InputMap,
                 names: dict[str, str]) -> None:
    """Each data input's dtype fits its OpDef arg (a ref where the op needs one)."""
    for n in nodes:
        for k, (src, index) in enumerate(n.data):
            tensor = mapped.data.get((src, index))
            if tensor is not None:
                got, where = tensor.dtype, tensor.name
            else:
                got, where = by_name[src].out_dtypes[index], f"{names[src]}:{index}"
            want = n.in_dtypes[k]
            if not _fits(got, want):
                raise ValueError(f"Input {k} of node {names[n.name]} was passed "
                                 f"{_dtype_name(got)} from {where} incompatible with expected "
                                 f"{_dtype_name(want)}.")


def _fits(got, want) -> bool:
    if got is None or want is None:
        return True
    return got.base_dtype == want.base_dtype and (got.is_ref_dtype or not want.is_ref_dtype)


# ---------------------------------------------------------------------------------------------
# creating the ops
# ---------------------------------------------------------------------------------------------
class _PendingOp:
    """The producer of a `_PendingTensor`: no type, no inputs (constant folding sees nothing)."""

    type = ""
    name = "<pending back edge>"
    inputs = ()
    device = ""


_PENDING_OP = _PendingOp()


class _PendingTensor:
    """Stands in for an input whose producer is created later (a NextIteration back edge).

    Shape functions see an unknown shape, as TF's shape refiner gives back edges.
    """

    op = _PENDING_OP
    value_index = -1
    shape = TensorShape(None)

    def __init__(self, dtype, source: str):
        self.dtype = dtype
        self._source = source
        self._consumers: list = []

    @property
    def name(self) -> str:
        return self._source

    def _as_node_input(self) -> str:
        return self._source


def _create_ops(graph, nodes: list[_Node], order: list[int], names: dict[str, str],
                prefix: str, mapped: _InputMap) -> dict[str, Operation]:
    """Adds the ops in `order`; wires late inputs; on any error removes what it added."""
    created: dict[str, Operation] = {}
    late: list[tuple[Operation, int | None, str, int]] = []
    snapshot = graph.snapshot()
    try:
        with graph.name_scope(""):
            for i in order:
                created[nodes[i].name] = _create_one(graph, nodes[i], names, prefix, created,
                                                     mapped, late)
        for op, k, src, index in late:
            if k is None:
                op.add_control_input(created[src])
            else:
                op.replace_input(k, created[src].outputs[index])
    except BaseException:
        graph.rollback(snapshot)
        raise
    return created


def _create_one(graph, n: _Node, names: dict[str, str], prefix: str, created: dict,
                mapped: _InputMap, late: list) -> Operation:
    inputs, pending = [], []
    for k, (src, index) in enumerate(n.data):
        tensor = mapped.data.get((src, index))
        if tensor is None and src in created:
            tensor = created[src].outputs[index]
        if tensor is None:
            tensor = _PendingTensor(n.in_dtypes[k], names[src])
            pending.append((k, src, index))
        inputs.append(tensor)
    attrs = _renamed_colocation(n.node.attrs, names, prefix)
    op = add_op(graph, n.op_def, names[n.name], inputs, attrs, n.out_dtypes)
    assert op.name == names[n.name], (op.name, names[n.name])  # _final_names reserved it
    late.extend((op, k, src, index) for k, src, index in pending)
    controls = []
    for src in n.controls:
        if src in mapped.control:
            controls.append(mapped.control[src])
        elif src in created:
            controls.append(created[src])
        else:
            late.append((op, None, src, -1))
    op._add_control_inputs(controls)
    _place(op, n.node.device)
    return op


def _renamed_colocation(attrs: dict, names: dict[str, str], prefix: str) -> dict:
    """`attrs` with `_class` groups `loc:@x` pointing at x's imported name."""
    groups = attrs.get("_class")
    if not isinstance(groups, list):
        return dict(attrs)
    out = dict(attrs)
    out["_class"] = [_renamed_group(g, names, prefix) for g in groups]
    return out


def _renamed_group(group, names: dict[str, str], prefix: str):
    if not isinstance(group, str) or not group.startswith(_LOC):
        return group
    target = group[len(_LOC):]
    if target in names:
        return _LOC + names[target]
    return _LOC + (f"{prefix}/{target}" if prefix else target)


def _colocation_names(op: Operation) -> list[str]:
    """The ops `op` must sit with, from its `_class` attr (itself excluded), as TF reads it."""
    groups = op._attrs.get("_class") or []
    return [g[len(_LOC):] for g in groups
            if isinstance(g, str) and g.startswith(_LOC) and g[len(_LOC):] != op.name]


def _place(op: Operation, device: str) -> None:
    """Device of an imported op: colocated ops wait for `_colocate`; others merge their own
    device under the active device scope (already applied by `add_op`)."""
    if _colocation_names(op):
        op._set_device("")
    elif device:
        op._set_device(device_lib.merge(op.device, device))


def _colocate(graph, created: dict[str, Operation]) -> None:
    """Each colocated op takes the device of the first op of its groups that has one."""
    for op in created.values():
        for target_name in _colocation_names(op):
            try:
                target = graph.get_operation_by_name(target_name)
            except KeyError:
                continue
            if target.device:
                op._set_device(target.device)
                break


def _add_functions(graph, library: list[ir.FunctionDef]) -> None:
    """Adds the GraphDef's library functions the graph does not have yet."""
    for fn in library:
        graph.add_function(fn, replace=False)


def _gather(returns: tuple[str, ...], created: dict[str, Operation], mapped: _InputMap) -> list:
    out: list = []
    for name in returns:
        if ":" not in name:
            out.append(created[name])
            continue
        src, index = _parse_tensor_name(name)
        tensor = mapped.data.get((src, index))
        out.append(tensor if tensor is not None else created[src].outputs[index])
    return out


__all__ = ["import_graph_def", "graph_to_proto"]
