"""`DType`: TensorFlow's data types, with their enum values and numpy mapping.

Reference types (`float32_ref`) are the base enum + 100, as in TensorFlow. bfloat16 maps to
`ml_dtypes.bfloat16` when that package is installed; without it, the dtype exists (GraphDefs
and checkpoints keep it) but has no numpy type. ml_dtypes is imported on the first use of
bfloat16's numpy type, not with tensorweave: its import costs ~1.5 s of CPU, paid otherwise by
every process (a server task, a CLI call) that never touches bfloat16.
"""

from __future__ import annotations

import numpy as np

_LAZY = object()  # bfloat16's numpy type until ml_dtypes has been asked for it
_BF16 = _LAZY


def _bfloat16_numpy():
    """ml_dtypes' bfloat16 as a numpy dtype, or None when ml_dtypes is not installed."""
    try:  # optional: numpy has no bfloat16 of its own
        import ml_dtypes
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return np.dtype(ml_dtypes.bfloat16)

_REF_OFFSET = 100


class DType:
    """A tensor element type. Compare with `==`; instances are interned per enum value."""

    __slots__ = ("_enum", "_name", "_np")

    def __init__(self, enum: int, name: str, np_dtype):
        self._enum = enum
        self._name = name
        self._np = np_dtype

    # -- identity ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def as_datatype_enum(self) -> int:
        return self._enum

    def __repr__(self) -> str:
        return f"tf.{self._name}"

    def __str__(self) -> str:
        return f"<dtype: '{self._name}'>"

    def __eq__(self, other) -> bool:
        if isinstance(other, DType):
            return self._enum == other._enum
        try:
            return self._enum == as_dtype(other)._enum
        except TypeError:
            return False

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self._enum

    def __reduce__(self):
        return as_dtype, (self._enum,)

    # -- properties -------------------------------------------------------------------------
    @property
    def is_ref_dtype(self) -> bool:
        return self._enum > _REF_OFFSET

    @property
    def base_dtype(self) -> DType:
        return _BY_ENUM[self._enum - _REF_OFFSET] if self.is_ref_dtype else self

    @property
    def real_dtype(self) -> DType:
        return {complex64: float32, complex128: float64}.get(self.base_dtype, self.base_dtype)

    @property
    def _as_ref(self) -> DType:
        return self if self.is_ref_dtype else _BY_ENUM[self._enum + _REF_OFFSET]

    def _numpy(self):
        """The base type's numpy dtype, or None; resolves bfloat16's on first use."""
        base = self.base_dtype
        if base._np is _LAZY:
            base._np = _bfloat16_numpy()
            self._as_ref._np = base._np
            if base._np is not None:
                _NP_TO_DTYPE[base._np] = base
        return base._np

    @property
    def as_numpy_dtype(self):
        if self._numpy() is None:
            raise TypeError(f"{self.base_dtype.name} has no numpy type")
        return self._numpy().type

    @property
    def np_dtype(self) -> np.dtype:
        """The numpy dtype object (object dtype for strings)."""
        if self._numpy() is None:
            raise TypeError(f"{self.base_dtype.name} has no numpy type")
        return self._numpy()

    @property
    def is_floating(self) -> bool:
        return self.base_dtype in _FLOATS

    @property
    def is_integer(self) -> bool:
        return self.base_dtype in _INTS

    @property
    def is_unsigned(self) -> bool:
        return self.base_dtype in (uint8, uint16, uint32, uint64)

    @property
    def is_complex(self) -> bool:
        return self.base_dtype in (complex64, complex128)

    @property
    def is_bool(self) -> bool:
        return self.base_dtype == bool_

    @property
    def is_numeric(self) -> bool:
        return self.is_floating or self.is_integer or self.is_complex

    @property
    def size(self) -> int:
        npd = self._numpy()
        return 1 if npd is None or npd.kind == "O" else npd.itemsize

    @property
    def min(self):
        return self._limits()[0]

    @property
    def max(self):
        return self._limits()[1]

    def _limits(self):
        t = self.np_dtype
        if self.is_floating:
            info = np.finfo(t)
            return float(info.min), float(info.max)
        if self.is_integer:
            info = np.iinfo(t)
            return int(info.min), int(info.max)
        if self.is_bool:
            return False, True
        raise TypeError(f"{self.name} has no min/max")

    def is_compatible_with(self, other) -> bool:
        """TF's rule: `other` may be used where `self` is expected (float32 accepts float32_ref,
        float32_ref does not accept float32)."""
        other = as_dtype(other)
        return self._enum in (other._enum, other.base_dtype._enum)


_SPECS = [
    (1, "float32", np.dtype(np.float32)),
    (2, "float64", np.dtype(np.float64)),
    (3, "int32", np.dtype(np.int32)),
    (4, "uint8", np.dtype(np.uint8)),
    (5, "int16", np.dtype(np.int16)),
    (6, "int8", np.dtype(np.int8)),
    (7, "string", np.dtype(object)),
    (8, "complex64", np.dtype(np.complex64)),
    (9, "int64", np.dtype(np.int64)),
    (10, "bool", np.dtype(np.bool_)),
    (11, "qint8", None),
    (12, "quint8", None),
    (13, "qint32", None),
    (14, "bfloat16", _BF16),
    (15, "qint16", None),
    (16, "quint16", None),
    (17, "uint16", np.dtype(np.uint16)),
    (18, "complex128", np.dtype(np.complex128)),
    (19, "float16", np.dtype(np.float16)),
    (20, "resource", np.dtype(object)),
    (21, "variant", np.dtype(object)),
    (22, "uint32", np.dtype(np.uint32)),
    (23, "uint64", np.dtype(np.uint64)),
]

