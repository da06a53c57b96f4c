"""The one mapping between the plain-Python IR (`tensorweave.ir`) and protobuf messages.

Messages are ours (`package tensorweave`) but carry TensorFlow's field numbers, so
`graph_to_proto(g).SerializeToString()` is a GraphDef TensorFlow reads, and a `.pb` written
by TensorFlow parses into `graph_pb2.GraphDef` and then into the IR with `graph_from_proto`.

Tensors are encoded as TensorFlow's Python `make_tensor_proto` does, so TF-written Consts
re-encode to equal messages: a tensor of more than one element whose dtype TF packs as raw
bytes (floats, bfloat16, signed ints, uint8/32/64) goes into `tensor_content` (little-endian,
row-major); everything else (scalars, bool, uint16, complex, strings) into the `*_val` field of
its dtype. Decoding accepts every representation, including TF's rule that a `*_val` list
shorter than the element count repeats its last value (an empty list means zeros).

IR attr values are Python values (see `tensorweave.ir`); a function-body attr whose value is
supplied at instantiation (`AttrValue.placeholder`) becomes an `AttrPlaceholder`.

What the IR does not hold, and is therefore not carried through IR round trips:
`NodeDef.experimental_debug_info`/`experimental_type`, dimension names, `GraphDef.debug_info`,
the library's `gradient`/`registered_gradients`, `VersionDef.bad_consumers`, and a FunctionDef
signature's attr declarations, descriptions, `arg_attr` and `resource_arg_unique_id`.

Attr types of registered ops come from the op registry, which hands this module its lookup
when it is created (`use_op_defs`), so this layer never imports the ops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave import dtypes, ir
from tensorweave.dtypes import DType
from tensorweave.proto import (
    attr_value_pb2,
    function_pb2,
    graph_pb2,
    node_def_pb2,
    op_def_pb2,
    tensor_pb2,
    tensor_shape_pb2,
    versions_pb2,
)
from tensorweave.shapes import TensorShape, as_shape


class AttrPlaceholder(str):
    """An attr of a function-body node whose value is the function's attr named `self`.

    `AttrValue(placeholder="T")` ↔ `AttrPlaceholder("T")`. It subclasses `str` so it prints
    and compares as the name, but `attr_to_proto` writes it back as a placeholder, never as `s`.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"AttrPlaceholder({str.__repr__(self)})"


# ---------------------------------------------------------------------------------------------
# shapes
# ---------------------------------------------------------------------------------------------
def shape_to_proto(shape: TensorShape | Any) -> tensor_shape_pb2.TensorShapeProto:
    """A TensorShapeProto of `shape` (anything `as_shape` takes); unknown dims are -1."""
    shape = as_shape(shape)
    proto = tensor_shape_pb2.TensorShapeProto()
    dims = shape.as_tuple()
    if dims is None:
        proto.unknown_rank = True
        return proto
    for d in dims:
        proto.dim.add(size=-1 if d is None else d)
    return proto


def shape_from_proto(proto: tensor_shape_pb2.TensorShapeProto) -> TensorShape:
    """The TensorShape of `proto`: unknown rank, or dims with -1 read as unknown."""
    if proto.unknown_rank:
        return TensorShape(None)
    return TensorShape([None if d.size < 0 else d.size for d in proto.dim])


# ---------------------------------------------------------------------------------------------
# tensors
# ---------------------------------------------------------------------------------------------
# NOTE: the dtypes TF's make_tensor_proto packs into tensor_content; matching it is what makes
# TF-written Consts round-trip to equal messages.
_CONTENT_DTYPES = frozenset([
    dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16,
    dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint32, dtypes.uint64,
])

_VAL_FIELD = {
    dtypes.float16: "half_val", dtypes.bfloat16: "half_val", dtypes.float32: "float_val",
    dtypes.float64: "double_val", dtypes.int8: "int_val", dtypes.int16: "int_val",
    dtypes.int32: "int_val", dtypes.uint8: "int_val", dtypes.uint16: "int_val",
    dtypes.int64: "int64_val", dtypes.uint32: "uint32_val", dtypes.uint64: "uint64_val",
    dtypes.bool_: "bool_val", dtypes.complex64: "scomplex_val",
    dtypes.complex128: "dcomplex_val", dtypes.string: "string_val",
    dtypes.resource: "resource_handle_val", dtypes.variant: "variant_val",
}


