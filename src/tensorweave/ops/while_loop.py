"""`while_loop` (TF1's while_v1) and the `WhileContext` that builds it.

A loop over variables v is the graph

    v ─► Enter ─► Merge ─► Switch(LoopCond(cond(merge))) ─► Identity ─► body ─► NextIteration
                    ▲          │ false                                               │
                    └──────────┼─────────────────────────────────────────────────────┘
                               ▼
                              Exit ─► result

in its own frame (`frame_name` = the context name, e.g. "while/while_context"). Tensors from
outside used by cond or body enter through constant Enters (`while/Less/Enter`); ops without
inputs get a control input from the loop pivot so that they run once per iteration.
"""

from __future__ import annotations

from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_util as util
from tensorweave.ops.control_flow_context import (
    ControlFlowContext,
    flows_to_tensor_arrays,
    switch_ref_or_tensor,
    to_flow,
)
from tensorweave.ops.control_flow_ops import (
    _identity,
    enter,
    exit,
    loop_cond,
    merge,
    next_iteration,
)
from tensorweave.shapes import TensorShape


class WhileContext(ControlFlowContext):
    """The context of one while loop (its cond and body)."""

    def __init__(self, maximum_iterations=None, parallel_iterations: int = 10,
                 back_prop: bool = True, swap_memory: bool = False,
                 name: str = "while_context", grad_state=None):
        super().__init__()
        self._name = self._graph.unique_name(name)
        self._maximum_iterations = maximum_iterations
        self._parallel_iterations = parallel_iterations
        self._back_prop = back_prop
        self._swap_memory = swap_memory
        self._pivot_for_pred = None
        self._pivot_for_body = None
        self._pivot = None
        self._loop_enters: list = []
        self._loop_exits: list = []
        self._grad_state = grad_state

    # -- properties (TF's) --------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The frame name of the loop's Enter ops."""
        return self._name

    @property
    def maximum_iterations(self):
        return self._maximum_iterations

    @property
    def parallel_iterations(self) -> int:
        return self._parallel_iterations

    @property
    def back_prop(self) -> bool:
        return self._back_prop

    @property
    def swap_memory(self) -> bool:
        return self._swap_memory

    @property
    def pivot(self):
        """The LoopCond output: the predicate of the loop's Switches."""
        return self._pivot

    @property
    def loop_enters(self) -> list:
        return self._loop_enters

    @property
    def loop_exits(self) -> list:
        return self._loop_exits

    @property
    def grad_state(self):
        return self._grad_state

    def get_while_context(self):
        return self

    def get_control_pivot(self):
        return self._pivot_for_body if self._pivot_for_body is not None \
            else self._pivot_for_pred

    # -- values and ops -----------------------------------------------------------------------
    def add_value(self, val):
        """`val` as seen inside the loop: a constant Enter when it comes from outside."""
        new_value = val.name not in self._values and util.get_context(val.op) is not self
        if not new_value:
            actual = self._external_values.get(val.name)
            return val if actual is None else actual
        self._values.add(val.name)
        result = val
        if self._outer_context is not None:
            result = self._outer_context.add_value(val)
        result = self._make_enter(result, is_constant=True)
        self._values.add(result.name)
        self._external_values[val.name] = result
        return result

    def _make_enter(self, x, is_constant: bool, use_input_shape: bool = True):
        """An Enter of `x` into this frame with the outer control dependencies of `x`."""
        with util.outside_context(self._graph, clear_control_dependencies=False):
            e = enter(x, self._name, is_constant=is_constant,
                      parallel_iterations=self._parallel_iterations,
                      use_input_shape=use_input_shape)
        inner = [c for c in e.op.control_inputs if not self._is_in_outer_context(c)]
        util.remove_control_inputs(e.op, inner)
        util.set_context(e.op, self)
        return e

    def _add_op_internal(self, op) -> None:
        if not op.inputs:
            internal, external = self._remove_external_control_edges(op)
            if not internal:
                op._add_control_input(self.get_control_pivot().op)
        else:
            _, external = self._remove_external_control_edges(op)
            self._maybe_add_control_dependency(op)
        self._values.update(t.name for t in op.outputs)
        if external:
            self._pull_external_control_inputs(op, external)

    def _pull_external_control_inputs(self, op, external) -> None:
        """Outside control inputs become data through an Identity inside the loop."""
        ids = []
        with util.outside_context(self._graph):
            self.enter()
            try:
                ids = [_identity(x.outputs[0]).op for x in external if x.outputs]
            finally:
                self.exit()
        op._add_control_inputs(ids)

    def _maybe_add_control_dependency(self, op) -> None:
        """An op fed only by loop invariants runs once per iteration via the pivot."""
        if op.control_inputs:
            return
        if all(util.is_loop_constant_enter(x.op) for x in op.inputs):
            op._add_control_input(self.get_control_pivot().op)

    # -- building -----------------------------------------------------------------------------
    def build_loop(self, pred, body, loop_vars, shape_invariants, return_same_structure):
        """Adds the loop to the graph; returns the Exit tensors shaped like `loop_vars`."""
        original = loop_vars
        flat = [convert_to_tensor(to_flow(x)) for x in util.flatten(loop_vars)]
        shapes = _flat_invariants(loop_vars, flat, shape_invariants)
        try:
            self.enter()
            original_body_result, exit_vars = self._build_loop(pred, body, original, flat,
                                                               shapes)
        finally:
            self.exit()
        flat_result = util.flatten(original_body_result)
        exits = flows_to_tensor_arrays(flat_result, exit_vars)
        packed = util.pack_sequence_as(original_body_result, exits)
        if return_same_structure:
            return packed
        return packed[0] if len(exit_vars) == 1 else packed

    def _build_loop(self, pred, body, original, loop_vars, shapes):
        flat_original = util.flatten(original)
        self._values = {x.name for x in loop_vars}
        real_vars = loop_vars
        if self._outer_context is not None:
            real_vars = [self._outer_context.add_value(x) for x in loop_vars]
        enter_vars = [self._make_enter(x, is_constant=False, use_input_shape=False)
                      for x in real_vars]
        self._add_outer_pivot(enter_vars)
        _set_shape_invariants(real_vars, enter_vars, shapes)
        self._values = {x.name for x in enter_vars}
        self._loop_enters = enter_vars
        merge_vars = [merge([x, x])[0] for x in enter_vars]
        self._pivot_for_pred = merge_vars[0]
        packed = util.pack_sequence_as(original, flows_to_tensor_arrays(flat_original,
                                                                        merge_vars))
        c = convert_to_tensor(pred(*packed))
        self._pivot = loop_cond(c, name="LoopCond")
        switch_vars = [switch_ref_or_tensor(x, self._pivot) for x in merge_vars]
        vars_for_body = [_identity(x[1]) for x in switch_vars]
        self._pivot_for_body = vars_for_body[0]
        packed_body = util.pack_sequence_as(
            original, flows_to_tensor_arrays(flat_original, vars_for_body))
        body_result = body(*packed_body)
        if not util.is_sequence(body_result):
            body_result = [body_result]
        util.assert_same_structure(list(packed_body), list(body_result))
        result = [convert_to_tensor(to_flow(x)) for x in util.flatten(body_result)]
        if len(merge_vars) != len(result):
            raise ValueError(f"Number of inputs and outputs of body must match loop_vars: "
                             f"{len(merge_vars)}, {len(result)}")
        for m, v in zip(merge_vars, result):
            _enforce_shape_invariant(m, v)
            util.update_input(m.op, 1, next_iteration(_check_dtype(m, v)))
        exit_vars = [exit(x[0]) for x in switch_vars]
        self._loop_exits = exit_vars
        self.exit_result(exit_vars)
        return body_result, exit_vars

    def _add_outer_pivot(self, enter_vars) -> None:
        """A loop var that is an outer loop's invariant waits for the outer pivot."""
        outer, pivot = self._outer_context, None
        while outer is not None and pivot is None:
            pivot = outer.get_control_pivot()
            outer = outer.outer_context
        if pivot is None:
            return
        for var in enter_vars:
            if util.is_loop_constant_enter(var.op.inputs[0].op):
                var.op._add_control_input(pivot.op)


