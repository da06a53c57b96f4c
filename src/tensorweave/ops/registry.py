"""The op registry: every op type is declared once, as TensorFlow declares it.

An op is declared with TF's spec strings, so definitions read like TensorFlow's REGISTER_OP:

    register_op(
        "MatMul",
        inputs=["a: T", "b: T"],
        outputs=["product: T"],
        attrs=["transpose_a: bool = false", "transpose_b: bool = false",
               "T: {half, float, double, int32, int64, complex64, complex128}"],
        shape_fn=matmul_shape,
    )

Input/output specs: `name: T` (type attr), `name: float` (fixed type), `name: N * T` (list of
N tensors of type T), `name: Tlist` (a `list(type)` attr), `name: Ref(T)` (a reference).
Attr specs: `name: type`, `{float, double}` (allowed types), `{'SAME', 'VALID'}` (allowed
strings), `int >= 1`, `list(int)`, `bool`, `float`, `string`, `shape`, `tensor`, `func`,
`list(type)`, `list(shape)`, each optionally `= default`.

The registry refuses a duplicate and names where the first registration was made.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tensorweave import dtypes
from tensorweave.ops.traits import NONE, OpTraits, builtin_traits
from tensorweave.proto import convert
from tensorweave.registry import Registry
from tensorweave.shapes import TensorShape

NO_DEFAULT = object()

_TYPE_SETS = {
    "numbertype": "half bfloat16 float double int8 int16 int32 int64 uint8 uint16 uint32 "
                  "uint64 complex64 complex128",
    "realnumbertype": "half bfloat16 float double int8 int16 int32 int64 uint8 uint16 uint32 "
                      "uint64",
    "floattype": "half bfloat16 float double",
    "inttype": "int8 int16 int32 int64 uint8 uint16 uint32 uint64",
    "complextype": "complex64 complex128",
    "quantizedtype": "qint8 quint8 qint32",
}


@dataclass(frozen=True)
class ArgSpec:
    """One input or output of an op."""

    name: str
    dtype: dtypes.DType | None = None   # a fixed type
    type_attr: str = ""                 # `T`
    number_attr: str = ""               # `N` for `N * T`
    type_list_attr: str = ""            # `Tlist` for heterogeneous lists
    is_ref: bool = False

    @property
    def is_list(self) -> bool:
        return bool(self.number_attr or self.type_list_attr)


@dataclass(frozen=True)
class AttrSpec:
    name: str
    type: str                           # "type", "int", "list(int)", "string", ...
    default: Any = NO_DEFAULT
    allowed: tuple | None = None        # allowed types or strings
    minimum: int | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


ShapeFn = Callable[["Any"], Any]


@dataclass
class OpDef:
    """An op type's schema. `shape_fn(ctx)` returns one TensorShape per output (or one)."""

    name: str
    inputs: list[ArgSpec]
    outputs: list[ArgSpec]
    attrs: dict[str, AttrSpec]
    shape_fn: ShapeFn | None = None
    stateful: bool = False
    allows_uninitialized_input: bool = False
    is_commutative: bool = False
    doc: str = ""
    defined_at: str = ""
    extra: dict = field(default_factory=dict)
    traits: OpTraits = NONE

    @property
    def has_ref_inputs(self) -> bool:
        return any(a.is_ref for a in self.inputs)

    @property
    def is_stateful(self) -> bool:
        return self.stateful


class OpRegistry:
    """One table of OpDefs, keyed by op type name."""

    def __init__(self):
        self._ops: Registry[str, OpDef] = Registry("Op type")

    def register(self, op_def: OpDef) -> OpDef:
        """Raises: AlreadyRegisteredError (a ValueError) naming the first registration."""
        first = self._ops.get(op_def.name)
        msg = None if first is None else (
            f"Op type '{op_def.name}' is already registered (first at {first.defined_at})")
        return self._ops.register(op_def.name, op_def, op_def.defined_at or None, msg)

    def get(self, name: str) -> OpDef | None:
        return self._ops.get(name)

    def lookup(self, name: str) -> OpDef:
        op_def = self._ops.get(name)
        if op_def is None:
            from tensorweave.errors import NotFoundError

            raise NotFoundError(None, None, f"Op type not registered '{name}'")
        return op_def

    def names(self) -> list[str]:
        return sorted(self._ops)

    def traits(self, name: str) -> OpTraits:
        """The traits of op type `name` (NONE for a type that is not registered)."""
        op_def = self._ops.get(name)
        return op_def.traits if op_def is not None else builtin_traits(name)

    def __contains__(self, name: str) -> bool:
        return name in self._ops


OPS = OpRegistry()
op_traits = OPS.traits
convert.use_op_defs(OPS.get)


def _caller_site(depth: int = 2) -> str:
    f = sys._getframe(depth)
    return f"{f.f_code.co_filename}:{f.f_lineno}"


def register_op(
    name: str,
    inputs: Sequence[str] = (),
    outputs: Sequence[str] = (),
    attrs: Sequence[str] = (),
    shape_fn: ShapeFn | None = None,
    stateful: bool = False,
    allows_uninitialized_input: bool = False,
    is_commutative: bool = False,
    doc: str = "",
    traits: OpTraits | None = None,
) -> OpDef:
    """Declares op type `name` (see the module docstring for the spec syntax). `traits`
    default to the built-in table's (ops/traits.py) for TF's op types.

    Raises:
      ValueError: the op type is already registered, or a spec does not parse.
    """
    attr_specs = [parse_attr(a) for a in attrs]
    attr_map = {a.name: a for a in attr_specs}
    op_def = OpDef(
        name=name,
        inputs=[parse_arg(s, attr_map) for s in inputs],
        outputs=[parse_arg(s, attr_map) for s in outputs],
        attrs=attr_map,
        shape_fn=shape_fn,
        stateful=stateful,
        allows_uninitialized_input=allows_uninitialized_input,
        is_commutative=is_commutative,
        doc=doc,
        defined_at=_caller_site(),
        traits=traits if traits is not None else builtin_traits(name),
    )
    return OPS.register(op_def)


