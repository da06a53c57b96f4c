"""`py_func` / `py_function`: run a Python function as an op (PyFunc, PyFuncStateless,
EagerPyFunc).

The function is kept in a per-process registry under a token ("pyfunc_0", ...) that the op
carries as its `token` attr. These ops are LOCAL ONLY: a graph sent to another process (a
server, a saved GraphDef) names a token that process does not have, so running it there fails
with NotFoundError — by design, a graph received over the network cannot run arbitrary Python.
Tokens are released when their graph is garbage collected.
"""

from __future__ import annotations

import itertools
import threading
import weakref

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import register_op


def _unknown_shapes(ctx):
    return [None] * len(ctx.attr("Tout") or [])


for _name, _stateful in (("PyFunc", True), ("PyFuncStateless", False),
                         ("EagerPyFunc", True)):
    register_op(_name, inputs=["input: Tin"], outputs=["output: Tout"],
                attrs=["token: string", "Tin: list(type) >= 0", "Tout: list(type) >= 0"],
                shape_fn=_unknown_shapes, stateful=_stateful)


class FuncRegistry:
    """Python callables by token (per process). Thread-safe."""

    def __init__(self):
        self._funcs: dict[str, object] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()

    def insert(self, func) -> str:
        with self._lock:
            token = f"pyfunc_{next(self._ids)}"
            self._funcs[token] = func
        return token

    def remove(self, token: str) -> None:
        with self._lock:
            self._funcs.pop(token, None)

    def get(self, token: str):
        """The function of `token`, or None when this process has none."""
        with self._lock:
            return self._funcs.get(token)

    def size(self) -> int:
        with self._lock:
            return len(self._funcs)


_py_funcs = FuncRegistry()


def lookup(token: str):
    """The registered function of `token` (None when unknown in this process)."""
    return _py_funcs.get(token)


def _register(func, graph) -> str:
    token = _py_funcs.insert(func)
    weakref.finalize(graph, _py_funcs.remove, token)
    return token


def _internal_py_func(func, inp, Tout, op_type, name):  # noqa: N803 - TF's argument name
    is_list = isinstance(Tout, (list, tuple))
    touts = [dtypes.as_dtype(t).base_dtype for t in (Tout if is_list else [Tout])]
    inp = [convert_to_tensor(x) for x in (inp or [])]
    graph = inp[0].graph if inp else get_default_graph()
    token = _register(func, graph)
    result = apply_op(op_type, inp, token=token, Tout=touts, name=name or op_type)
    if not touts:
        return result                   # the Operation, as TF
    outs = result[0] if isinstance(result, list) else [result]
    return outs if is_list else outs[0]


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803 - TF's argument name
    """Wraps `func(*numpy arrays)` as an op (TF1's `tf.py_func`).

    `func` receives numpy arrays and must return values whose dtypes match `Tout` exactly
    (e.g. a float32 output needs np.float32, not a Python float). A list/tuple `Tout` gives a
    list of tensors; a single dtype gives one tensor. Runs only in this process (see module
    docstring).
    """
    return _internal_py_func(func, inp, Tout, "PyFunc" if stateful else "PyFuncStateless",
                             name)


def py_function(func, inp, Tout, name=None):  # noqa: N803 - TF's argument name
    """`tf.py_function` (EagerPyFunc): like `py_func`, its arguments have a `.numpy()` method."""
    return _internal_py_func(func, inp, Tout, "EagerPyFunc", name)


eager_py_func = py_function


class EagerArray(np.ndarray):
    """A numpy array with `.numpy()`, standing in for the eager tensors TF passes."""

    def numpy(self) -> np.ndarray:
        return np.asarray(self).view(np.ndarray)


__all__ = ["py_func", "py_function"]
