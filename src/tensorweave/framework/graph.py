"""`Graph`: the node table, unique names, collections, version, and the default-graph stack.

Construction-time stacks (name scope, control dependencies, devices, colocation) live in
`framework/scopes.py`'s `ScopeState`, one per graph; this module only owns the node table.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class GraphSnapshot:
    """A graph's state for `Graph.rollback`: how many ops it had, and the names in use."""

    version: int
    names_in_use: dict


class GraphKeys:
    """Standard collection names (TF's strings)."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    TRAIN_OP = "train_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    VARIABLES = GLOBAL_VARIABLES


class Graph:
    """A TensorFlow computation: operations and the tensors that flow between them.

    Thread-safety: building a graph from several threads at once is not supported (as in TF1);
    reading a finished graph from any thread is.
    """

    def __init__(self):
        from tensorweave.framework.scopes import ScopeState

        self._ops_by_name: dict = {}
        self._ops: list = []
        self._names_in_use: dict[str, int] = {}
        self._collections: dict[str, list] = {}
        self._finalized = False
        self._seed: int | None = None
        self._last_op_seed = 0
        self._lock = threading.RLock()
        self._functions: dict = {}
        self._gradient_overrides: dict[str, str] = {}
        self._control_flow_context = None  # a CondContext/WhileContext while building one
        self.resource_container = ""  # `container(name)`: stateful ops' default container
        self.scopes = ScopeState(self)

    # -- control-flow context: the cond/while context new ops are built in ----------------------
    @property
    def control_flow_context(self):
        """The CondContext/WhileContext ops are being built in (None: the root)."""
        return self._control_flow_context

    @control_flow_context.setter
    def control_flow_context(self, ctx) -> None:
        self._control_flow_context = ctx

    @contextlib.contextmanager
    def in_control_flow_context(self, ctx):
        """Builds ops in `ctx` (None: outside any cond or loop) inside the `with` block."""
        saved, self._control_flow_context = self._control_flow_context, ctx
        try:
            yield
        finally:
            self._control_flow_context = saved

    # TF's names (used by TF code that reaches into graphs)
    def _get_control_flow_context(self):
        return self._control_flow_context

    def _set_control_flow_context(self, ctx) -> None:
        self._control_flow_context = ctx

    # -- default graph ----------------------------------------------------------------------
    def as_default(self):
        """A context manager that makes this the default graph (per thread)."""
        return _default_graph_stack.get_controller(self)

    # -- ops --------------------------------------------------------------------------------
    @property
    def version(self) -> int:
        """Increases by one with every op added."""
        return len(self._ops)

    @property
    def finalized(self) -> bool:
        return self._finalized

    def finalize(self) -> None:
        """Makes the graph read-only: adding an op raises RuntimeError."""
        self._finalized = True

    def _unsafe_unfinalize(self) -> None:
        self._finalized = False

    def check_not_finalized(self) -> None:
        """Raises: RuntimeError when the graph is finalized."""
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    _check_not_finalized = check_not_finalized  # TF's name

    def add_op(self, op) -> None:
        """Adds a built Operation (ops/apply.py builds them).

        Raises: RuntimeError (finalized), ValueError (the name is taken).
        """
        self.check_not_finalized()
        if op.name in self._ops_by_name:
            raise ValueError(f"Duplicate node name in graph: '{op.name}'")
        self._ops_by_name[op.name] = op
        self._ops.append(op)

    def ops_since(self, version: int) -> list:
        """The ops added after the graph had `version` ops, in creation order."""
        return self._ops[version:]

    def snapshot(self) -> GraphSnapshot:
        """What `rollback` restores: the ops and the names in use now."""
        return GraphSnapshot(self.version, dict(self._names_in_use))

    def rollback(self, snapshot: GraphSnapshot) -> None:
        """Removes every op added since `snapshot`, with its edges and the names it took."""
        for op in self._ops[snapshot.version:]:
            op._detach()
            self._ops_by_name.pop(op.name, None)
        del self._ops[snapshot.version:]
        self._names_in_use.clear()
        self._names_in_use.update(snapshot.names_in_use)

    # -- functions and gradient overrides -----------------------------------------------------
    def add_function(self, fdef, replace: bool = True) -> None:
        """Adds a FunctionDef to the graph's library (keeping an existing one unless
        `replace`)."""
        if replace or fdef.name not in self._functions:
            self._functions[fdef.name] = fdef

    @property
    def functions(self) -> dict:
        """The graph's function library: name -> FunctionDef (a copy)."""
        return dict(self._functions)

    def gradient_override(self, op_type: str) -> str | None:
        """The gradient op type `gradient_override_map` maps `op_type` to, or None."""
        return self._gradient_overrides.get(op_type)

    def get_operations(self) -> list:
        return list(self._ops)

    def get_operation_by_name(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}")
        op = self._ops_by_name.get(name)
        if op is None:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.")
        return op

    def get_tensor_by_name(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name).__name__}")
        op_name, sep, idx = name.rpartition(":")
        if not sep or not idx.isdigit():
            raise ValueError(
                f"The name '{name}' looks like an (invalid) Operation name, not a Tensor. "
                "Tensor names must be of the form \"<op_name>:<output_index>\"."
            )
        op = self._ops_by_name.get(op_name)
        if op is None:
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist. "
                f"The operation, '{op_name}', does not exist in the graph."
            )
        i = int(idx)
        if i >= len(op.outputs):
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist. The operation, "
                f"'{op_name}', exists but only has {len(op.outputs)} outputs."
            )
        return op.outputs[i]

    def as_graph_element(self, obj, allow_tensor: bool = True, allow_operation: bool = True):
        """Resolves a Tensor, Operation or name to an element of this graph."""
        from tensorweave.framework.operation import Operation, Tensor

        if isinstance(obj, (Tensor, Operation)):
            if obj.graph is not self:
                raise ValueError(f"{obj} is not an element of this graph.")
            if isinstance(obj, Tensor) and not allow_tensor:
                raise TypeError(f"Can not convert a Tensor into an Operation: {obj}")
            if isinstance(obj, Operation) and not allow_operation:
                raise TypeError(f"Can not convert an Operation into a Tensor: {obj}")
            return obj
        if hasattr(obj, "_as_graph_element"):
            return self.as_graph_element(obj._as_graph_element(), allow_tensor, allow_operation)
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                return self.get_tensor_by_name(obj)
            if allow_operation:
                return self.get_operation_by_name(obj)
            raise ValueError(f"Name '{obj}' appears to refer to an Operation, not a Tensor.")
        kinds = " or ".join(k for k, ok in (("Tensor", allow_tensor),
                                             ("Operation", allow_operation)) if ok)
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {kinds}.")

    # -- names ------------------------------------------------------------------------------
    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """`name` inside the current name scope, suffixed `_1`, `_2`, ... when taken."""
        stack = self.scopes.name_stack
        if stack:
            name = f"{stack}/{name}"
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{i - 1}"
        return name

    def get_name_scope(self) -> str:
        return self.scopes.name_stack

    def name_scope(self, name):
        return self.scopes.name_scope(name)

    def control_dependencies(self, control_inputs):
        return self.scopes.control_dependencies(control_inputs)

    def device(self, device_name_or_function):
        return self.scopes.device(device_name_or_function)

    def _attr_scope(self, attrs: dict):
        """TF's private `Graph._attr_scope`: ops created inside get `attrs` (jit_scope)."""
        return self.scopes.attr_scope(attrs)

    def colocate_with(self, op, ignore_existing: bool = False):
        return self.scopes.colocate_with(op, ignore_existing)

    @contextlib.contextmanager
    def container(self, container_name: str):
        """Stateful ops created inside with an empty `container` attr get `container_name`
        (their state lives in that resource container, as TF's Graph.container)."""
        saved, self.resource_container = self.resource_container, container_name
        try:
            yield container_name
        finally:
            self.resource_container = saved

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map: dict[str, str]):
        saved = dict(self._gradient_overrides)
        self._gradient_overrides.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_overrides = saved

    # -- collections ------------------------------------------------------------------------
    def add_to_collection(self, name: str, value) -> None:
        self._check_not_finalized()
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value) -> None:
        for name in [names] if isinstance(names, str) else names:
            self.add_to_collection(name, value)

    def get_collection(self, name: str, scope: str | None = None) -> list:
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        import re

        pat = re.compile(scope)
        return [i for i in items if hasattr(i, "name") and pat.match(i.name)]

    def get_collection_ref(self, name: str) -> list:
        return self._collections.setdefault(name, [])

    def get_all_collection_keys(self) -> list[str]:
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name: str) -> None:
        self._collections.pop(name, None)

    # -- seeds ------------------------------------------------------------------------------
    @property
    def seed(self) -> int | None:
        return self._seed

    @seed.setter
    def seed(self, value: int | None) -> None:
        self._seed = value

    # -- serialization ----------------------------------------------------------------------
    def as_graph_def(self, from_version: int | None = None, add_shapes: bool = False):
        """The graph as a protobuf `GraphDef` (`graph_to_proto`)."""
        return graph_to_proto(self, from_version=from_version, add_shapes=add_shapes)

    def _as_ir(self, from_version: int = 0):
        """The IR GraphDef of ops `[from_version:]` (plain data for the master)."""
        from tensorweave import ir

        ops = self._ops[from_version:]
        shapes = {op.name: [t.shape.as_tuple() for t in op._outputs] for op in ops}
        return ir.GraphDef(nodes=[op.node_def for op in ops],
                           library=list(self._functions.values()), shapes=shapes)

    @property
    def building_function(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"<tensorweave.Graph {len(self._ops)} ops at {id(self):#x}>"


class _DefaultGraphStack(threading.local):
    """Per-thread stack of default graphs over one process-wide global default."""

    _global_default: Graph | None = None

    def __init__(self):
        self.stack: list[Graph] = []

    def get_default(self) -> Graph:
        if self.stack:
            return self.stack[-1]
        if _DefaultGraphStack._global_default is None:
            _DefaultGraphStack._global_default = Graph()
        return _DefaultGraphStack._global_default

    @contextlib.contextmanager
    def get_controller(self, graph: Graph) -> Iterator[Graph]:
        self.stack.append(graph)
        try:
            yield graph
        finally:
            if self.stack and self.stack[-1] is graph:
                self.stack.pop()
            elif graph in self.stack:
                self.stack.remove(graph)

    def reset(self) -> None:
        if self.stack:
            raise AssertionError(
                "Do not use tf.reset_default_graph() to clear nested graphs. If you need a "
                "cleared graph, exit the nesting and create a new graph."
            )
        _DefaultGraphStack._global_default = None


_default_graph_stack = _DefaultGraphStack()


def get_default_graph() -> Graph:
    """The graph new ops go into: the innermost `as_default()` graph, else a global one."""
    return _default_graph_stack.get_default()


def reset_default_graph() -> None:
    """Clears the global default graph. Raises AssertionError inside a `with g.as_default()`."""
    _default_graph_stack.reset()


def add_to_collection(name, value) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value) -> None:
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None) -> list:
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key) -> list:
    return get_default_graph().get_collection_ref(key)


def graph_to_proto(graph: Graph, from_version: int | None = None, add_shapes: bool = False):
    """The GraphDef proto of `graph`: nodes in creation order, versions, function library.

    Args:
      graph: a `Graph`.
      from_version: only ops added since `graph.version` was this value.
      add_shapes: give every node an `_output_shapes` attr (its outputs' static shapes), as
        TF's `as_graph_def(add_shapes=True)` does. The graph's own nodes are not changed.
    """
    from tensorweave.proto import convert

    start = from_version or 0
    graph_ir = graph._as_ir(start)
    if add_shapes:
        graph_ir.nodes = [_with_output_shapes(op) for op in graph.get_operations()[start:]]
    return convert.graph_to_proto(graph_ir)


def _with_output_shapes(op):
    node = op.node_def.copy()
    node.attrs["_output_shapes"] = [t.shape for t in op.outputs]
    return node