def full_attrs(op_def: OpDef, attrs: dict) -> dict:
    """`attrs` with the OpDef's defaults filled in (imported GraphDefs may omit them)."""
    out = dict(attrs)
    for a in op_def.attrs.values():
        if a.name not in out and a.has_default:
            out[a.name] = a.default
    return out


def arg_dtypes(specs, attrs) -> list:
    """The dtype of each tensor of `specs` (an OpDef's inputs or outputs) under `attrs`."""
    out = []
    for spec in specs:
        if spec.type_list_attr:
            out.extend(attrs.get(spec.type_list_attr, []))
            continue
        dt = spec.dtype if spec.dtype is not None else attrs.get(spec.type_attr)
        if dt is not None and spec.is_ref:
            dt = dt._as_ref
        out.extend([dt] * (int(attrs.get(spec.number_attr, 1)) if spec.number_attr else 1))
    return out


_ARG_RE = re.compile(r"^\s*(\w+)\s*:\s*(?:(\w+)\s*\*\s*)?(Ref\(\s*(\w+)\s*\)|\w+)\s*$")


def parse_arg(spec: str, attrs: dict[str, AttrSpec]) -> ArgSpec:
    m = _ARG_RE.match(spec)
    if not m:
        raise ValueError(f"Cannot parse arg spec {spec!r}")
    name, number, typ, ref_inner = m.group(1), m.group(2) or "", m.group(3), m.group(4)
    is_ref = ref_inner is not None
    typ = ref_inner if is_ref else typ
    if typ in attrs:
        if attrs[typ].type == "list(type)":
            return ArgSpec(name, type_list_attr=typ, is_ref=is_ref)
        return ArgSpec(name, type_attr=typ, number_attr=number, is_ref=is_ref)
    return ArgSpec(name, dtype=_dtype_from_spec(typ), number_attr=number, is_ref=is_ref)


def _dtype_from_spec(word: str) -> dtypes.DType:
    word = word.strip()
    if word.startswith("DT_"):
        word = word[3:].lower()
    return dtypes.as_dtype({"half": "float16"}.get(word, word))


_ATTR_RE = re.compile(r"^\s*(\w+)\s*:\s*(.+?)\s*(?:(?<![<>])=\s*(.+?))?\s*$")


def parse_attr(spec: str) -> AttrSpec:
    m = _ATTR_RE.match(spec)
    if not m:
        raise ValueError(f"Cannot parse attr spec {spec!r}")
    name, typ, default = m.group(1), m.group(2), m.group(3)
    minimum = None
    mm = re.match(r"^(.*?)\s*>=\s*(-?\d+)$", typ)
    if mm:
        typ, minimum = mm.group(1).strip(), int(mm.group(2))
    allowed = None
    if typ.startswith("{"):
        typ, allowed = _parse_allowed(typ)
    elif typ in _TYPE_SETS:
        allowed = tuple(_dtype_from_spec(w) for w in _TYPE_SETS[typ].split())
        typ = "type"
    elif typ.startswith("list(") and typ[5:-1] in _TYPE_SETS:
        allowed = tuple(_dtype_from_spec(w) for w in _TYPE_SETS[typ[5:-1]].split())
        typ = "list(type)"
    elif typ.startswith("list({"):     # list({float, int32}): a type list from a set
        allowed = _parse_allowed(typ[5:-1])[1]
        typ = "list(type)"
    value = NO_DEFAULT if default is None else parse_default(default, typ)
    return AttrSpec(name, typ, value, allowed, minimum)


def _parse_allowed(text: str) -> tuple[str, tuple]:
    items = [w.strip() for w in text.strip("{} ").split(",") if w.strip()]
    if items and items[0][0] in "'\"":
        return "string", tuple(w.strip("'\"") for w in items)
    found: list = []
    for w in items:
        found.extend(_dtype_from_spec(x) for x in _TYPE_SETS.get(w, w).split())
    return "type", tuple(found)


def parse_default(text: str, typ: str):
    text = text.strip()
    if typ in ("type",) or text.startswith("DT_"):
        return _dtype_from_spec(text)
    if typ == "list(type)":
        inner = [w for w in text.strip("[]").split(",") if w.strip()]
        return [_dtype_from_spec(w) for w in inner]
    if typ == "bool":
        if text.lower() not in ("true", "false"):
            raise ValueError(f"Bad bool default {text!r} (true or false)")
        return text.lower() == "true"
    if typ == "shape":
        return TensorShape(None) if text in ("", "{ unknown_rank: true }") else TensorShape(
            ast.literal_eval(text)
        )
    if text in ("true", "false"):
        return text == "true"
    value = ast.literal_eval(text)
    if typ == "float":
        return float(value)
    if typ == "list(float)":
        return [float(v) for v in value]
    return list(value) if isinstance(value, tuple) else value


def get_op_def(name: str) -> OpDef:
    """The registered OpDef of `name`. Raises NotFoundError when unknown."""
    return OPS.lookup(name)


__all__ = ["register_op", "get_op_def", "OpDef", "ArgSpec", "AttrSpec", "OPS", "NO_DEFAULT"]
