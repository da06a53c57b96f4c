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

`gradients()` adds to a loop it differentiates (TF1's WhileContext grad helpers): an
iteration counter in the forward loop, and a gradient loop (a `WhileContext` with
`grad_state`) driven by a counter running it as many times; inside a gradient loop,
`add_value` replaces forward values by their saved copies (`autodiff/control_flow_state.py`).
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
    switch,
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
        """`val` as seen inside the loop: a constant Enter when it comes from outside.

        While a gradient loop is being built, a value of its forward loop is replaced by its
        saved history (`GradLoopState.get_real_value`: pushed on a stack in the forward loop,
        popped here).
        """
        new_value = val.name not in self._values and util.get_context(val.op) is not self
        if not new_value:
            actual = self._external_values.get(val.name)
            return val if actual is None else actual
        self._values.add(val.name)
        real = _forward_value_in_grad_loop(self._graph, val)
        if real is not None:
            self._external_values[val.name] = real
            return real
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

    def rewrite_inputs(self, op_def, inputs, op_name: str | None = None) -> list:
        if op_def.name in _SHAPE_OPS and _forward_shape_context(self._graph, inputs[0]):
            return inputs       # add_op moves the op into the forward loop
        return super().rewrite_inputs(op_def, inputs, op_name)

    def add_op(self, op) -> None:
        """As the base class, except that a Shape/Size/Rank of a forward value built while its
        gradient loop is built joins the forward loop: its small result is what gets saved
        per iteration, not the tensor (TF's WhileContext.AddOp)."""
        if op.type in _SHAPE_OPS:
            ctxt = _forward_shape_context(self._graph, op.inputs[0])
            if ctxt:
                util.set_context(op, ctxt)
                ctxt._add_op_internal(op)
                return
        super().add_op(op)

    def _add_op_internal(self, op) -> None:
        if not op.inputs:
            internal, external = self._remove_external_control_edges(op)
            if not internal:
                op.add_control_input(self.get_control_pivot().op)
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
        op.add_control_inputs(ids)

    def _maybe_add_control_dependency(self, op) -> None:
        """An op fed only by loop invariants runs once per iteration via the pivot."""
        if op.control_inputs:
            return
        if all(util.is_loop_constant_enter(x.op) for x in op.inputs):
            op.add_control_input(self.get_control_pivot().op)

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
                var.op.add_control_input(pivot.op)


    # -- gradient loops (used by autodiff/control_flow_state.py) ------------------------------
    def _loop_var_enter(self, x, name: str, use_input_shape: bool = True):
        """A (non-constant) Enter of `x`, built inside this context, recorded in loop_enters."""
        self.add_name(x.name)
        e = enter(x, self._name, is_constant=False,
                  parallel_iterations=self._parallel_iterations,
                  use_input_shape=use_input_shape, name=name)
        self._loop_enters.append(e)
        return e

    def _loop_exits_of(self, switches, name: str) -> list:
        exits = [exit(sw[0], name=name) for sw in switches]
        self._loop_exits.extend(exits)
        self.exit_result(exits)
        return exits

    def add_forward_loop_counter(self, outer_grad_state):
        """Adds `n = 0; while (pivot) n += 1` to this forward loop (TF's AddForwardLoopCounter).

        Called in the loop's outer context. Stack pushes are ordered before the counter's
        NextIteration and after its Add, so they happen in iteration order.

        Returns:
          (the number of iterations run: an Exit, the counter's NextIteration)
        """
        from tensorweave.ops import math_ops
        from tensorweave.ops.constant_op import constant

        n = constant(0, name="f_count")
        if outer_grad_state is not None:
            # NOTE: the pushes of one run of an inner loop come before those of the next run.
            n.op.add_control_input(outer_grad_state.forward_index.op.inputs[0].op)
        with util.entered(self):
            enter_n = self._loop_var_enter(n, "f_count")
            merge_n = merge([enter_n, enter_n])[0]
            switch_n = switch(merge_n, self._pivot)
            next_n = next_iteration(math_ops.add(switch_n[1], 1))
            util.update_input(merge_n.op, 1, next_n)
            (total,) = self._loop_exits_of([switch_n], "f_count")
        return total, next_n

    def add_backprop_loop_counter(self, count, outer_grad_state):
        """Makes this (gradient) loop run `count` times: `n = count; while (n >= 1) n -= 1`.

        Called in the loop's outer context; sets the loop's pivots. Returns the counter's
        NextIteration, which stack pops are ordered before (TF's AddBackpropLoopCounter).
        """
        from tensorweave.ops import math_ops
        from tensorweave.ops.constant_op import constant

        one = constant(1, name="b_count")
        with util.entered(self):
            enter_count = self._loop_var_enter(count, "b_count")
            merge_count = merge([enter_count, enter_count])[0]
            self._pivot_for_pred = merge_count
            self._pivot = loop_cond(math_ops.greater_equal(merge_count, one), name="b_count")
            switch_count = switch(merge_count, self._pivot)
            index = math_ops.subtract(switch_count[1], one)
            self._pivot_for_body = index
            next_count = next_iteration(index)
            util.update_input(merge_count.op, 1, next_count)
            (final_zero,) = self._loop_exits_of([switch_count], "b_count")
            if outer_grad_state is not None:
                # NOTE: the pops of one run of an inner loop come before those of the next.
                outer_grad_state.grad_sync.add_control_input(final_zero.op)
        return next_count

    def add_backprop_accumulator(self, op, grad):
        """The sum over all iterations of `grad`, the gradient of loop invariant `op` (a
        constant Enter): `acc = 0; while (pivot) acc += grad`. Called in this gradient loop;
        returns the accumulator's Exit (TF's AddBackpropAccumulator)."""
        from tensorweave.ops import math_ops

        self.exit()
        acc = self._zero_accumulator(op, grad)
        self.enter()
        enter_acc = self._loop_var_enter(acc, "b_acc")
        merge_acc = merge([enter_acc, enter_acc], name="b_acc")[0]
        switch_acc = switch(merge_acc, self._pivot)
        next_acc = next_iteration(math_ops.add(switch_acc[1], grad))
        util.update_input(merge_acc.op, 1, next_acc)
        return self._loop_exits_of([switch_acc], "b_acc")[0]

    def _zero_accumulator(self, op, grad):
        """Zeros shaped like loop invariant `op.inputs[0]`, built in the outer context (a Const
        when `grad`'s shape is static; else from the invariant's shape, saved per outer
        iteration when this gradient loop is nested in another)."""
        from tensorweave.ops.apply import apply_op
        from tensorweave.ops.constant_op import constant
        from tensorweave.ops.creation_ops import zeros

        outer = self._outer_context
        if grad.shape.is_fully_defined():
            with util.entered(outer):
                return constant(0, grad.dtype.base_dtype, shape=grad.shape.as_list(),
                                name="b_acc")
        value = op.inputs[0]
        if getattr(outer, "grad_state", None) is not None:
            forward_outer = self._grad_state.forward_context.outer_context
            with util.entered(forward_outer):
                zeros_shape = apply_op("Shape", value)
            outer_state = self._grad_state.outer_grad_state
            history = outer_state.add_forward_accumulator(zeros_shape)
            with util.entered(outer):
                real_shape = outer_state.add_backprop_accumulated_value(history, zeros_shape)
                return zeros(real_shape, grad.dtype.base_dtype)
        with util.entered(outer):
            return zeros(apply_op("Shape", value), grad.dtype.base_dtype)

    def add_backprop_indexed_slices_accumulator(self, op, grad):
        """As `add_backprop_accumulator` for an IndexedSlices gradient: the iterations'
        indices and values are concatenated (after a zero row at index 0), the dense shape is
        the largest seen (TF's AddBackpropIndexedSlicesAccumulator)."""
        from tensorweave.ops import math_ops
        from tensorweave.ops.indexed_slices import IndexedSlices
        from tensorweave.ops.joining_ops import concat

        self.exit()
        init = self._zero_slices(op, grad)
        self.enter()
        enters = [self._loop_var_enter(x, "b_acc", use_input_shape=False) for x in init]
        enters[0].set_shape([None])
        if init[1].shape.ndims is not None:
            enters[1].set_shape([None] + init[1].shape.as_list()[1:])
        merges = [merge([x, x], name="b_acc")[0] for x in enters]
        switches = [switch(x, self._pivot) for x in merges]
        acc = [concat([sw[1], x], 0) for sw, x in zip(switches[:2], [grad.indices, grad.values])]
        if len(init) == 3:
            acc.append(math_ops.maximum(grad.dense_shape, switches[2][1]))
        for m, x in zip(merges, acc):
            util.update_input(m.op, 1, next_iteration(x))
        exits = self._loop_exits_of(switches, "b_acc")
        return IndexedSlices(exits[1], exits[0], exits[2] if len(exits) == 3 else None)

    def _zero_slices(self, op, grad) -> list:
        """[indices, values(, dense_shape)] initial accumulators: one zero row at index 0."""
        from tensorweave.ops.apply import apply_op
        from tensorweave.ops.constant_op import constant
        from tensorweave.ops.creation_ops import zeros
        from tensorweave.ops.joining_ops import concat

        values, dense_shape = grad.values, grad.dense_shape
        with util.entered(self._outer_context):
            if values.shape.is_fully_defined():
                values_acc = constant(0, values.dtype.base_dtype,
                                      shape=[1] + values.shape.as_list()[1:], name="b_acc")
            else:
                inner_dims = apply_op("StridedSlice", apply_op("Shape", op.inputs[0]), [1],
                                      [0], [1], end_mask=1)
                values_acc = zeros(concat([[1], inner_dims], 0), values.dtype.base_dtype)
            out = [constant([0], grad.indices.dtype.base_dtype), values_acc]
            if dense_shape is not None:
                if dense_shape.shape.is_fully_defined():
                    out.append(constant(0, dense_shape.dtype.base_dtype,
                                        shape=dense_shape.shape.as_list()))
                else:
                    out.append(apply_op("ZerosLike", apply_op(
                        "Shape", op.inputs[0], out_type=dense_shape.dtype.base_dtype)))
        return out

_SHAPE_OPS = frozenset(["Shape", "Size", "Rank"])


def _current_grad_state(graph):
    """The GradLoopState of the gradient loop being built now, or None."""
    ctxt = graph.control_flow_context
    get_while = getattr(ctxt, "get_while_context", None)
    ctxt = get_while() if get_while is not None else None
    return None if ctxt is None else ctxt.grad_state


def _forward_value_in_grad_loop(graph, val):
    """`val`'s saved value in the gradient loop being built, when `val` belongs to that
    loop's forward loop (None otherwise)."""
    state = _current_grad_state(graph)
    if state is None:
        return None
    fwd = util.get_while_context(val.op)
    if fwd is not None and util.is_loop_exit(val.op):
        outer = fwd.outer_context
        fwd = outer.get_while_context() if outer is not None else None
    if fwd is None or fwd is not state.forward_context:
        return None
    return state.get_real_value(val)


def _forward_shape_context(graph, x):
    """The forward context of `x` when a shape op of `x` is being built in `x`'s gradient
    loop (None otherwise)."""
    state = _current_grad_state(graph)
    if state is None or util.is_loop_exit(x.op):
        return None
    if util.get_while_context(x.op) is not state.forward_context:
        return None
    return util.get_context(x.op)


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
