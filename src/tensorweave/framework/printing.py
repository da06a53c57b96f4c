"""The deterministic text form of nodes and graphs (error messages, debug output, golden tests).

One node is one line, in TensorFlow's `SummarizeNodeDef` form:

    dense/MatMul = MatMul[T=DT_FLOAT, transpose_a=false, transpose_b=false](x, dense/kernel/read)

Attrs are sorted by name; the device, when set, comes last as `_device="..."`. Values print as
TF prints them: dtypes as `DT_FLOAT`, shapes as `[?,3]` (`<unknown>` for unknown rank), strings
quoted with C escapes, floats at their own precision (a float32 attr `0.001` prints `0.001`),
tensors as `Tensor<type: float shape: [2,3] values: [1 2 3...]>`. The output depends only on the
node's contents, never on ids or dict order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import dtypes, ir
from tensorweave.proto import types_pb2
from tensorweave.shapes import TensorShape

_MAX_LIST = 10        # list attrs show this many items, then `...(N total)`
_MAX_TENSOR = 3       # tensor attrs show this many values, as TF's DebugString does


def format_node(node_def: Any) -> str:
    """`name = Op[attr=value, ...](input, ^control)` for an `ir.NodeDef` (or a NodeDef proto)."""
    node = _as_ir_node(node_def)
    attrs = [f"{k}={format_attr_value(node.attrs[k])}" for k in sorted(node.attrs)]
    if node.device:
        attrs.append(f"_device={_quote(node.device)}")
    return f"{node.name} = {node.op}[{', '.join(attrs)}]({', '.join(node.inputs)})"


def format_graph(graph_or_ir: Any, max_nodes: int | None = None) -> str:
    """One `format_node` line per node, in creation (GraphDef) order.

    Args:
      graph_or_ir: a `Graph`, an `ir.GraphDef` or a GraphDef proto.
      max_nodes: show at most this many nodes, then a line `... (N more nodes)`.
    """
    nodes = _nodes_of(graph_or_ir)
    shown = nodes if max_nodes is None else nodes[:max(max_nodes, 0)]
    lines = [format_node(n) for n in shown]
    if len(shown) < len(nodes):
        lines.append(f"... ({len(nodes) - len(shown)} more nodes)")
    return "\n".join(lines)


def format_window(ir_graph: Any, center_node_name: str, radius: int = 3) -> str:
    """The lines of `format_graph` within `radius` nodes of `center_node_name` (marked `>>`).

    Meant for error messages, so it never raises for a missing node: it says so instead.
    Elided parts show as `... (N nodes before)` / `... (N nodes after)`.
    """
    nodes = _nodes_of(ir_graph)
    index = next((i for i, n in enumerate(nodes) if n.name == center_node_name), None)
    if index is None:
        return f"<node '{center_node_name}' is not in the graph ({len(nodes)} nodes)>"
    lo, hi = max(index - radius, 0), min(index + radius + 1, len(nodes))
    lines = [f"   ... ({lo} nodes before)"] if lo else []
    lines += [(">> " if i == index else "   ") + format_node(nodes[i]) for i in range(lo, hi)]
    if hi < len(nodes):
        lines.append(f"   ... ({len(nodes) - hi} nodes after)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------------------------
def format_attr_value(value: Any) -> str:
    """One attr value as TF's SummarizeAttrValue writes it."""
    if isinstance(value, (list, tuple)):
        items = [format_attr_value(v) for v in value[:_MAX_LIST]]
        if len(value) > _MAX_LIST:
            items.append(f"...({len(value)} total)")
        return "[" + ", ".join(items) + "]"
    for kind, fmt in _FORMATTERS:
        if isinstance(value, kind):
            return fmt(value)
    return repr(value)


def format_dtype(dtype: Any) -> str:
    """`DT_FLOAT`, `DT_FLOAT_REF`, ... (TF's DataType enum names)."""
    enum = dtypes.as_dtype(dtype).as_datatype_enum
    try:
        return types_pb2.DataType.Name(enum)
    except ValueError:
        return f"DT_<{enum}>"


