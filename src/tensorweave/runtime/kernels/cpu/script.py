"""CPU kernels of PyFunc, PyFuncStateless and EagerPyFunc: call a registered Python function.

Exceptions from the function map to TF's codes (ValueError/TypeError → InvalidArgument,
StopIteration/IndexError → OutOfRange, NotImplementedError → Unimplemented, MemoryError →
ResourceExhausted, an OpError keeps its class, anything else → Unknown). Results must have
exactly the declared dtypes, as in TF.
"""

from __future__ import annotations

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.registry import register_kernel

_CODES = [
    ((ValueError, TypeError), errors.InvalidArgumentError),
    ((StopIteration, IndexError), errors.OutOfRangeError),
    ((NotImplementedError,), errors.UnimplementedError),
    ((MemoryError,), errors.ResourceExhaustedError),
]


def _lookup(token: str):
    from tensorweave.ops.script_ops import lookup

    return lookup(token)


def _py_func_kernel(eager: bool):
    def factory(node):
        token = node.attr("token")
        touts = list(node.attr("Tout") or [])
        func = _lookup(token)

        def run(*args):
            f = func if func is not None else _lookup(token)
            if f is None:
                raise errors.NotFoundError(
                    None, None, f"Python function {token} is not registered in this process "
                                "(py_func ops only run in the process that built them)")
            if eager:
                args = [_eager(a) for a in args]
            try:
                ret = f(*args)
            except errors.OpError:
                raise
            except Exception as e:  # noqa: BLE001 - mapped to TF's error codes
                raise _map_error(token, e) from e
            return _outputs(token, ret, touts)

        return run

    return factory


def _eager(a):
    from tensorweave.ops.script_ops import EagerArray

    return np.asarray(a).view(EagerArray)


def _map_error(token, e):
    for types, cls in _CODES:
        if isinstance(e, types):
            return cls(None, None, f"{type(e).__name__}: {e}\n(in {token})")
    return errors.UnknownError(None, None, f"{type(e).__name__}: {e}\n(in {token})")


def _outputs(token, ret, touts):
    if not touts:
        return None
    if len(touts) == 1 and not isinstance(ret, (list, tuple)):
        ret = [ret]
    if not isinstance(ret, (list, tuple)) or len(ret) != len(touts):
        n = len(ret) if isinstance(ret, (list, tuple)) else 1
        raise errors.InvalidArgumentError(
            None, None, f"{token} returns {n} values, but expects to see {len(touts)} values.")
    outs = []
    for k, (v, dt) in enumerate(zip(ret, touts)):
        arr = _as_array(v, dt)
        if arr.dtype != dt.np_dtype:
            raise errors.InvalidArgumentError(
                None, None, f"{k}-th value returned by {token} is {_dtype_name(arr.dtype)}, "
                            f"but expects {dt.name}")
        outs.append(arr)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _as_array(v, dt):
    if isinstance(v, (bytes, str)) or (dt.np_dtype == np.dtype(object)):
        arr = np.asarray(v, dtype=object)
        return arr
    arr = np.asarray(v)
    return arr.view(np.ndarray) if type(arr) is not np.ndarray else arr


def _dtype_name(np_dtype) -> str:
    from tensorweave import dtypes

    try:
        return dtypes.as_dtype(np_dtype).name
    except TypeError:
        return str(np_dtype)


for _op, _is_eager in (("PyFunc", False), ("PyFuncStateless", False), ("EagerPyFunc", True)):
    register_kernel(_op)(_py_func_kernel(_is_eager))
