"""The default session: a per-thread stack that `Session.as_default()` pushes to.

It lives with the graph (as TF's framework/ops.py keeps it) because `Tensor.eval()` and
`Operation.run()` run the default session, while sessions themselves sit layers above.
"""

from __future__ import annotations

import contextlib
import threading


class DefaultSessionStack(threading.local):
    """This thread's sessions made default, innermost last."""

    def __init__(self):
        self.stack: list = []

    def get(self):
        return self.stack[-1] if self.stack else None

    @contextlib.contextmanager
    def controller(self, sess):
        """Makes `sess` (and its graph) the default inside the `with` block."""
        self.stack.append(sess)
        try:
            with sess.graph.as_default():
                yield sess
        finally:
            if sess in self.stack:
                self.stack.remove(sess)


DEFAULT_SESSIONS = DefaultSessionStack()


def get_default_session():
    """The innermost session made default on this thread, or None."""
    return DEFAULT_SESSIONS.get()


def session_for(graph, session=None):
    """`session`, else the default session, checked to run `graph`.

    Raises: ValueError when there is none or it runs another graph.
    """
    sess = session or get_default_session()
    if sess is None:
        raise ValueError("Cannot evaluate tensor using `eval()`: No default session is "
                         "registered. Use `with sess.as_default()` or pass an explicit session "
                         "to `eval(session=sess)`")
    if sess.graph is not graph:
        raise ValueError("Cannot use the given session to evaluate tensor: the tensor's graph "
                         "is different from the session's graph.")
    return sess


__all__ = ["DEFAULT_SESSIONS", "DefaultSessionStack", "get_default_session", "session_for"]
