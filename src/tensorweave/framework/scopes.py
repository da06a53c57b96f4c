"""Construction-time scopes: name scopes, control dependencies, devices and colocation.

One `ScopeState` per graph holds the stacks; `apply(op)` stamps a new op with them. The
module-level functions (`name_scope`, `control_dependencies`, `device`, `colocate_with`) act on
the default graph, as TF1's `tf.*` functions do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from tensorweave.framework import device_spec as device_lib


class _Controller:
    """One `control_dependencies` block: its control inputs and the ops created inside it."""

    __slots__ = ("control_inputs", "seen")

    def __init__(self, control_inputs):
        self.control_inputs = control_inputs
        self.seen: set = set()


class ScopeState:
    def __init__(self, graph):
        self._graph = graph
        self.name_stack = ""
        self._controllers: list[_Controller] = []
        self._devices: list = []          # str | callable | None (None clears)
        self._colocation: list = []       # Operation | None (None clears)
        self._attr_stack: list[dict] = []  # attrs stamped on new ops (TF's Graph._attr_scope)

    # -- name scopes ------------------------------------------------------------------------
    @contextlib.contextmanager
    def name_scope(self, name) -> Iterator[str]:
        """Enters scope `name` (made unique); `a/` re-enters exactly; `""`/None resets to root."""
        old = self.name_stack
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            new = self._graph.unique_name(name)
        self.name_stack = new
        try:
            yield f"{new}/" if new else ""
        finally:
            self.name_stack = old

    # -- control dependencies ---------------------------------------------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs) -> Iterator[None]:
        """New ops depend on `control_inputs` (ops or tensors); None clears outer blocks."""
        if control_inputs is None:
            # NOTE: as TF, this also leaves any cond/while context (ops built here are outside)
            saved, self._controllers = self._controllers, []
            try:
                with self._graph.in_control_flow_context(None):
                    yield
            finally:
                self._controllers = saved
            return
        ops = [_as_op(self._graph, c) for c in control_inputs]
        ctl = _Controller(ops)
        self._controllers.append(ctl)
        try:
            yield
        finally:
            self._controllers.remove(ctl)

    def _control_inputs_for(self, input_ops) -> list:
        found: list = []
        for ctl in self._controllers:
            if any(op in ctl.seen for op in input_ops):
                continue  # dominated: an input already sits inside this block
            found.extend(c for c in ctl.control_inputs if c not in input_ops and c not in found)
        return found

    # -- devices ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def device(self, device_name_or_function) -> Iterator[None]:
        spec = device_name_or_function
        if isinstance(spec, str) or spec is None:
            spec = None if spec is None else device_lib.canonical(spec)
        elif hasattr(spec, "to_string"):
            spec = spec.to_string()
        self._devices.append(spec if spec is not None else _CLEAR)
        try:
            yield
        finally:
            self._devices.pop()

    def _device_for(self, op) -> str:
        """The device the scopes give `op`, as TF: innermost scope first; a device string
        fills only the fields inner scopes left unset; a device function sees the device so
        far (on `op.device`) and replaces it; `tf.device(None)` hides the outer scopes."""
        current = ""
        for spec in reversed(self._devices):
            if spec is _CLEAR:
                break
            if callable(spec):
                op._device = current
                result = spec(op)
                if hasattr(result, "to_string"):
                    result = result.to_string()
                current = device_lib.canonical(result or "")
            else:
                current = device_lib.merge(spec, current)
        return current

    # -- colocation -------------------------------------------------------------------------
    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing: bool = False) -> Iterator[None]:
        saved = self._colocation
        if ignore_existing:
            self._colocation = []
        if op is not None:
            self._colocation = self._colocation + [_as_op(self._graph, op)]
        try:
            yield
        finally:
            self._colocation = saved

    # -- attrs ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def attr_scope(self, attrs: dict) -> Iterator[None]:
        """New ops get `attrs` (inner scopes win); a callable value is called with the new
        op's NodeDef and its result stored; a None value removes the attr again."""
        self._attr_stack.append(dict(attrs))
        try:
            yield
        finally:
            self._attr_stack.pop()

    def _stamp_attrs(self, op) -> None:
        merged: dict = {}
        for attrs in self._attr_stack:
            merged.update(attrs)
        for name, value in merged.items():
            if value is None:
                op._attrs.pop(name, None)
            else:
                op._attrs[name] = value(op.node_def) if callable(value) else value
        op._node_def = None

    # -- stamping a new op ------------------------------------------------------------------
    def apply(self, op, input_ops) -> None:
        """Adds control inputs, device, colocation and scoped attrs to a new `op`."""
        if self._attr_stack:
            self._stamp_attrs(op)
        if self._controllers:
            op._add_control_inputs(self._control_inputs_for(input_ops))
            for ctl in self._controllers:
                ctl.seen.add(op)
        if self._devices:
            op._device = self._device_for(op)
        if self._colocation:
            groups = sorted({g.decode() for c in self._colocation for g in c.colocation_groups()})
            op._attrs["_class"] = groups
            # NOTE: TF still runs the device functions (a round robin advances) and then takes
            # the device of the innermost colocation op that has one.
            placed = [c.device for c in self._colocation if c.device]
            if placed:
                op._device = placed[-1]


_CLEAR = object()


def _as_op(graph, value):
    from tensorweave.framework.operation import Operation, Tensor

    if isinstance(value, Operation):
        return value
    if isinstance(value, Tensor):
        return value.op
    if hasattr(value, "op") and isinstance(value.op, Operation):
        return value.op
    if hasattr(value, "_as_graph_element"):
        return _as_op(graph, value._as_graph_element())
    if isinstance(value, str):
        return graph.as_graph_element(value).op if ":" in value else \
            graph.get_operation_by_name(value)
    raise TypeError(f"Can not convert a {type(value).__name__} into an Operation.")


# -- the tf.* functions ---------------------------------------------------------------------
def _default():
    from tensorweave.framework.graph import get_default_graph

    return get_default_graph()


@contextlib.contextmanager
def name_scope(name, default_name=None, values=None) -> Iterator[str]:
    """TF1 `tf.name_scope(name, default_name=None, values=None)`."""
    graph = _graph_of(values) or _default()
    if name is None and default_name is not None:
        name = default_name
    with graph.as_default(), graph.scopes.name_scope(name) as scope:
        yield scope


def _graph_of(values):
    for v in values or ():
        g = getattr(v, "graph", None)
        if g is not None:
            return g
    return None


def control_dependencies(control_inputs):
    return _default().scopes.control_dependencies(control_inputs)


def device(device_name_or_function):
    """`with tf.device("/cpu:0"):` or `with tf.device(fn):` (fn(op) → device string)."""
    return _default().scopes.device(device_name_or_function)


def colocate_with(op, ignore_existing: bool = False):
    return _default().scopes.colocate_with(op, ignore_existing)


def get_name_scope() -> str:
    return _default().get_name_scope()