def format_shape(shape: TensorShape) -> str:
    """`[?,3]`, `[]` for a scalar, `<unknown>` for unknown rank (PartialTensorShape's form)."""
    dims = shape.as_tuple()
    if dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def format_tensor(array: np.ndarray) -> str:
    """`Tensor<type: float shape: [2,3] values: [1 2 3...]>` (the first few values, row-major)."""
    arr = np.asarray(array)
    type_name = _tensor_type_name(arr)
    shape = "[" + ",".join(str(d) for d in arr.shape) + "]"
    flat = arr.reshape(-1)
    values = " ".join(_scalar(v) for v in flat[:_MAX_TENSOR])
    more = "..." if flat.size > _MAX_TENSOR else ""
    shown = values + more if arr.ndim == 0 else f"[{values}{more}]"
    return f"Tensor<type: {type_name} shape: {shape} values: {shown}>"


def _tensor_type_name(arr: np.ndarray) -> str:
    if arr.dtype.kind in "OSU":
        return "string"
    try:
        return format_dtype(dtypes.as_dtype(arr.dtype))[3:].lower()
    except TypeError:
        return str(arr.dtype)


def _scalar(value: Any) -> str:
    """One tensor element: floats at their own precision, bytes quoted."""
    if isinstance(value, (bytes, str)):
        return _quote(value)
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, np.floating):
        return _shortest(value)
    return str(value)


def _float(value: float) -> str:
    # NOTE: AttrValue.f is a 32-bit float: print the shortest form that reads back the same.
    return _shortest(np.float32(value))


def _shortest(value: np.floating) -> str:
    """The shortest text that reads back as `value` at its precision, `%g`-like (`1`, not
    `1.0`), as TF's StrCat prints floats."""
    text = str(value)
    return text[:-2] if text.endswith(".0") else text


def _quote(value: str | bytes) -> str:
    """A double-quoted string with C escapes (non-printable bytes as octal, as CEscape)."""
    raw = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    out = []
    for b in raw:
        ch = chr(b)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif 0x20 <= b < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "'": "\\'", "\\": "\\\\"}


def _func(value: ir.NameAttrList) -> str:
    attrs = ", ".join(f"{k}={format_attr_value(value.attr[k])}" for k in sorted(value.attr))
    return f"{value.name}[{attrs}]"


def _placeholder_type():
    from tensorweave.proto.convert import AttrPlaceholder

    return AttrPlaceholder


# (type, formatter) in match order: bool before int, placeholders before plain strings.
_FORMATTERS: list[tuple[Any, Any]] = [
    (_placeholder_type(), lambda v: f"${v}"),
    ((bool, np.bool_), lambda v: "true" if v else "false"),
    ((int, np.integer), lambda v: str(int(v))),
    ((float, np.floating), _float),
    ((str, bytes), _quote),
    (dtypes.DType, format_dtype),
    (TensorShape, format_shape),
    (np.ndarray, format_tensor),
    (ir.NameAttrList, _func),
]


# ---------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------
def _as_ir_node(node_def: Any) -> ir.NodeDef:
    if isinstance(node_def, ir.NodeDef):
        return node_def
    from tensorweave.proto.convert import node_from_proto

    return node_from_proto(node_def)


def _nodes_of(graph: Any) -> list[ir.NodeDef]:
    """The nodes of a Graph, an ir.GraphDef or a GraphDef proto, in order."""
    if isinstance(graph, ir.GraphDef):
        return list(graph.nodes)
    if hasattr(graph, "_as_ir"):
        return list(graph._as_ir(0).nodes)
    if hasattr(graph, "node"):
        return [_as_ir_node(n) for n in graph.node]
    raise TypeError(f"Expected a Graph, an ir.GraphDef or a GraphDef proto, got "
                    f"{type(graph).__name__}")


__all__ = ["format_node", "format_graph", "format_window", "format_attr_value",
           "format_dtype", "format_shape", "format_tensor"]
