"""State that outlives a step: variables (as `Ref`s), and named resources per container.

On a local session a `ResourceMgr` lives as long as the session; on a server it outlives
sessions, as in TensorFlow. Thread-safety: all methods may be called from any thread.
"""

from __future__ import annotations

import threading

from tensorweave import errors


class Ref:
    """A mutable tensor (TF's ref-typed variable buffer). `value` is None until assigned."""

    __slots__ = ("name", "dtype", "shape", "value", "lock")

    def __init__(self, name: str, dtype=None, shape=None):
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.value = None
        self.lock = threading.Lock()

    def read(self):
        """The current value. Raises FailedPreconditionError when never assigned."""
        v = self.value
        if v is None:
            raise errors.FailedPreconditionError(
                None, None, f"Attempting to use uninitialized value {self.name}")
        return v

    def __repr__(self) -> str:
        state = "uninitialized" if self.value is None else f"shape={self.value.shape}"
        return f"<Ref {self.name} {state}>"


def deref(ref: Ref):
    v = ref.value
    if v is None:
        raise errors.FailedPreconditionError(
            None, None, f"Attempting to use uninitialized value {ref.name}")
    return v


class ResourceMgr:
    """Named resources grouped in containers (`""` is the default container)."""

    def __init__(self):
        self._containers: dict[str, dict[str, object]] = {}
        self._lock = threading.Lock()

    def lookup_or_create(self, container: str, name: str, create):
        """The resource `name` in `container`, created by `create()` the first time."""
        with self._lock:
            c = self._containers.setdefault(container, {})
            res = c.get(name)
            if res is None:
                res = c[name] = create()
            return res

    def lookup(self, container: str, name: str):
        with self._lock:
            res = self._containers.get(container, {}).get(name)
        if res is None:
            raise errors.NotFoundError(None, None,
                                       f"Resource {container}/{name} does not exist.")
        return res

    def delete(self, container: str, name: str) -> None:
        with self._lock:
            self._containers.get(container, {}).pop(name, None)

    def clear(self, containers: list[str] | None = None) -> None:
        """Drops the named containers (all when None), closing resources that can close."""
        with self._lock:
            names = list(self._containers) if not containers else containers
            dropped = [self._containers.pop(n, {}) for n in names]
        for c in dropped:
            for res in c.values():
                close = getattr(res, "close", None)
                if callable(close):
                    close()

    def names(self) -> list[tuple[str, str]]:
        with self._lock:
            return sorted((c, n) for c, d in self._containers.items() for n in d)
