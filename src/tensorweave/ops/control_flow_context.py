"""Control-flow contexts: how ops built inside a cond branch or a loop body are wired.

While a context is the graph's `control_flow_context`, `apply.add_op` calls
`rewrite_inputs(op_def, inputs, op_name)` before creating an op and `add_op(op)` after:

- `CondContext` (one per branch of a `cond`): every tensor the branch uses from outside goes
  through a `Switch` on the predicate (`cond/add/Switch:1`), and ops without inputs get a
  control input from the branch pivot (`cond/switch_t`), so an untaken branch is dead.
- `WhileContext` (`while_loop.py`): outside tensors enter the loop through a constant `Enter`.

The contexts mirror TF1's `CondContext`/`WhileContext` bookkeeping: `_values` holds the names
of tensors known inside the context (and its outer contexts), `_external_values` maps an
outside tensor's name to its inside stand-in.
"""

from __future__ import annotations

from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_util as util
from tensorweave.ops.apply import apply_op


def switch_ref_or_tensor(data, pred, name: str = "Switch"):
    """(output_false, output_true) of a Switch (RefSwitch for a ref) colocated with `data`.

    NOTE: as TF's (whose colocate_with sets the device functions aside), the Switch takes
    `data`'s device and none of the device scopes': a Switch of a variable's initial value
    (device "", colocated with the variable) under a replica_device_setter would otherwise get
    the worker's device and conflict with its ps colocation group.
    """
    with data.graph.colocate_with(data.op, ignore_existing=True), data.graph.device(None):
        op = "RefSwitch" if data.dtype.is_ref_dtype else "Switch"
        return apply_op(op, data, pred, name=name)


class ControlFlowContext:
    """The base of CondContext and WhileContext: the context stack and value bookkeeping."""

    def __init__(self, graph=None):
        self._graph = graph if graph is not None else get_default_graph()
        self._outer_context = self._graph.control_flow_context
        self._context_stack: list = []
        self._values: set[str] = set()
        self._external_values: dict = {}

    @property
    def outer_context(self):
        return self._outer_context

    @property
    def graph(self):
        return self._graph

    def get_while_context(self):
        return self._outer_context.get_while_context() if self._outer_context else None

    def get_control_pivot(self):
        return None

    def add_name(self, name: str) -> None:
        self._values.add(name)

    def enter(self) -> None:
        """Makes this the graph's current context."""
        self._context_stack.append(self._graph.control_flow_context)
        self._graph.control_flow_context = self

    def exit(self) -> None:
        self._graph.control_flow_context = self._context_stack.pop()

    def exit_result(self, result) -> None:
        """Makes the tensors of `result` known to the outer context."""
        if self._outer_context is not None:
            for x in util.flatten(result):
                self._outer_context.add_name(x.name)

    # -- the hooks apply.add_op calls ---------------------------------------------------------
    def rewrite_inputs(self, op_def, inputs, op_name: str | None = None) -> list:
        """The inputs an op built in this context must use instead of `inputs`."""
        if not inputs:
            return inputs
        with util.op_scope(self._graph, op_name):
            return [self._rewrite_input(op_def, x) for x in inputs]

    def _rewrite_input(self, op_def, x):
        return self.add_value(x)

    def add_op(self, op) -> None:
        """Records `op` (just created in this context) and fixes its control inputs."""
        util.set_context(op, self)
        self._add_op_internal(op)

    # -- shared helpers -----------------------------------------------------------------------
    def add_value(self, val):
        raise NotImplementedError

    def _add_op_internal(self, op) -> None:
        raise NotImplementedError

    def _remove_external_control_edges(self, op):
        """Drops control inputs from outside the enclosing loop; returns (internal, external)."""
        while_ctxt = self.get_while_context()
        if while_ctxt is None:
            return list(op.control_inputs), []
        internal, external = [], []
        for x in op.control_inputs:
            ctxt = util.get_output_context(x)
            if ctxt is not None and ctxt.get_while_context() is while_ctxt:
                internal.append(x)
            else:
                external.append(x)
        util.remove_control_inputs(op, external)
        return internal, external

    def _is_in_outer_context(self, op) -> bool:
        return _outer_contains(self._outer_context, util.get_output_context(op))

    def _mark_values(self, names, recursive: bool) -> None:
        ctxt = self
        while ctxt is not None:
            ctxt._values.update(names)
            ctxt = ctxt._outer_context if recursive else None


def _outer_contains(outer, op_ctxt) -> bool:
    """Whether `op_ctxt` is `outer` or one of `outer`'s enclosing contexts."""
    while outer is not op_ctxt:
        if outer is None:
            return False
        outer = outer.outer_context
    return True