def tensor_to_proto(array: Any, dtype: DType | None = None) -> tensor_pb2.TensorProto:
    """A TensorProto holding `array` (a numpy array, or anything `np.asarray` takes).

    Args:
      array: the values. Strings may be str (written as UTF-8) or bytes, in a `U`/`S`/object
        array; resource/variant tensors are object arrays of the element messages.
      dtype: the proto's dtype; default: inferred from `array.dtype`. Values are cast to it.

    Raises:
      TypeError: the dtype cannot be encoded (quantized types, bfloat16 without ml_dtypes) or an
        element does not fit it.
    """
    arr = np.asarray(array)
    dtype = (_dtype_of(arr) if dtype is None else dtypes.as_dtype(dtype)).base_dtype
    proto = tensor_pb2.TensorProto(tensor_shape=shape_to_proto(arr.shape))
    proto.dtype = dtype.as_datatype_enum  # type: ignore[assignment]
    if dtype not in _VAL_FIELD:
        raise TypeError(f"Cannot encode a tensor of dtype {dtype.name}")
    if dtype in (dtypes.string, dtypes.resource, dtypes.variant):
        _append_objects(proto, dtype, arr)
        return proto
    arr = arr.astype(dtype.np_dtype, copy=False)
    if arr.size > 1 and dtype in _CONTENT_DTYPES:
        proto.tensor_content = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
    else:
        getattr(proto, _VAL_FIELD[dtype]).extend(_to_val_list(arr.ravel(), dtype))
    return proto


# NOTE: dtypes.as_dtype does not map numpy's uint32/uint64; look them up here first.
_WIDE_UNSIGNED = {np.dtype(np.uint32): dtypes.uint32, np.dtype(np.uint64): dtypes.uint64}


def _dtype_of(arr: np.ndarray) -> DType:
    """The DType of a numpy array, whatever its byte order."""
    npd = arr.dtype if arr.dtype.byteorder in "=|" else arr.dtype.newbyteorder("=")
    return _WIDE_UNSIGNED.get(npd) or dtypes.as_dtype(npd)


def _to_val_list(flat: np.ndarray, dtype: DType) -> list:
    """The Python values of `flat` as its `*_val` field stores them."""
    if dtype in (dtypes.float16, dtypes.bfloat16):
        return flat.view(np.uint16).astype(np.int32).tolist()
    if dtype.is_complex:
        return np.stack([flat.real, flat.imag], axis=-1).ravel().tolist()
    return flat.tolist()


def _append_objects(proto: tensor_pb2.TensorProto, dtype: DType, arr: np.ndarray) -> None:
    """Appends each element of a string/resource/variant array to its `*_val` field."""
    field = getattr(proto, _VAL_FIELD[dtype])
    if dtype == dtypes.string:
        field.extend(_as_bytes(v) for v in arr.ravel().tolist())
        return
    for v in arr.ravel().tolist():
        field.add().CopyFrom(v)


