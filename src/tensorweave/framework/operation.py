"""`Operation` and `Tensor`: the nodes of a graph and the values flowing between them.

Operators on `Tensor` (`+`, `@`, `[]`, ...) are installed by the op modules through
`Tensor._override_operator`, so this module does not depend on any op family.
"""

from __future__ import annotations

import os
import sys

from tensorweave import dtypes, ir
from tensorweave.shapes import TensorShape, as_shape

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_site() -> tuple[str, int, str]:
    """(file, line, function) of the innermost caller outside tensorweave (cheap: no traceback)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE_DIR):
        f = f.f_back
    if f is None:
        return ("<unknown>", 0, "")
    return (f.f_code.co_filename, f.f_lineno, f.f_code.co_name)


class Tensor:
    """A symbolic handle to output `value_index` of `op`."""

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "__weakref__")
    __array_priority__ = 100

    def __init__(self, op: Operation, value_index: int, dtype: dtypes.DType):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = TensorShape(None)
        self._consumers: list[Operation] = []

    @property
    def op(self) -> Operation:
        return self._op

    @property
    def value_index(self) -> int:
        return self._value_index

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def graph(self):
        return self._op._graph

    @property
    def name(self) -> str:
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self) -> str:
        return self._op.device

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape) -> None:
        """Refines the static shape. Raises ValueError when incompatible."""
        try:
            self._shape = self._shape.merge_with(as_shape(shape))
        except ValueError:
            raise ValueError(
                f"Tensor's shape {self._shape} is not compatible with supplied shape "
                f"{as_shape(shape)}"
            ) from None

    def consumers(self) -> list[Operation]:
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        """Runs the default (or given) session to compute this tensor."""
        from tensorweave.framework.default_session import session_for

        return session_for(self.graph, session).run(self, feed_dict)

    def _as_node_input(self) -> str:
        return ir.tensor_name(self._op.name, self._value_index)

    def __repr__(self) -> str:
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    __str__ = __repr__

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __bool__(self):
        raise TypeError(
            "Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
            "instead of `if t:` to test if a tensor is defined, and use TensorFlow ops such as "
            "tf.cond to execute subgraphs conditioned on the value of a tensor."
        )

    def __iter__(self):
        dims = self._shape.as_tuple()
        if dims is None or not dims:
            raise TypeError("Tensor objects are only iterable when the first dimension is known.")
        if dims[0] is None:
            raise TypeError("Cannot iterate over a tensor with unknown first dimension.")
        return (self[i] for i in range(dims[0]))

    def __len__(self):
        raise TypeError(
            f"len is not well defined for symbolic Tensors. ({self.name}) Please call `x.shape` "
            "rather than `len(x)` for shape information."
        )

    @classmethod
    def _override_operator(cls, operator: str, func) -> None:
        setattr(cls, operator, func)


class Operation:
    """A node: an op type applied to input tensors, with attrs and a device."""

    def __init__(self, graph, op_def, name: str, op_type: str, inputs: list[Tensor],
                 attrs: dict, output_dtypes: list[dtypes.DType], site=None):
        self._graph = graph
        self._op_def = op_def
        self._name = name
        self._type = op_type
        self._inputs = list(inputs)
        self._control_inputs: list[Operation] = []
        self._attrs = attrs
        self._device = ""
        self._site = site
        self._id = graph.version
        self._node_def: ir.NodeDef | None = None
        self._outputs = [Tensor(self, i, dt) for i, dt in enumerate(output_dtypes)]
        self._control_outputs: list[Operation] = []
        self._control_flow_context = graph.control_flow_context
        for t in self._inputs:
            t._consumers.append(self)

    # -- identity ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._type

    @property
    def graph(self):
        return self._graph

    @property
    def op_def(self):
        return self._op_def

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        return tuple(self._inputs)

    @property
    def outputs(self) -> list[Tensor]:
        return list(self._outputs)

    @property
    def control_inputs(self) -> list[Operation]:
        return list(self._control_inputs)

    @property
    def device(self) -> str:
        return self._device

    @property
    def traceback(self) -> list[tuple[str, int, str]]:
        return [self._site] if self._site else []

    @property
    def site(self) -> str:
        """Where the user created this op, as `file:line`."""
        return f"{self._site[0]}:{self._site[1]}" if self._site else "<unknown>"

    def values(self) -> tuple[Tensor, ...]:
        return tuple(self._outputs)

    # -- attrs ------------------------------------------------------------------------------
    def get_attr(self, name: str):
        """The attr's value; string attrs come back as bytes, as in TensorFlow."""
        if name not in self._attrs:
            raise ValueError(f"Operation '{self._name}' has no attr named '{name}'.")
        value = self._attrs[name]
        if isinstance(value, str):
            return value.encode()
        if isinstance(value, list) and value and isinstance(value[0], str):
            return [v.encode() for v in value]
        return value

    def _set_attr(self, name: str, value) -> None:
        self._attrs[name] = value
        self._node_def = None

    def _set_device(self, device) -> None:
        from tensorweave.framework.device_spec import canonical

        self._device = canonical(device) if isinstance(device, str) else device.to_string()
        self._node_def = None

    def _add_control_input(self, op: Operation) -> None:
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            op._control_outputs.append(self)
            self._node_def = None

    def _remove_control_input(self, op: Operation) -> None:
        if op in self._control_inputs:
            self._control_inputs.remove(op)
            if self in op._control_outputs:
                op._control_outputs.remove(self)
            self._node_def = None

    @property
    def control_flow_context(self):
        """The cond/while context this op was built in (None: the root)."""
        return self._control_flow_context

    @control_flow_context.setter
    def control_flow_context(self, ctx) -> None:
        self._control_flow_context = ctx

    def _get_control_flow_context(self):
        return self._control_flow_context

    def _set_control_flow_context(self, ctx) -> None:
        self._control_flow_context = ctx

    def _add_control_inputs(self, ops) -> None:
        for op in ops:
            self._add_control_input(op)

    def replace_input(self, index: int, tensor: Tensor) -> None:
        """Makes data input `index` read `tensor` (a loop's back edge, an import's late edge).

        Raises: TypeError when the dtypes differ.
        """
        old = self._inputs[index]
        if old.dtype != tensor.dtype:
            raise TypeError(f"Input {index} of node {self.name} was passed {tensor.dtype.name} "
                            f"from {tensor.name} incompatible with expected "
                            f"{old.dtype.name}.")
        self._update_input(index, tensor)

    def add_control_input(self, op: Operation) -> None:
        self._add_control_input(op)

    def add_control_inputs(self, ops) -> None:
        self._add_control_inputs(ops)

    def remove_control_inputs(self, ops) -> None:
        """Drops the control inputs of this op that are in `ops`."""
        for op in list(ops):
            self._remove_control_input(op)

    def _detach(self) -> None:
        """Removes this op from its inputs' consumers and its control inputs' outputs."""
        for t in self._inputs:
            t._consumers[:] = [c for c in t._consumers if c is not self]
        for c in self._control_inputs:
            c._control_outputs[:] = [o for o in c._control_outputs if o is not self]

    def _update_input(self, index: int, tensor: Tensor) -> None:
        """Makes data input `index` read `tensor` (e.g. a NextIteration → Merge back edge that
        `import_graph_def` wires after the NextIteration exists). Keeps the consumer lists and
        the cached node_def consistent; the caller has checked the dtype."""
        old = self._inputs[index]
        if self in old._consumers:
            old._consumers.remove(self)
        self._inputs[index] = tensor
        tensor._consumers.append(self)
        self._node_def = None

    def colocation_groups(self) -> list[bytes]:
        groups = self._attrs.get("_class")
        return [g.encode() for g in groups] if groups else [f"loc:@{self._name}".encode()]

    # -- IR ---------------------------------------------------------------------------------
    @property
    def node_def(self) -> ir.NodeDef:
        """The IR node (shared; do not mutate)."""
        if self._node_def is None:
            inputs = [t._as_node_input() for t in self._inputs]
            inputs += [f"^{op.name}" for op in self._control_inputs]
            self._node_def = ir.NodeDef(self._name, self._type, inputs, self._device,
                                        self._attrs)
        return self._node_def

    def run(self, feed_dict=None, session=None) -> None:
        """Runs this op in the default (or given) session."""
        from tensorweave.framework.default_session import session_for

        session_for(self._graph, session).run(self, feed_dict)

    def __repr__(self) -> str:
        return f"<tf.Operation '{self._name}' type={self._type}>"

    def __str__(self) -> str:
        from tensorweave.framework.printing import format_node

        return format_node(self.node_def)

    def _as_graph_element(self):
        return self
