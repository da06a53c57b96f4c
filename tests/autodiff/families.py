"""Imports every op family and CPU kernel module, so every registered op can be checked.

Families still being written may fail to import; their failures are kept (not raised) so the
tests of the other families run, and a case needing a missing op skips naming it.
"""

from __future__ import annotations

import importlib
import pkgutil

import tensorweave  # noqa: F401
import tensorweave.ops as _ops_pkg
import tensorweave.runtime.kernels.cpu as _kernels_pkg

IMPORT_FAILURES: dict[str, str] = {}


def _load(pkg) -> None:
    for mod in pkgutil.iter_modules(pkg.__path__):
        name = f"{pkg.__name__}.{mod.name}"
        try:
            importlib.import_module(name)
        except Exception as e:  # noqa: BLE001 - another family's work in progress
            IMPORT_FAILURES[name] = f"{type(e).__name__}: {e}"


_load(_ops_pkg)
_load(_kernels_pkg)


def missing_ops(names) -> list[str]:
    """The op types among `names` that have no OpDef or no CPU kernel yet."""
    from tensorweave.ops.registry import OPS
    from tensorweave.runtime.kernels.registry import has_kernel

    return [n for n in names if n not in OPS or not has_kernel(n)]