_BY_ENUM: dict[int, DType] = {}
_BY_NAME: dict[str, DType] = {}
for _enum, _name, _npd in _SPECS:
    _BY_ENUM[_enum] = _BY_NAME[_name] = DType(_enum, _name, _npd)
    _BY_ENUM[_enum + _REF_OFFSET] = _BY_NAME[_name + "_ref"] = DType(
        _enum + _REF_OFFSET, _name + "_ref", _npd
    )

float32 = _BY_NAME["float32"]
float64 = double = _BY_NAME["float64"]
float16 = half = _BY_NAME["float16"]
bfloat16 = _BY_NAME["bfloat16"]
int8 = _BY_NAME["int8"]
int16 = _BY_NAME["int16"]
int32 = _BY_NAME["int32"]
int64 = _BY_NAME["int64"]
uint8 = _BY_NAME["uint8"]
uint16 = _BY_NAME["uint16"]
uint32 = _BY_NAME["uint32"]
uint64 = _BY_NAME["uint64"]
bool_ = _BY_NAME["bool"]
string = _BY_NAME["string"]
complex64 = _BY_NAME["complex64"]
complex128 = _BY_NAME["complex128"]
qint8 = _BY_NAME["qint8"]
quint8 = _BY_NAME["quint8"]
qint32 = _BY_NAME["qint32"]
resource = _BY_NAME["resource"]
variant = _BY_NAME["variant"]
float32_ref = _BY_NAME["float32_ref"]
float64_ref = _BY_NAME["float64_ref"]
int32_ref = _BY_NAME["int32_ref"]
int64_ref = _BY_NAME["int64_ref"]

_FLOATS = frozenset([float16, bfloat16, float32, float64])
_INTS = frozenset([int8, int16, int32, int64, uint8, uint16, uint32, uint64])

_ALIASES = {
    "float": float32, "double": float64, "half": float16, "bool": bool_, "str": string,
    "bytes": string,
}

_NP_TO_DTYPE: dict[np.dtype, DType] = {
    d._np: d for d in _BY_ENUM.values()
    if d._np is not None and d._np is not _LAZY and not d.is_ref_dtype
    and d._enum not in (7, 20, 21)
}
_NP_TO_DTYPE[np.dtype(object)] = string
for _k in (np.dtype("U"), np.dtype("S")):
    _NP_TO_DTYPE[_k] = string

_PY_TO_DTYPE = {float: float32, int: int32, bool: bool_, str: string, bytes: string,
                complex: complex128}


def as_dtype(type_value) -> DType:
    """Converts a DType, enum int, name, numpy dtype or Python type to a `DType`.

    Raises:
      TypeError: `type_value` names no TensorFlow dtype.
    """
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, (int, np.integer)) and not isinstance(type_value, bool):
        if int(type_value) in _BY_ENUM:
            return _BY_ENUM[int(type_value)]
    elif isinstance(type_value, str):
        found = _BY_NAME.get(type_value) or _ALIASES.get(type_value)
        if found is not None:
            return found
    elif type_value in _PY_TO_DTYPE:
        return _PY_TO_DTYPE[type_value]
    try:
        npd = np.dtype(type_value)
    except TypeError:
        npd = None
    if npd is not None:
        if npd.kind in "USO":
            return string
        npd = npd.newbyteorder("=") if npd.byteorder not in ("=", "|") else npd
        if npd in _NP_TO_DTYPE:
            return _NP_TO_DTYPE[npd]
        if npd.name == "bfloat16" and bfloat16._numpy() == npd:
            return bfloat16
    raise TypeError(f"Cannot convert {type_value!r} to a tensorweave DType.")


def dtype_of_value(value) -> DType:
    """The DType TensorFlow infers for a Python or numpy value (floats → float32, ints → int32)."""
    if isinstance(value, np.ndarray):
        return as_dtype(value.dtype)
    if isinstance(value, np.generic):
        return as_dtype(value.dtype)
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int32 if -(2**31) <= value < 2**31 else int64
    if isinstance(value, float):
        return float32
    if isinstance(value, (str, bytes)):
        return string
    if isinstance(value, complex):
        return complex128
    raise TypeError(f"Cannot infer a dtype for {type(value).__name__}")


QUANTIZED_DTYPES = frozenset([qint8, quint8, qint32])

__all__ = [
    "DType", "as_dtype", "float32", "float64", "double", "float16", "half", "bfloat16",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool_",
    "string", "complex64", "complex128", "qint8", "quint8", "qint32", "resource", "variant",
    "float32_ref", "float64_ref", "int32_ref", "int64_ref", "QUANTIZED_DTYPES",
]
