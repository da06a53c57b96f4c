"""`tf.contrib.framework.arg_scope`: default keyword arguments for the functions decorated
with `add_arg_scope`, set for a `with` block (TF 1.15's contrib/framework arg_scope.py).

    with arg_scope([fully_connected], activation_fn=tf.nn.relu) as sc:
        net = fully_connected(x, 32)       # activation_fn=tf.nn.relu unless given
    with arg_scope(sc):                    # re-enter a captured scope
        ...

A scope is a dict from a function's key (`arg_scope_func_key`) to its defaults; nested scopes
copy and extend the enclosing one. Arguments given at the call win over the scope's.
"""

from __future__ import annotations

import contextlib
import functools
import inspect

_ARGSTACK: list[dict] = [{}]
_DECORATED_OPS: dict[str, list[str]] = {}


def _get_arg_stack() -> list[dict]:
    return _ARGSTACK


def current_arg_scope() -> dict:
    """The innermost scope: {function key: {argument: default}}."""
    return _ARGSTACK[-1]


def arg_scope_func_key(op) -> str:
    """The key a decorated function is stored under (`op._key_op`, else `str(op)`)."""
    return getattr(op, "_key_op", str(op))


def _kwarg_names(func) -> list[str]:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.default is not inspect.Parameter.empty]


@contextlib.contextmanager
def arg_scope(list_ops_or_scope, **kwargs):
    """Sets `kwargs` as defaults of every function in `list_ops_or_scope` for the block, or
    re-enters a scope dict captured from an earlier `arg_scope`.

    Raises:
      ValueError: a reused scope given together with kwargs, or a function not decorated
        with `add_arg_scope`.
      TypeError: `list_ops_or_scope` is neither a list/tuple nor a dict.
    """
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError("When attempting to re-use a scope by suppling a dictionary, "
                             "kwargs must be empty.")
        scope = list_ops_or_scope.copy()
    else:
        if not isinstance(list_ops_or_scope, (list, tuple)):
            raise TypeError("list_ops_or_scope must either be a list/tuple or reused scope "
                            "(i.e. dict)")
        scope = current_arg_scope().copy()
        for op in list_ops_or_scope:
            key = arg_scope_func_key(op)
            if not has_arg_scope(op):
                raise ValueError(f"{key} is not decorated with @add_arg_scope")
            merged = dict(scope.get(key, {}))
            merged.update(kwargs)
            scope[key] = merged
    _ARGSTACK.append(scope)
    try:
        yield scope
    finally:
        _ARGSTACK.pop()


def add_arg_scope(func):
    """Decorates `func` so that the enclosing `arg_scope`s supply its keyword defaults."""
    key = arg_scope_func_key(func)

    @functools.wraps(func)
    def func_with_args(*args, **kwargs):
        scope = current_arg_scope()
        if key in scope:
            merged = dict(scope[key])
            merged.update(kwargs)
            kwargs = merged
        return func(*args, **kwargs)

    _DECORATED_OPS[key] = _kwarg_names(func)
    func_with_args._key_op = key
    return func_with_args


def has_arg_scope(func) -> bool:
    """Whether `func` was decorated with `add_arg_scope`."""
    return arg_scope_func_key(func) in _DECORATED_OPS


def arg_scoped_arguments(func) -> list[str]:
    """The keyword arguments of a decorated `func` (those an arg_scope can set)."""
    assert has_arg_scope(func)
    return _DECORATED_OPS[arg_scope_func_key(func)]
