"""The one registry type: ops, kernels, gradients and optimization passes are each a
`Registry` — a table keyed by name that refuses a duplicate with `AlreadyRegisteredError`,
saying where the first registration was made.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class AlreadyRegisteredError(KeyError, ValueError):
    """A second registration under a key already taken. A KeyError (as TF raises for a
    gradient registered twice) and a ValueError (as for an op type registered twice)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def caller_site(depth: int = 2) -> str:
    """`file:line` of the caller `depth` frames up (1: the caller of this function)."""
    f = sys._getframe(depth)
    return f"{f.f_code.co_filename}:{f.f_lineno}"


class Registry(Generic[K, V]):
    """A table of `kind` entries by key, each registered once, in registration order."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[K, V] = {}
        self._sites: dict[K, str] = {}

    def register(self, key: K, value: V, site: str | None = None,
                 message: str | None = None) -> V:
        """Adds `value` under `key`; `site` (default: the caller's caller) is where.

        Raises: AlreadyRegisteredError (`message`, or one naming the first site).
        """
        if key in self._entries:
            first = self._sites[key]
            raise AlreadyRegisteredError(
                message or f"{self.kind} {key!r} is already registered (first at {first})")
        self._entries[key] = value
        self._sites[key] = site or caller_site(3)
        return value

    def get(self, key: K, default=None):
        return self._entries.get(key, default)

    def site(self, key: K) -> str | None:
        """Where `key` was registered (`file:line`), or None."""
        return self._sites.get(key)

    def __contains__(self, key) -> bool:
        return key in self._entries

    def __getitem__(self, key: K) -> V:
        return self._entries[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def items(self):
        return self._entries.items()

    def values(self):
        return self._entries.values()

    def as_dict(self) -> dict[K, V]:
        return dict(self._entries)


__all__ = ["AlreadyRegisteredError", "Registry", "caller_site"]
