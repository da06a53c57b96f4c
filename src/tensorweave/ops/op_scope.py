"""TF's wrapper naming idiom: helper ops under a scope, the main op named like the scope.

TensorFlow's Python wrappers write

    with ops.name_scope(name, "one_hot", [indices, ...]) as name:
        on_value = ops.convert_to_tensor(1, dtype, name="on_value")   # "one_hot/on_value"
        return gen_array_ops.one_hot(..., name=name)                   # "one_hot"

relying on `create_op` treating a name that ends in "/" as exact. `OpScope` gives the same
names: helper ops created inside the block land under the scope, and `scope.apply(op_type,
...)` creates the main op named exactly as the scope.
"""

from __future__ import annotations

from tensorweave.framework.graph import get_default_graph
from tensorweave.ops.apply import apply_op


class OpScope:
    """`with OpScope(name, default_name, values) as s:` ... `return s.apply("OneHot", ...)`.

    `s.name` is the scope string ("outer/one_hot/"), usable as the `name` of a nested wrapper
    so that wrapper's main op takes this scope's name (as TF's `zeros_like` passes its scope
    to `zeros`).
    """

    def __init__(self, name, default_name=None, values=()):
        self._name = name if name else default_name
        self._values = values or ()
        self._graph = None
        self._ctx = []
        self.name = ""

    def __enter__(self) -> OpScope:
        graph = _graph_of(self._values) or get_default_graph()
        self._graph = graph
        base = self._name
        if base.endswith("/"):
            full = base[:-1]
        else:
            full = graph.unique_name(base, mark_as_used=False)
        self.name = full + "/"
        self._enter(graph.as_default())
        self._enter(graph.scopes.name_scope(self.name))
        return self

    def _enter(self, ctx) -> None:
        ctx.__enter__()
        self._ctx.append(ctx)

    def __exit__(self, *exc) -> None:
        while self._ctx:
            self._ctx.pop().__exit__(*exc)

    def apply(self, op_type: str, *args, **kwargs):
        """`apply_op(op_type, ...)` with the op named exactly as this scope."""
        parent, _, leaf = self.name[:-1].rpartition("/")
        with self._graph.scopes.name_scope(parent + "/" if parent else ""):
            return apply_op(op_type, *args, name=leaf, **kwargs)

    def named(self, fn, *args, **kwargs):
        """Calls a tensor-returning `fn(*args, name=leaf)` in the parent scope (for wrappers
        such as `identity` whose op should carry this scope's name)."""
        parent, _, leaf = self.name[:-1].rpartition("/")
        with self._graph.scopes.name_scope(parent + "/" if parent else ""):
            return fn(*args, name=leaf, **kwargs)


def _graph_of(values):
    for v in values:
        g = getattr(v, "graph", None)
        if g is not None:
            return g
    return None


__all__ = ["OpScope"]
