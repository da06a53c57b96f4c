"""The cached read of the global step that hooks fetch (TF's `training_util` private helpers).

Hooks fetch `global_step/read + 0` ("a copy as a Tensor") rather than the variable, so one
tensor serves every hook of a step; it lives in the `global_step_read_op_cache` collection.
"""

from __future__ import annotations

from tensorweave.framework.graph import get_default_graph
from tensorweave.ops.variable_scope import get_global_step
from tensorweave.ops.variables import Variable

GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"


def get_global_step_read(graph=None):
    """The cached global-step read tensor of `graph`, or None.

    Raises:
      RuntimeError: the cache collection holds more than one tensor.
    """
    graph = graph or get_default_graph()
    found = graph.get_collection(GLOBAL_STEP_READ_KEY)
    if len(found) > 1:
        raise RuntimeError(f"There are multiple items in collection {GLOBAL_STEP_READ_KEY}. "
                           "There should be only one.")
    return found[0] if found else None


def get_or_create_global_step_read(graph=None):
    """The cached read of the global step, created under `<global_step>/` on first use;
    None when the graph has no global step."""
    graph = graph or get_default_graph()
    cached = get_global_step_read(graph)
    if cached is not None:
        return cached
    step = get_global_step(graph)
    if step is None:
        return None
    with graph.as_default(), graph.name_scope(None), graph.name_scope(step.op.name + "/"):
        # NOTE: initialized_value lets the read run before the initializer (Estimator builds
        # its model under this tensor's dependency).
        value = step.initialized_value() if isinstance(step, Variable) else step
        graph.add_to_collection(GLOBAL_STEP_READ_KEY, value + 0)
    return get_global_step_read(graph)


# TF's private names, which TF1 code (estimators, hooks) reaches for.
_get_global_step_read = get_global_step_read
_get_or_create_global_step_read = get_or_create_global_step_read
