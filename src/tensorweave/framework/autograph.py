"""`tf.autograph` as far as a graph-only runtime can honestly offer it.

TF's AutoGraph rewrites a function's Python source so that `if`/`while`/`for` over tensors
become `tf.cond`/`tf.while_loop`. tensorweave has no source converter. `to_graph` therefore
returns the function unconverted, which builds the same graph as TF's conversion exactly when
the function's Python control flow does not depend on tensor values (control flow written
with `tf.cond`/`tf.while_loop`, or over Python values). Where it does, the call fails as soon
as a tensor is used as a Python bool or iterated, and the error says that no conversion took
place, instead of building a different graph.
"""

from __future__ import annotations

import functools

_TENSOR_CONTROL_FLOW = ("Using a `tf.Tensor` as a Python `bool`",
                        "Tensor objects are only iterable",
                        "Cannot iterate over a tensor")


def do_not_convert(func=None):
    """Decorator marking `func` as not to be converted; returns it unchanged (nothing is
    ever converted here). `do_not_convert()` with no argument returns the decorator."""
    if func is None:
        return do_not_convert
    return func


def to_graph(entity, recursive=True, arg_values=None, arg_types=None,
             experimental_optional_features=None):
    """`entity` (a function or method), unconverted, wrapped so that Python control flow over
    tensors fails with a clear message (see the module docstring).

    Raises (when the returned function is called):
      NotImplementedError: the function used a tensor as a Python bool or iterated over one,
        which needs AutoGraph's conversion.
    """
    if not callable(entity):
        raise ValueError(f"Expected a Python function or method, got {entity!r}")

    @functools.wraps(entity)
    def unconverted(*args, **kwargs):
        try:
            return entity(*args, **kwargs)
        except TypeError as e:
            if not str(e).startswith(_TENSOR_CONTROL_FLOW):
                raise
            raise NotImplementedError(
                f"tf.autograph.to_graph({getattr(entity, '__name__', entity)}): tensorweave "
                f"has no AutoGraph converter, so Python control flow over tensors is not "
                f"turned into graph ops; write it with tf.cond / tf.while_loop. ({e})") from e

    return unconverted


__all__ = ["do_not_convert", "to_graph"]