def _as_bytes(value: Any) -> bytes:
    """`value` as bytes: str as UTF-8, bytes-like as is."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray, memoryview, np.bytes_)):
        return bytes(value)
    raise TypeError(f"Expected str or bytes, got {type(value).__name__}")


# NOTE: a `*_val` list shorter than the element count repeats its last value, so a message of
# a few bytes could ask for terabytes; a tensor whose values are not all stored may decode to
# at most this many bytes (the gRPC message limit: what the wire could have carried).
MAX_EXPANDED_BYTES = 1 << 30


def tensor_from_proto(proto: tensor_pb2.TensorProto) -> np.ndarray:
    """The values of `proto` as a new, writable numpy array of its dtype and shape.

    String tensors give object arrays of `bytes`; resource and variant tensors object arrays of
    their element messages; half/bfloat16 `half_val` entries are read as 16-bit patterns.

    Raises:
      TypeError: the dtype has no numpy type here (quantized types, bfloat16 without ml_dtypes).
      ValueError: the shape is not fully defined, the stored values do not fit it, or repeating
        them would take more than `MAX_EXPANDED_BYTES`.
    """
    dtype = dtypes.as_dtype(proto.dtype).base_dtype
    shape = shape_from_proto(proto.tensor_shape)
    if not shape.is_fully_defined():
        raise ValueError(f"A TensorProto must have a fully defined shape, got {shape}")
    if dtype not in _VAL_FIELD:
        raise TypeError(f"Cannot decode a tensor of dtype {dtype.name}")
    n = shape.num_elements() or 0
    if proto.tensor_content:
        flat = _from_content(proto.tensor_content, dtype, n)
    else:
        flat = _from_val(proto, dtype, n)
    return flat.reshape(shape.as_tuple())


def _from_content(content: bytes, dtype: DType, n: int) -> np.ndarray:
    """`n` elements of `dtype` from raw little-endian bytes."""
    if dtype.np_dtype.kind == "O":
        raise ValueError(f"tensor_content cannot hold a {dtype.name} tensor")
    wire = dtype.np_dtype.newbyteorder("<")
    if len(content) != n * wire.itemsize:
        raise ValueError(f"tensor_content holds {len(content)} bytes; {n} {dtype.name} "
                         f"elements need {n * wire.itemsize}")
    return np.frombuffer(content, dtype=wire).astype(dtype.np_dtype)


def _from_val(proto: tensor_pb2.TensorProto, dtype: DType, n: int) -> np.ndarray:
    """`n` elements from the dtype's `*_val` field, repeating its last value (zeros if empty)."""
    values = getattr(proto, _VAL_FIELD[dtype])
    _check_expansion(len(values), n, dtype)
    if dtype.np_dtype.kind == "O":
        return _fill_objects(values, dtype, n)
    flat = _VAL_READERS.get(dtype, _read_plain)(values, dtype)
    if len(flat) > n:
        raise ValueError(f"{_VAL_FIELD[dtype]} holds {len(flat)} values for {n} elements")
    if len(flat) == 0:
        return np.zeros(n, dtype=dtype.np_dtype)
    if len(flat) < n:
        flat = np.concatenate([flat, np.repeat(flat[-1:], n - len(flat))])
    return flat


def _check_expansion(stored: int, n: int, dtype: DType) -> None:
    """Raises ValueError when `stored` values would repeat into more than MAX_EXPANDED_BYTES."""
    if stored >= n:
        return
    size = n * dtype.np_dtype.itemsize  # NOTE: object arrays: one pointer per element
    if size > MAX_EXPANDED_BYTES:
        raise ValueError(f"A TensorProto of {n} {dtype.name} elements stores {stored} values; "
                         f"repeating them would take {size} bytes, more than the "
                         f"{MAX_EXPANDED_BYTES} allowed")


def _read_plain(values, dtype: DType) -> np.ndarray:
    return np.asarray(values, dtype=dtype.np_dtype)


def _read_half(values, dtype: DType) -> np.ndarray:
    return np.asarray(values, dtype=np.int32).astype(np.uint16).view(dtype.np_dtype)


def _read_complex(values, dtype: DType) -> np.ndarray:
    parts = np.asarray(values, dtype=dtype.real_dtype.np_dtype)
    if len(parts) % 2:
        raise ValueError(f"{_VAL_FIELD[dtype]} must hold (real, imag) pairs, got {len(parts)}")
    return parts.view(dtype.np_dtype)  # (re, im) pairs are the complex memory layout


_VAL_READERS: dict[DType, Callable[[Any, DType], np.ndarray]] = {
    dtypes.float16: _read_half, dtypes.bfloat16: _read_half,
    dtypes.complex64: _read_complex, dtypes.complex128: _read_complex,
}


def _fill_objects(values, dtype: DType, n: int) -> np.ndarray:
    """An object array of `n` elements (bytes or message copies), last value repeated."""
    items: list = [bytes(v) if dtype == dtypes.string else _copy(v) for v in values]
    if len(items) > n:
        raise ValueError(f"{_VAL_FIELD[dtype]} holds {len(items)} values for {n} elements")
    if not items and n:
        items = [b"" if dtype == dtypes.string else None]
    out = np.empty(n, dtype=object)
    out[: len(items)] = items
    for i in range(len(items), n):
        out[i] = items[-1] if dtype == dtypes.string else _copy(items[-1])
    return out


def _copy(message):
    if message is None:
        return None
    clone = type(message)()
    clone.CopyFrom(message)
    return clone


