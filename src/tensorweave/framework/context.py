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




def enable_eager_execution(config=None, device_policy=None, execution_mode=None) -> None:
    """TF1 `tf.enable_eager_execution`: refused, since tensorweave runs graphs only.

    Raises:
      NotImplementedError: always; the message says how to run the program in graph mode.
    """
    raise NotImplementedError(
        "tf.enable_eager_execution: tensorweave has no eager mode (it runs TF1 graphs "
        "only). Build the graph and run it with tf.Session instead of calling "
        "enable_eager_execution().")


def enable_v2_behavior() -> None:
    """TF2 behaviour (eager execution, resource variables, tf.function) is not supported.

    Raises:
      NotImplementedError: always.
    """
    raise NotImplementedError(
        "tf.enable_v2_behavior: tensorweave implements TF1 behaviour only (graphs and "
        "sessions); it has no eager mode or tf.function.")


def disable_v2_behavior() -> None:
    """TF1 `tf.disable_v2_behavior`: nothing to do, tensorweave already behaves as TF1 (graph
    mode, reference variables, TF1 control flow)."""


def disable_eager_execution() -> None:
    """Nothing to do: tensorweave always builds graphs."""


__all__ = ["executing_eagerly", "init_scope", "container", "enable_eager_execution",
           "enable_v2_behavior", "disable_v2_behavior", "disable_eager_execution"]
