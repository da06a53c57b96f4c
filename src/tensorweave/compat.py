"""`tf.compat`: text/bytes helpers, number-type tuples, shape-dimension helpers, forward
compatibility, and `v1` (tensorweave's namespace is TF1's, so `tf.compat.v1` is tensorweave
itself and `tf.compat.v1.<name>` works).

The package root sets `v1` when it imports this module (so this module need not import the
root, which would make the two import each other).
"""

from __future__ import annotations

import codecs as _codecs
import contextlib as _contextlib
import datetime as _datetime
import numbers as _numbers

import numpy as _np

v1 = None  # set to the tensorweave module by tensorweave/__init__.py

bytes_or_text_types = (bytes, str)
integral_types = (_numbers.Integral, _np.integer)
real_types = (_numbers.Real, _np.integer, _np.floating)
complex_types = (_numbers.Complex, _np.number)


def as_bytes(bytes_or_text, encoding="utf-8") -> bytes:
    """`bytes_or_text` as bytes (str encoded with `encoding`).

    Raises:
      TypeError: neither bytes, bytearray nor str.
    """
    encoding = _codecs.lookup(encoding).name
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding="utf-8") -> str:
    """`bytes_or_text` as str (bytes decoded with `encoding`).

    Raises:
      TypeError: neither bytes nor str.
    """
    encoding = _codecs.lookup(encoding).name
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value, encoding="utf-8") -> str:
    """bytes decoded, anything else `str(value)`."""
    if isinstance(value, bytes):
        return as_str(value, encoding=encoding)
    return str(value)


def path_to_str(path):
    """A path-like object as str; anything else unchanged."""
    if hasattr(path, "__fspath__"):
        path = as_str_any(path.__fspath__())
    return path


def dimension_value(dimension):
    """The int (or None) of a `Dimension`; ints and None pass through."""
    return getattr(dimension, "value", dimension)


def dimension_at_index(shape, index):
    """`shape[index]` as a Dimension; Dimension(None) when the rank is unknown."""
    from tensorweave.shapes import Dimension, TensorShape

    shape = TensorShape(shape)
    if shape.rank is None:
        return Dimension(None)
    return shape.dims[index] if isinstance(shape.dims[index], Dimension) else Dimension(
        shape.dims[index])


# NOTE: tensorweave speaks TF 1.15's graph format; its forward-compatibility horizon is that
# release's, so `forward_compatible(y, m, d)` says whether 1.15 consumers understand a feature.
_HORIZON = [_datetime.date(2019, 10, 15)]


def forward_compatible(year, month, day) -> bool:
    """True when the horizon is past year-month-day (see TF's compat.forward_compatible)."""
    return _HORIZON[-1] > _datetime.date(year, month, day)


@_contextlib.contextmanager
def forward_compatibility_horizon(year, month, day):
    """Moves the horizon to year-month-day inside the block (for tests)."""
    _HORIZON.append(_datetime.date(year, month, day))
    try:
        yield
    finally:
        _HORIZON.pop()
