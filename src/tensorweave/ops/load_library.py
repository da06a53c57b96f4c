"""`tf.load_op_library` and `tf.load_file_system_library`.

TensorFlow dlopens a shared object of C++ kernels built against its own C++ ABI; tensorweave
cannot run those. What it can load is the same thing written for tensorweave: a Python file
(`.py`) that declares op types with `tf.register_op` and their numpy kernels with
`tf.register_kernel`. `load_op_library("my_ops.py")` runs that file once and returns a module
holding a wrapper per op type it registered, named as TF's generated wrappers are
(`ZeroOut` → `zero_out(*inputs, name=None, **attrs)`), as TF's call returns a module of
wrappers for the library's ops.
"""

from __future__ import annotations

import importlib.util
import os
import re
import types

from tensorweave import errors
from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import OPS

_LOADED: dict[str, types.ModuleType] = {}


def _not_loadable(path: str, what: str) -> Exception:
    if not os.path.exists(path):
        return errors.NotFoundError(
            None, None, f"{path}: cannot open shared object file: No such file or directory")
    return errors.NotFoundError(
        None, None,
        f"{path}: tensorweave cannot load {what} compiled for TensorFlow (the shared object "
        f"links against TensorFlow's C++ ABI). Write the op in Python instead: declare it "
        f"with tf.register_op, give it a numpy kernel with tf.register_kernel, and pass "
        f"the .py file to tf.load_op_library.")


def snake_case(op_type: str) -> str:
    """TF's wrapper name of an op type: `ZeroOut` → `zero_out`, `BatchMatMulV2` →
    `batch_mat_mul_v2`."""
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", op_type)
    return s.lower()


def _wrapper(op_type: str):
    def wrapper(*inputs, name=None, **attrs):
        return apply_op(op_type, *inputs, name=name, **attrs)

    wrapper.__name__ = snake_case(op_type)
    wrapper.__doc__ = f"Builds a `{op_type}` op (loaded by tf.load_op_library)."
    return wrapper


def load_op_library(library_filename: str) -> types.ModuleType:
    """Runs the Python op library `library_filename` (once per path) and returns a module of
    wrappers for the op types it registered.

    Raises:
      NotFoundError: the file does not exist, or it is not a `.py` file (a TensorFlow
        shared object), naming why.
      Any error the file itself raises while it runs.
    """
    path = os.path.abspath(library_filename)
    if not path.endswith(".py") or not os.path.isfile(path):
        raise _not_loadable(library_filename, "an op library")
    if path in _LOADED:
        return _LOADED[path]
    before = set(OPS.names())
    spec = importlib.util.spec_from_file_location(
        f"tensorweave_op_library_{len(_LOADED)}", path)
    if spec is None or spec.loader is None:
        raise _not_loadable(library_filename, "an op library")
    source = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(source)
    module = types.ModuleType(os.path.splitext(os.path.basename(path))[0])
    module.__file__ = path
    for op_type in sorted(set(OPS.names()) - before):
        setattr(module, snake_case(op_type), _wrapper(op_type))
    _LOADED[path] = module
    return module


def load_file_system_library(library_filename: str) -> None:
    """TF1 `tf.load_file_system_library`: a file-system plugin is C++ built for TensorFlow,
    which tensorweave cannot load.

    Raises:
      NotFoundError: always, saying whether the file is missing or why it cannot be loaded.
    """
    raise _not_loadable(library_filename, "a file-system library")


__all__ = ["load_op_library", "load_file_system_library"]