def _check_dtype(merge_var, next_var):
    if merge_var.dtype.base_dtype != next_var.dtype.base_dtype:
        raise TypeError(
            f"Loop variable '{merge_var.op.inputs[0].op.inputs[0].name}' has type "
            f"{merge_var.dtype.base_dtype.name} before the loop, but the body returns "
            f"{next_var.dtype.base_dtype.name} ('{next_var.name}') for it.")
    return next_var


def _flat_invariants(loop_vars, flat, shape_invariants) -> list:
    if shape_invariants is None:
        return [x.shape for x in flat]
    util.assert_same_structure(loop_vars, shape_invariants, check_types=False)
    shapes = []
    for var, inv, t in zip(util.flatten(loop_vars), util.flatten(shape_invariants), flat):
        if not isinstance(var, Tensor):
            shapes.append(t.shape)          # a TensorArray's flow keeps its own shape
        elif inv is None:
            shapes.append(t.shape)
        elif isinstance(inv, TensorShape):
            shapes.append(inv)
        else:
            raise ValueError("`shapes` must be a (possibly nested) list of shapes.")
    return shapes


def _shape_less_than_or_equal(s1: TensorShape, s2: TensorShape) -> bool:
    d2 = s2.as_tuple()
    if d2 is None:
        return True
    d1 = s1.as_tuple()
    if d1 is None or len(d1) != len(d2):
        return False
    return all(b is None or a == b for a, b in zip(d1, d2))


