"""Fetch and feed mapping: nested fetch structures to flat name lists and back.

Fetches may be Tensors, Operations, names, objects with `_as_graph_element`, or types
registered with `register_session_run_conversion_functions`, nested in lists, tuples,
namedtuples and dicts; the result comes back in the same structure.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.fetch_conversions import (  # noqa: F401  (re-exported)
    CONVERSIONS,
    feed_pairs,
    register_session_run_conversion_functions,
)
from tensorweave.framework.operation import Operation, Tensor


class FetchMapper:
    """Flattens `fetches` into unique tensor names and op-name targets; rebuilds results."""

    def __init__(self, graph, fetches):
        self.graph = graph
        self.fetch_names: list[str] = []
        self.targets: list[str] = []
        self._index: dict[str, int] = {}
        self.build = self._mapper(fetches)
        self.single = (len(self.fetch_names) == 1 and not self.targets
                       and not isinstance(fetches, (list, tuple, dict))
                       and not any(isinstance(fetches, t) for t, _, _ in CONVERSIONS))

    def _mapper(self, f):
        if f is None:
            raise TypeError('Argument `fetch` = None has invalid type "NoneType". Cannot be None')
        for t, fetch_fn, _ in CONVERSIONS:
            if isinstance(f, t):
                parts, rebuild = fetch_fn(f)
                subs = [self._mapper(p) for p in parts]
                return lambda vals, subs=subs, rb=rebuild: rb([s(vals) for s in subs])
        if isinstance(f, (list, tuple)) and not isinstance(f, str):
            subs = [self._mapper(x) for x in f]
            ctor = type(f)
            if hasattr(f, "_fields"):
                return lambda vals, subs=subs, t=ctor: t(*[s(vals) for s in subs])
            kind = list if isinstance(f, list) else tuple
            return lambda vals, subs=subs, kind=kind: kind(s(vals) for s in subs)
        if isinstance(f, dict):
            subs = {k: self._mapper(v) for k, v in f.items()}
            ctor = type(f)
            return lambda vals, subs=subs, t=ctor: t((k, s(vals)) for k, s in subs.items())
        return self._leaf(f)

    def _leaf(self, f):
        try:
            el = self.graph.as_graph_element(f, allow_tensor=True, allow_operation=True)
        except TypeError as e:
            raise TypeError(f"Argument `fetch` = {f} has invalid type "
                            f"\"{type(f).__name__}\" must be a string or Tensor. ({e})") from None
        except (ValueError, KeyError) as e:
            # NOTE: TF turns the graph's KeyError for an unknown name into a ValueError
            raise ValueError(f"Argument `fetch` = {f} cannot be interpreted as a Tensor. "
                             f"({e})") from None
        if isinstance(el, Operation):
            if el.name not in self.targets:
                self.targets.append(el.name)
            return _none
        name = el.name
        if name not in self._index:
            self._index[name] = len(self.fetch_names)
            self.fetch_names.append(name)
        i = self._index[name]
        return lambda vals, i=i: vals[i]


def _none(vals):
    return None


def fetch_key(fetches):
    """A hashable key for a fetch structure (identity for tensors and ops)."""
    if isinstance(fetches, (list, tuple)):
        return (type(fetches), tuple(fetch_key(f) for f in fetches))
    if isinstance(fetches, dict):
        return (type(fetches), tuple((k, fetch_key(v)) for k, v in fetches.items()))
    return fetches


def feed_converter(tensor: Tensor):
    """Returns `conv(value) -> ndarray` checking `value` against `tensor`'s dtype and shape.

    Raises (from conv):
      TypeError: a Tensor as a value, or a value that does not fit the dtype.
      ValueError: a shape incompatible with the tensor's static shape (TF's message).
    """
    dt = tensor.dtype.base_dtype
    np_dt = dt.np_dtype if dt != dtypes.string else None
    dims = tensor.shape.as_tuple()
    name = tensor.name

    def conv(value):
        if isinstance(value, Tensor):
            raise TypeError("The value of a feed cannot be a tf.Tensor object. Acceptable feed "
                            "values include Python scalars, strings, lists, numpy ndarrays, "
                            "or TensorHandles.")
        arr = _to_array(value, dt, np_dt, name)
        if dims is not None and not _fits(arr.shape, dims):
            raise ValueError(f"Cannot feed value of shape {arr.shape!r} for Tensor '{name}', "
                             f"which has shape '{_fmt(dims)}'")
        return arr

    return conv


def _to_array(value, dt, np_dt, name):
    if np_dt is None:
        from tensorweave.ops.constant_op import to_numpy

        return to_numpy(value, dtypes.string)
    if type(value) is np.ndarray and value.dtype == np_dt:
        return value
    try:
        arr = np.asarray(value)
        if arr.dtype.kind in "USO" or (arr.dtype.kind == "f" and dt.is_integer and
                                       not np.all(np.mod(arr, 1) == 0)):
            raise TypeError
        return arr.astype(np_dt, copy=False)
    except (TypeError, ValueError):
        raise TypeError(f"Type of feed value {value!r} with type {type(value)} is not "
                        f"compatible with Tensor type {dt.name}. Is {name} fed the right "
                        "value?") from None


def _fits(shape, dims) -> bool:
    return len(shape) == len(dims) and all(d is None or d == s for s, d in zip(shape, dims))


def _fmt(dims) -> str:
    inner = ", ".join("?" if d is None else str(d) for d in dims)
    return f"({inner},)" if len(dims) == 1 else f"({inner})"
