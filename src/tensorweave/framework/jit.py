"""`tf.xla.experimental.jit_scope`: mark the ops built inside for XLA compilation (TF's
`experimental_jit_scope`, the same attrs, so a GraphDef written here means the same to TF).

Ops created inside get `_XlaCompile` (a bool, or `compile_ops(node_def)`'s answer),
`_XlaSeparateCompiledGradients`, and — in the outermost scope only — `_XlaScope =
"jit_scope_<k>"`, k counting the graph's outermost scopes, so nested scopes fuse with their
parent. Gradients of marked ops are marked too (autodiff/gradients.py), in the forward op's
scope, or in a scope of their own (`<scope>_grad_<op name>`) with
`separate_compiled_gradients=True`. The master's mark_for_compilation pass reads them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

_COUNTER_KEY = "__xla_scope"


class _ScopeCounter:
    def __init__(self):
        self.count = 0
        self.depth = 0


@contextlib.contextmanager
def experimental_jit_scope(compile_ops=True,
                           separate_compiled_gradients: bool = False) -> Iterator[None]:
    """Ops created in this scope are compiled with XLA (where the CPU device may cluster).

    Args:
      compile_ops: a bool, or a callable from a NodeDef to a bool, deciding per op.
      separate_compiled_gradients: give each op's gradient its own compilation scope.

    Example:
      with tf.xla.experimental.jit_scope():
          y = tf.tanh(tf.matmul(x, w) + b)      # one XlaLaunch at run time
    """
    from tensorweave.framework.graph import get_default_graph

    graph = get_default_graph()
    flag = (lambda nd: bool(compile_ops(nd))) if callable(compile_ops) else bool(compile_ops)
    attrs: dict[str, object] = {"_XlaCompile": flag,
                                "_XlaSeparateCompiledGradients":
                                    bool(separate_compiled_gradients)}
    counters = graph.get_collection(_COUNTER_KEY)
    counter = counters[0] if counters else None
    if counter is None:
        counter = _ScopeCounter()
        graph.add_to_collection(_COUNTER_KEY, counter)
    if counter.depth == 0:
        attrs["_XlaScope"] = f"jit_scope_{counter.count}"
        counter.count += 1
    counter.depth += 1
    try:
        with graph._attr_scope(attrs):
            yield
    finally:
        counter.depth -= 1


def gradient_attrs(op) -> dict | None:
    """The attrs the gradient ops of `op` get (None when `op` is not marked): TF's
    `_MaybeCompile` in gradients_util."""
    attrs = getattr(op, "_attrs", {})
    if attrs.get("_XlaCompile") is not True:
        return None
    scope = attrs.get("_XlaScope")
    if scope is None:
        return {"_XlaCompile": True}
    if attrs.get("_XlaSeparateCompiledGradients"):
        scope = f"{scope}_grad_{op.name}"
    return {"_XlaCompile": True, "_XlaScope": scope}


__all__ = ["experimental_jit_scope", "gradient_attrs"]
