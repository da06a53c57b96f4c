"""Nested element structures of tf.data: tuples and dicts of components (TF's `nest` rules
for datasets: dict keys in sorted order; lists are values, not structure)."""

from __future__ import annotations

from dataclasses import dataclass

from tensorweave import dtypes
from tensorweave.shapes import TensorShape, as_shape


@dataclass(frozen=True)
class Spec:
    """One component's dtype and static shape."""

    dtype: dtypes.DType
    shape: TensorShape


def is_nested(x) -> bool:
    return isinstance(x, (tuple, dict))


def flatten(structure) -> list:
    """The leaves of `structure` in order (dicts by sorted key)."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten(structure[k])]
    if isinstance(structure, tuple):
        return [leaf for x in structure for leaf in flatten(x)]
    return [structure]


def pack(structure, flat: list):
    """`structure` with its leaves replaced by `flat`'s items, in order."""
    it = iter(flat)
    out = _pack(structure, it)
    return out


def _pack(structure, it):
    if isinstance(structure, dict):
        vals = {k: _pack(structure[k], it) for k in sorted(structure)}
        return type(structure)((k, vals[k]) for k in structure) if type(structure) is not dict \
            else {k: vals[k] for k in structure}
    if isinstance(structure, tuple):
        vals = [_pack(x, it) for x in structure]
        return type(structure)(*vals) if hasattr(structure, "_fields") else tuple(vals)
    return next(it)


def map_structure(fn, structure):
    return pack(structure, [fn(x) for x in flatten(structure)])


def normalize(value):
    """Lists returned by a map function become tuples (as TF 1.x)."""
    if isinstance(value, list):
        return tuple(normalize(v) for v in value)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(normalize(v) for v in value)
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    return value


def specs_from(types, shapes) -> object:
    """A Spec structure from parallel `output_types` / `output_shapes` structures."""
    flat_t = flatten(types)
    flat_s = flatten(shapes) if shapes is not None else [None] * len(flat_t)
    return pack(types, [Spec(dtypes.as_dtype(t), TensorShape(None) if s is None else as_shape(s))
                        for t, s in zip(flat_t, flat_s)])
