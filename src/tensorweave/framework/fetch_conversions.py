"""How `Session.run` fetches and feeds composite values (SparseTensor, IndexedSlices, ...).

The types live with the graph, the session layers above; so the table is kept here, where
a type registers when it is defined, and the session's fetch mapping reads it.
"""

from __future__ import annotations

from collections.abc import Callable

CONVERSIONS: list[tuple[type, Callable, Callable | None]] = []


def register_session_run_conversion_functions(tensor_type, fetch_function,
                                              feed_function=None,
                                              feed_function_for_partial_run=None) -> None:
    """`fetch_function(obj) -> (list of tensors, rebuild(values) -> value)`;
    `feed_function(obj, value) -> list of (tensor, value)` pairs."""
    CONVERSIONS.append((tensor_type, fetch_function, feed_function))


def feed_pairs(key, value) -> list:
    """The (tensor, value) pairs that feeding `value` for `key` means."""
    for t, _, feed_fn in CONVERSIONS:
        if feed_fn is not None and isinstance(key, t):
            return list(feed_fn(key, value))
    return [(key, value)]


__all__ = ["CONVERSIONS", "feed_pairs", "register_session_run_conversion_functions"]