def _set_shape_invariants(input_vars, enter_vars, shapes) -> None:
    for inp, var, shape in zip(input_vars, enter_vars, shapes):
        if not _shape_less_than_or_equal(inp.shape, shape):
            raise ValueError(
                f"The shape invariant specified for {inp.name} is not compatible with the "
                f"initial shape of the loop variable. It enters the loop with shape "
                f"{inp.shape}, but the specified shape invariant is {shape}.")
        var.set_shape(shape)


def _enforce_shape_invariant(merge_var, next_var) -> None:
    m_shape, n_shape = merge_var.shape, next_var.shape
    if not _shape_less_than_or_equal(n_shape, m_shape):
        input_t = merge_var.op.inputs[0].op.inputs[0]
        raise ValueError(
            f"Input tensor '{input_t.name}' enters the loop with shape {input_t.shape}, but "
            f"has shape {n_shape} after one iteration. To allow the shape to vary across "
            "iterations, use the `shape_invariants` argument of tf.while_loop to specify a "
            "less-specific shape.")


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """Repeats `body` while `cond` is true (TF1's `tf.while_loop`).

    `cond(*vars)` returns a scalar bool tensor; `body(*vars)` returns new values with the same
    structure, dtypes and (unless relaxed by `shape_invariants`) shapes. At most
    `parallel_iterations` iterations run at once; `maximum_iterations` bounds the count.

    Returns:
      The final loop variables: a single value when there is one, else the structure of
      `loop_vars` (always the structure with `return_same_structure`).
    Raises:
      TypeError: cond/body not callable, or the body changes a dtype.
      ValueError: no loop variables, a shape changes without an invariant, or the body
        returns a different structure.
    """
    single = not util.is_sequence(loop_vars)
    if single:
        loop_vars = (loop_vars,)
    with name_scope(name, "while", util.flatten(loop_vars)):
        _check_args(cond, body, loop_vars, parallel_iterations)
        try_to_pack = len(loop_vars) == 1 and not return_same_structure
        if maximum_iterations is not None:
            cond, body, loop_vars, shape_invariants, maximum_iterations = _bound_iterations(
                cond, body, loop_vars, shape_invariants, maximum_iterations, try_to_pack)
        ctxt = WhileContext(maximum_iterations=maximum_iterations,
                            parallel_iterations=parallel_iterations, back_prop=back_prop,
                            swap_memory=swap_memory)
        if ctxt.outer_context is None:
            ctxt.graph.add_to_collection(GraphKeys.WHILE_CONTEXT, ctxt)
        result = ctxt.build_loop(cond, body, loop_vars, shape_invariants,
                                 return_same_structure)
        if maximum_iterations is not None:
            result = result[1]
        if single and return_same_structure:
            result = result[0]
        return result


def _check_args(cond, body, loop_vars, parallel_iterations) -> None:
    if not loop_vars:
        raise ValueError("No loop variables provided")
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")


def _bound_iterations(cond, body, loop_vars, shape_invariants, maximum_iterations,
                      try_to_pack):
    """Adds an iteration counter (TF's maximum_iterations rewrite)."""
    from tensorweave.ops import math_ops
    from tensorweave.ops.constant_op import constant

    maximum_iterations = convert_to_tensor(maximum_iterations, name="maximum_iterations")
    if maximum_iterations.shape.ndims != 0:
        raise ValueError(f"maximum_iterations must be a scalar, saw shape: "
                         f"{maximum_iterations.shape}")
    counter = constant(0, dtype=maximum_iterations.dtype, name="iteration_counter")
    orig_cond, orig_body = cond, body
    if try_to_pack:
        loop_vars = (counter, loop_vars[0])

        def cond(i, lv):
            return math_ops.logical_and(i < maximum_iterations, orig_cond(lv))

        def body(i, lv):
            return (i + 1, orig_body(lv))
    else:
        loop_vars = (counter, loop_vars)

        def cond(i, lv):
            return math_ops.logical_and(i < maximum_iterations, orig_cond(*lv))

        def body(i, lv):
            return (i + 1, orig_body(*lv))
    if shape_invariants is not None:
        if try_to_pack and isinstance(shape_invariants, (list, tuple)) \
                and len(shape_invariants) == 1:
            shape_invariants = shape_invariants[0]
        shape_invariants = (TensorShape([]), shape_invariants)
    return cond, body, loop_vars, shape_invariants, maximum_iterations


__all__ = ["while_loop"]