class CondContext(ControlFlowContext):
    """The context of one branch of a `cond`.

    Args:
      pred: the predicate, as seen outside the branch (`cond/pred_id`).
      pivot: the branch's pivot (`cond/switch_t` or `cond/switch_f`): live iff the branch runs.
      branch: 1 for the true branch, 0 for the false branch.
    """

    def __init__(self, pred, pivot, branch: int, name: str = "cond_text"):
        super().__init__(pred.graph)
        self._name = self._graph.unique_name(name)
        self._pred = pred
        self._pivot = pivot
        self._branch = branch
        self._values.add(pred.name)
        self._external_values[pred.name] = pred
        self._values.add(pivot.name)
        util.set_context(pivot.op, self)

    @property
    def name(self) -> str:
        return self._name

    @property
    def pred(self):
        return self._pred

    @property
    def pivot(self):
        return self._pivot

    @property
    def branch(self) -> int:
        return self._branch

    def get_control_pivot(self):
        return self._pivot

    def _rewrite_input(self, op_def, x):
        # NOTE: a while loop imported inside a branch: its NextIteration joins the context
        # later, through its own add_op, and must not be switched.
        if op_def.name in ("Merge", "RefMerge") and x.op.type in ("NextIteration",
                                                                   "RefNextIteration"):
            return x
        return self.add_value(x)

    def add_value(self, val):
        """`val` as seen inside this branch: routed through a Switch when from outside."""
        if val.name in self._values:
            result = self._external_values.get(val.name)
            return val if result is None else result
        result = val
        self._values.add(val.name)
        if self._outer_context is not None:
            result = self._outer_context.add_value(val)
            self._values.add(result.name)
            self._external_values[result.name] = result
        with util.outside_context(self._graph):
            result = switch_ref_or_tensor(result, self._pred)[self._branch]
        util.set_context(result.op, self)
        self._mark_values([result.name], recursive=True)
        self._external_values[val.name] = result
        return result

    def _add_op_internal(self, op) -> None:
        if not op.inputs:
            self._remove_external_control_edges(op)
            if not any(util.op_in_context(c, self) for c in op.control_inputs):
                op.add_control_input(self._pivot.op)
        else:
            self._remove_external_control_edges(op)
        self._mark_values([t.name for t in op.outputs], recursive=True)

    # -- building a branch --------------------------------------------------------------------
    def build_cond_branch(self, fn):
        """Calls `fn` inside this context; returns (its result, the result as tensors)."""
        original = fn()
        if original is None:
            return None, None
        result = util.map_structure(self._build_cond_tensor, original)
        if not isinstance(result, (list, tuple)):
            result = [result]
        return original, result

    def _build_cond_tensor(self, v):
        from tensorweave.framework.operation import Operation

        if isinstance(v, Operation):
            from tensorweave.ops.control_flow_ops import with_dependencies

            return with_dependencies([v], self._pivot)    # the pivot stands in for the op
        v = to_flow(v)
        return self._process_output_tensor(convert_to_tensor(v))

    def _process_output_tensor(self, val):
        """A branch output: switched when it comes from outside (`lambda: x`)."""
        if val.name in self._values:
            external = self._external_values.get(val.name)
            return val if external is None else external
        real = val
        self._values.add(val.name)
        if self._outer_context is not None:
            real = self._outer_context.add_value(val)
            self._values.add(real.name)
            self._external_values[real.name] = real
        with util.outside_context(self._graph):
            real = switch_ref_or_tensor(real, self._pred)[self._branch]
        util.set_context(real.op, self)
        self._external_values[val.name] = real
        return real


def to_flow(v):
    """A TensorArray's flow tensor; anything else unchanged."""
    from tensorweave.ops.tensor_array_ops import TensorArray

    return v.flow if isinstance(v, TensorArray) else v


def flows_to_tensor_arrays(templates, flows) -> list:
    """Rebuilds TensorArrays (from `templates`) around `flows`; other entries pass through."""
    from tensorweave.ops.tensor_array_ops import TensorArray, build_ta_with_new_flow

    out = []
    for t, f in zip(templates, flows):
        out.append(build_ta_with_new_flow(t, f) if isinstance(t, TensorArray) else f)
    return out


def add_cond_contexts_to_collection(context_t, context_f) -> None:
    """Only outermost conds go to the collection (nested ones live in their root context)."""
    if context_t.outer_context is None:
        context_t.graph.add_to_collection(GraphKeys.COND_CONTEXT, context_t)
        context_f.graph.add_to_collection(GraphKeys.COND_CONTEXT, context_f)
