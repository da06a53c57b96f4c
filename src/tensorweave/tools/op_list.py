"""The OpList: every registered OpDef as TensorFlow's op_def.proto describes it — what other
languages generate their op wrappers from (`tensorweave ops --format pbtxt|json`)."""

from __future__ import annotations

from google.protobuf import json_format, text_format

from tensorweave.proto import op_def_pb2
from tensorweave.training.meta_graph import op_def_to_proto


def op_list(include_internal: bool = True) -> op_def_pb2.OpList:
    """Every registered op type, sorted by name (`_`-prefixed internal ops unless excluded)."""
    from tensorweave import ops  # noqa: F401  (registers every op type)
    from tensorweave.ops.registry import OPS

    names = [n for n in sorted(OPS.names()) if include_internal or not n.startswith("_")]
    return op_def_pb2.OpList(op=[op_def_to_proto(OPS.lookup(n)) for n in names])


def to_text(ops: op_def_pb2.OpList, fmt: str) -> str:
    """`ops` as protobuf text ("pbtxt") or JSON ("json", proto field names: input_arg, ...).

    Raises:
      ValueError: an unknown format.
    """
    if fmt == "pbtxt":
        return text_format.MessageToString(ops)
    if fmt == "json":
        return json_format.MessageToJson(ops, preserving_proto_field_name=True, indent=1)
    raise ValueError(f"unknown format {fmt!r}: pbtxt or json")
