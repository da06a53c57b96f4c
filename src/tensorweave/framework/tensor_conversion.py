"""`convert_to_tensor` and the registry of conversion functions for non-Tensor types.

Values no registered function takes (numbers, lists, numpy arrays) become constants through
the fallback that ops/constant_op.py registers (`register_fallback_conversion`), as TF's
constant_op registers its conversions: the graph layer never reaches up to the ops.
"""

from __future__ import annotations

from collections.abc import Callable

from tensorweave import dtypes

_CONVERTERS: list[tuple[type, Callable, int]] = []
_FALLBACK: list[Callable] = []   # constant(value, dtype=None, name=...), once registered


def register_fallback_conversion(fn: Callable) -> None:
    """Sets the conversion of values no registered function takes (the constant op)."""
    _FALLBACK[:] = [fn]


def register_tensor_conversion_function(base_type, conversion_func, priority: int = 100):
    """Registers `conversion_func(value, dtype=None, name=None, as_ref=False) -> Tensor`."""
    _CONVERTERS.append((base_type, conversion_func, priority))
    _CONVERTERS.sort(key=lambda e: e[2])


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, as_ref=False,
                      dtype_hint=None):
    """A Tensor for `value` (a Tensor, a Variable, a numpy/Python value, ...).

    Raises:
      ValueError: `value` is a Tensor whose dtype differs from `dtype`.
      TypeError: `value` cannot be converted.
    """
    from tensorweave.framework.operation import Tensor

    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    preferred_dtype = preferred_dtype or dtype_hint
    if isinstance(value, Tensor):
        _check_dtype(value, dtype)
        return value
    for base, fn, _ in _CONVERTERS:
        if isinstance(value, base):
            out = fn(value, dtype=dtype, name=name, as_ref=as_ref)
            _check_dtype(out, dtype)
            return out
    if not _FALLBACK:
        raise TypeError(f"Cannot convert {value!r} to a Tensor: no constant op registered "
                        "(import tensorweave)")
    constant = _FALLBACK[0]
    if dtype is None and preferred_dtype is not None:
        try:
            return constant(value, dtype=preferred_dtype, name=name or "Const")
        except (TypeError, ValueError):
            pass
    return constant(value, dtype=dtype, name=name or "Const")


def _check_dtype(tensor, dtype) -> None:
    if dtype is not None and not dtype.is_compatible_with(tensor.dtype.base_dtype) and \
            tensor.dtype != dtype:
        raise ValueError(
            f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype "
            f"{tensor.dtype.name}: {tensor!r}"
        )


def convert_n_to_tensor(values, dtype=None, name=None):
    return [convert_to_tensor(v, dtype=dtype, name=name) for v in values]


def is_tensor_like(value) -> bool:
    from tensorweave.framework.operation import Tensor

    return isinstance(value, Tensor) or any(isinstance(value, b) for b, _, _ in _CONVERTERS)