# ---------------------------------------------------------------------------------------------
# attrs
# ---------------------------------------------------------------------------------------------
def attr_to_proto(value: Any, attr_type: str | None = None) -> attr_value_pb2.AttrValue:
    """An AttrValue holding the IR attr `value`.

    Args:
      value: int, float, bool, str/bytes, DType, TensorShape, np.ndarray, ir.NameAttrList,
        AttrPlaceholder, None (an empty AttrValue), or a list/tuple of one of these.
      attr_type: the attr's TF type ("int", "list(type)", ...). It decides the field (an int
        for a "float" attr, an empty list); without it the field is inferred from the value's
        Python type (bool before int; a list's kind from its elements).

    Raises:
      TypeError: `value` does not fit `attr_type`, or no field fits it.
    """
    proto = attr_value_pb2.AttrValue()
    if isinstance(value, AttrPlaceholder):
        proto.placeholder = str(value)
    elif value is None:
        pass
    elif attr_type is None:
        _set_inferred(proto, value)
    elif attr_type.startswith("list(") and attr_type.endswith(")"):
        _set_list(proto, _checked_list(value, attr_type), attr_type[5:-1])
    else:
        _set_scalar(proto, value, attr_type)
    return proto


def _checked_list(value: Any, attr_type: str) -> list:
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"Expected a list for a {attr_type} attr, got {value!r}")
    return list(value)


def _set_scalar(proto: attr_value_pb2.AttrValue, value: Any, kind: str) -> None:
    """Sets the oneof field of `kind` ("int", "type", ...) from `value`."""
    entry = _KINDS.get(kind)
    if entry is None:
        raise TypeError(f"Unknown attr type {kind!r}")
    if isinstance(value, (list, tuple)) and kind not in ("shape", "tensor"):
        raise TypeError(f"Expected a single {kind} value, got the list {value!r}")
    field, convert = entry
    if field in _MESSAGE_FIELDS:
        getattr(proto, field).CopyFrom(convert(value))
    else:
        setattr(proto, field, convert(value))


def _set_list(proto: attr_value_pb2.AttrValue, items: list, kind: str) -> None:
    """Sets `proto.list` to `items`, all written as `kind` ("int", "shape", ...)."""
    to_element = _KINDS.get(kind)
    if to_element is None:
        raise TypeError(f"Unknown attr type 'list({kind})'")
    proto.list.SetInParent()
    field, convert = to_element
    target = getattr(proto.list, field)
    converted = [convert(v) for v in items]
    if field in _MESSAGE_FIELDS:
        for msg in converted:
            target.add().CopyFrom(msg)
    else:
        target.extend(converted)


def _func_proto(value: Any) -> attr_value_pb2.NameAttrList:
    """A NameAttrList of an ir.NameAttrList (or of a bare function name)."""
    if isinstance(value, str):
        return attr_value_pb2.NameAttrList(name=value)
    if not isinstance(value, ir.NameAttrList):
        raise TypeError(f"Expected an ir.NameAttrList for a func attr, got {value!r}")
    proto = attr_value_pb2.NameAttrList(name=value.name)
    for key, v in value.attr.items():
        proto.attr[key].CopyFrom(attr_to_proto(v))
    return proto


def _type_enum(value: Any) -> int:
    return dtypes.as_dtype(value).as_datatype_enum


def _int(value: Any) -> int:
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise TypeError(f"Expected an int, got {value!r}")
    return int(value)


# attr kind -> (AttrValue / ListValue field, converter of one Python value to that field).
_KINDS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "string": ("s", _as_bytes),
    "int": ("i", _int),
    "float": ("f", float),
    "bool": ("b", bool),
    "type": ("type", _type_enum),
    "shape": ("shape", shape_to_proto),
    "tensor": ("tensor", tensor_to_proto),
    "func": ("func", _func_proto),
}

_MESSAGE_FIELDS = frozenset(["shape", "tensor", "func"])


