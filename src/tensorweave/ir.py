"""The graph IR the master and workers work on: plain Python data, no protobuf.

Attr values are Python values: `int`, `float`, `bool`, `str` (TF's bytes attrs, decoded as
UTF-8 when they are text, else kept as `bytes`), `DType`, `TensorShape`, `numpy.ndarray`
(tensor attrs), `NameAttrList` (function attrs), or a `list` of one of these. `proto/convert.py`
is the only place that maps this IR to and from protobuf.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PRODUCER_VERSION = 1882  # the GraphDef producer version TF 2.21 writes; we read >= 0
MIN_CONSUMER_VERSION = 0


@dataclass
class NameAttrList:
    """A function reference with attrs (AttrValue.func)."""

    name: str
    attr: dict[str, Any] = field(default_factory=dict)


@dataclass
class NodeDef:
    """One node: `inputs` are `"node"`, `"node:k"` or `"^node"` (control, always last)."""

    name: str
    op: str
    inputs: list[str] = field(default_factory=list)
    device: str = ""
    attrs: dict[str, Any] = field(default_factory=dict)

    def data_inputs(self) -> list[str]:
        return [i for i in self.inputs if not i.startswith("^")]

    def control_inputs(self) -> list[str]:
        return [i[1:] for i in self.inputs if i.startswith("^")]

    def copy(self) -> NodeDef:
        """A copy whose inputs and attrs can be changed without touching this node."""
        out = object.__new__(NodeDef)
        out.__dict__ = {"name": self.name, "op": self.op, "inputs": list(self.inputs),
                        "device": self.device, "attrs": dict(self.attrs)}
        return out


@dataclass
class ArgDefIR:
    name: str
    type: Any = None          # DType or None
    type_attr: str = ""
    number_attr: str = ""
    type_list_attr: str = ""
    is_ref: bool = False


@dataclass
class FunctionDef:
    """A graph function: a signature, its body nodes and where outputs come from."""

    name: str
    input_args: list[ArgDefIR] = field(default_factory=list)
    output_args: list[ArgDefIR] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)
    nodes: list[NodeDef] = field(default_factory=list)
    ret: dict[str, str] = field(default_factory=dict)
    control_ret: dict[str, str] = field(default_factory=dict)
    is_stateful: bool = False


@dataclass
class GraphDef:
    """Nodes, functions, versions; `shapes` optionally holds each node's static output shapes
    (tuples of int/None, or None for unknown rank) as the client inferred them."""

    nodes: list[NodeDef] = field(default_factory=list)
    library: list[FunctionDef] = field(default_factory=list)
    producer: int = PRODUCER_VERSION
    min_consumer: int = MIN_CONSUMER_VERSION
    shapes: dict[str, list] = field(default_factory=dict)

    def node_map(self) -> dict[str, NodeDef]:
        return {n.name: n for n in self.nodes}


def parse_input(name: str) -> tuple[str, int, bool]:
    """`"a:1"` → ("a", 1, False); `"^a"` → ("a", -1, True); `"a"` → ("a", 0, False)."""
    if name.startswith("^"):
        return name[1:], -1, True
    node, sep, idx = name.rpartition(":")
    if sep and idx.isdigit():
        return node, int(idx), False
    return name, 0, False


def tensor_name(node: str, index: int) -> str:
    """The canonical input string for output `index` of `node` (`node` for 0, as TF writes)."""
    return node if index == 0 else f"{node}:{index}"
