"""TF1 graph-mode answers to TF's eager-context queries: `executing_eagerly()` is False;
`init_scope()` builds ops outside any control-flow context and control dependencies (as TF's
init_scope does in a graph)."""

from __future__ import annotations

import contextlib

from tensorweave.framework.graph import get_default_graph


def executing_eagerly() -> bool:
    """False: tensorweave always builds graphs."""
    return False


@contextlib.contextmanager
def init_scope():
    """Ops created inside are lifted out of cond/while contexts and control dependencies."""
    with get_default_graph().control_dependencies(None):
        yield


def container(container_name):
    """TF1 `tf.container`: the default graph's `container(container_name)` context."""
    return get_default_graph().container(container_name)


__all__ = ["executing_eagerly", "init_scope", "container"]