def _kind_of(value: Any) -> str | None:
    """The attr kind ("int", "shape", ...) a Python value is written as, or None."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "float"
    if isinstance(value, (str, bytes)):
        return "string"
    for cls, kind in ((DType, "type"), (TensorShape, "shape"), (np.ndarray, "tensor"),
                      (ir.NameAttrList, "func")):
        if isinstance(value, cls):
            return kind
    return None


def _set_inferred(proto: attr_value_pb2.AttrValue, value: Any) -> None:
    """Sets the field the Python type of `value` implies (lists by their elements' kinds)."""
    if isinstance(value, (list, tuple)):
        _set_list(proto, list(value), _list_kind(value))
        return
    kind = _kind_of(value)
    if kind is None:
        raise TypeError(f"Cannot write {type(value).__name__} {value!r} as an attr value")
    _set_scalar(proto, value, kind)


def _list_kind(items) -> str:
    """The one kind of all items; ints mixed with floats are floats; empty lists are ints."""
    kinds = {_kind_of(v) for v in items}
    if kinds == {"int", "float"}:
        return "float"
    kind = "int" if not kinds else kinds.pop() if len(kinds) == 1 else None
    if kind is None:
        raise TypeError(f"Cannot write the list {list(items)!r} as one attr list kind")
    return kind


def attr_from_proto(proto: attr_value_pb2.AttrValue) -> Any:
    """The IR value of an AttrValue (None when no field is set).

    Strings are decoded as UTF-8 when valid, else kept as bytes; `type` gives a DType (TypeError
    for a DataType tensorweave does not know), `shape` a TensorShape, `tensor` an np.ndarray,
    `func` an ir.NameAttrList, `placeholder` an AttrPlaceholder, `list` a Python list.
    """
    which = proto.WhichOneof("value")
    if which is None:
        return None
    if which == "placeholder":
        return AttrPlaceholder(proto.placeholder)
    if which == "list":
        return _list_from_proto(proto.list)
    return _READERS[which](getattr(proto, which))


def _list_from_proto(lst: attr_value_pb2.AttrValue.ListValue) -> list:
    for field in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
        values = getattr(lst, field)
        if len(values):
            return [_READERS[field](v) for v in values]
    return []


def _text(raw: bytes) -> str | bytes:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def _func_from_proto(proto: attr_value_pb2.NameAttrList) -> ir.NameAttrList:
    return ir.NameAttrList(proto.name, {k: attr_from_proto(v) for k, v in proto.attr.items()})


_READERS: dict[str, Callable[[Any], Any]] = {
    "s": _text, "i": int, "f": float, "b": bool, "type": dtypes.as_dtype,
    "shape": shape_from_proto, "tensor": tensor_from_proto, "func": _func_from_proto,
}


# ---------------------------------------------------------------------------------------------
# nodes, functions, graphs
# ---------------------------------------------------------------------------------------------
_op_defs: list[Callable[[str], Any]] = []   # the op registry's lookup, once it exists


def use_op_defs(lookup: Callable[[str], Any]) -> None:
    """Sets how attr types of registered ops are found (`lookup(op_type) -> OpDef | None`)."""
    _op_defs[:] = [lookup]


def node_to_proto(node: ir.NodeDef, op_def: Any = None) -> node_def_pb2.NodeDef:
    """A NodeDef of an IR node. Attr types come from `op_def` (a registry OpDef), else from
    the registered op of `node.op`; attrs the schema does not declare (`_class`, unknown ops)
    are inferred from their values.

    Raises:
      TypeError: an attr value does not fit its declared type; the message names node and attr.
    """
    if op_def is None and _op_defs:
        op_def = _op_defs[0](node.op)
    specs = op_def.attrs if op_def is not None else {}
    proto = node_def_pb2.NodeDef(name=node.name, op=node.op, input=node.inputs,
                                 device=node.device)
    for key, value in node.attrs.items():
        spec = specs.get(key)
        attr_type = spec.type if spec is not None else None
        try:
            proto.attr[key].CopyFrom(attr_to_proto(value, attr_type))
        except (TypeError, ValueError) as e:
            raise TypeError(f"Node '{node.name}' (op {node.op}): cannot write attr '{key}' = "
                            f"{value!r} as {attr_type or 'an attr value'}: {e}") from e
    return proto


def node_from_proto(proto: node_def_pb2.NodeDef) -> ir.NodeDef:
    """The IR node of a NodeDef (see the module docstring for what is not kept).

    Raises:
      TypeError, ValueError: an attr holds a value tensorweave cannot represent; the message
        names node and attr.
    """
    attrs = {}
    for key, value in proto.attr.items():
        try:
            attrs[key] = attr_from_proto(value)
        except (TypeError, ValueError) as e:
            raise type(e)(f"Node '{proto.name}' (op {proto.op}): attr '{key}': {e}") from e
    return ir.NodeDef(proto.name, proto.op, list(proto.input), proto.device, attrs)


def _arg_to_proto(arg: ir.ArgDefIR) -> op_def_pb2.OpDef.ArgDef:
    proto = op_def_pb2.OpDef.ArgDef(name=arg.name, type_attr=arg.type_attr,
                                    number_attr=arg.number_attr,
                                    type_list_attr=arg.type_list_attr, is_ref=arg.is_ref)
    if arg.type is not None:
        proto.type = dtypes.as_dtype(arg.type).as_datatype_enum  # type: ignore[assignment]
    return proto


def _arg_from_proto(proto: op_def_pb2.OpDef.ArgDef) -> ir.ArgDefIR:
    dtype = dtypes.as_dtype(proto.type) if proto.type else None
    return ir.ArgDefIR(proto.name, dtype, proto.type_attr, proto.number_attr,
                       proto.type_list_attr, proto.is_ref)


def function_to_proto(fn: ir.FunctionDef) -> function_pb2.FunctionDef:
    """A FunctionDef of an IR function: signature (name, args, control outputs in `control_ret`
    order, is_stateful), function attrs, body nodes, `ret` and `control_ret`.

    Raises:
      TypeError: a body node's attr does not fit its type (see `node_to_proto`).
    """
    signature = op_def_pb2.OpDef(
        name=fn.name, input_arg=[_arg_to_proto(a) for a in fn.input_args],
        output_arg=[_arg_to_proto(a) for a in fn.output_args],
        control_output=list(fn.control_ret), is_stateful=fn.is_stateful,
    )
    proto = function_pb2.FunctionDef(signature=signature,
                                     node_def=[node_to_proto(n) for n in fn.nodes],
                                     ret=fn.ret, control_ret=fn.control_ret)
    for key, value in fn.attrs.items():
        proto.attr[key].CopyFrom(attr_to_proto(value))
    return proto


def function_from_proto(proto: function_pb2.FunctionDef) -> ir.FunctionDef:
    """The IR function of a FunctionDef (see the module docstring for what is not kept)."""
    sig = proto.signature
    return ir.FunctionDef(
        name=sig.name,
        input_args=[_arg_from_proto(a) for a in sig.input_arg],
        output_args=[_arg_from_proto(a) for a in sig.output_arg],
        attrs={k: attr_from_proto(v) for k, v in proto.attr.items()},
        nodes=[node_from_proto(n) for n in proto.node_def],
        ret=dict(proto.ret), control_ret=dict(proto.control_ret),
        is_stateful=sig.is_stateful,
    )


def graph_to_proto(graph: ir.GraphDef) -> graph_pb2.GraphDef:
    """A GraphDef of an IR graph: nodes in order, `versions`, and a `library` only when the
    graph has functions (so TF files without one re-encode to equal messages).

    Raises:
      TypeError: a node's attr does not fit its type (see `node_to_proto`).
    """
    proto = graph_pb2.GraphDef(
        node=[node_to_proto(n) for n in graph.nodes],
        versions=versions_pb2.VersionDef(producer=graph.producer,
                                         min_consumer=graph.min_consumer),
    )
    if graph.library:
        proto.library.function.extend(function_to_proto(f) for f in graph.library)
    return proto


def graph_from_proto(proto: graph_pb2.GraphDef) -> ir.GraphDef:
    """The IR graph of a GraphDef (versions, nodes, library functions).

    Raises:
      TypeError, ValueError: a node holds an attr tensorweave cannot represent.
    """
    return ir.GraphDef(
        nodes=[node_from_proto(n) for n in proto.node],
        library=[function_from_proto(f) for f in proto.library.function],
        producer=proto.versions.producer,
        min_consumer=proto.versions.min_consumer,
    )


__all__ = [
    "AttrPlaceholder", "shape_to_proto", "shape_from_proto", "tensor_to_proto",
    "tensor_from_proto", "attr_to_proto", "attr_from_proto", "node_to_proto",
    "node_from_proto", "function_to_proto", "function_from_proto", "graph_to_proto",
    "graph_from_proto",
]
