"""The state `gradients()` keeps for the while loops it differentiates (TF1's
`control_flow_state.py`).

For each forward loop on a path from xs to ys there is a `GradLoopState`, and a gradient loop
(a `WhileContext` with `grad_state` set) that runs as many iterations as the forward loop
did, in reverse:

    forward loop                              gradient loop
    n = 0; while (pivot) { n += 1; }          c = n; while (c >= 1) { c -= 1; ... }
    acc = StackV2()  (outside the loops)
    StackPushV2(acc, v)  in every iteration   StackPopV2(acc)  in every iteration

Every forward value a gradient function uses inside the gradient loop (`WhileContext.add_value`
calls `get_real_value`) is pushed in each forward iteration and popped in the matching
backward iteration. Control edges keep the order: a push runs after its iteration's counter
Add and before the counter's NextIteration (so iteration i+1 pushes after iteration i); a pop
runs after its iteration's pivot (the counter Sub) and before `b_sync`, which the counter's
NextIteration waits for. Loop invariants (constant Enters) are not saved: the gradient loop
reads them through its own Enter, and their gradients are summed over iterations by an
accumulator loop (`WhileContext.add_backprop_accumulator`).

A value inside a `cond` in the loop is pushed inside the branch (only when it runs) and popped
behind a Switch on the saved predicate. Nested loops get nested states: the inner loop's
iteration count is itself saved per outer iteration.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.ops import control_flow_util as util
from tensorweave.ops.apply import apply_op
from tensorweave.ops.control_flow_context import CondContext, switch_ref_or_tensor
from tensorweave.ops.stack_ops import stack_pop_v2, stack_push_v2, stack_v2


class GradLoopState:
    """The forward and gradient sides of one differentiated while loop.

    `history_map` maps a forward value's name to its value in the gradient loop (popped from
    a stack, an Enter of an invariant, or a cloned constant); `switch_map` maps a forward loop
    Switch to the gradient Merge built when its Exit side was differentiated (its back edge is
    added when the Switch is visited again, from the loop body).
    """

    def __init__(self, forward_ctxt, outer_grad_state):
        self._outer_grad_state = outer_grad_state
        self._forward_context = forward_ctxt
        self._forward_sync = None
        self._grad_sync = None
        self._history_map: dict = {}
        self._switch_map: dict = {}
        self.unused_exits: list = []
        self.deferred_exits: list = []
        self.forward_loop_exits = list(forward_ctxt.loop_exits)
        self.pending_exits_count = len(forward_ctxt.loop_exits)
        if outer_grad_state is not None:
            outer_forward = outer_grad_state.forward_context
        else:
            outer_forward = forward_ctxt.outer_context
        with util.entered(outer_forward):
            count, self._forward_index = forward_ctxt.add_forward_loop_counter(outer_grad_state)
        if outer_grad_state is None:
            with util.entered(outer_forward):
                self._grad_context = _grad_context_for(forward_ctxt, self)
                self._grad_index = self._grad_context.add_backprop_loop_counter(count, None)
            return
        # NOTE: nested: the inner loop ran once per outer iteration, each time with its own
        # count; the counts are saved in the outer loop and popped in the outer gradient loop.
        outer_forward.add_name(count.name)
        history_count = outer_grad_state.add_forward_accumulator(count)
        with util.entered(outer_grad_state.grad_context):
            self._grad_context = _grad_context_for(forward_ctxt, self)
            real_count = outer_grad_state.add_backprop_accumulated_value(history_count, count)
            self._grad_index = self._grad_context.add_backprop_loop_counter(
                real_count, outer_grad_state)

    # -- properties -----------------------------------------------------------------------------
    @property
    def outer_grad_state(self):
        return self._outer_grad_state

    @property
    def forward_context(self):
        return self._forward_context

    @property
    def forward_index(self):
        """The forward counter's NextIteration (the counter for the next iteration)."""
        return self._forward_index

    @property
    def grad_context(self):
        return self._grad_context

    @property
    def grad_index(self):
        """The gradient counter's NextIteration."""
        return self._grad_index

    @property
    def history_map(self) -> dict:
        return self._history_map

    @property
    def switch_map(self) -> dict:
        return self._switch_map

    @property
    def forward_sync(self):
        """A ControlTrigger (`f_sync`) in the forward loop, before the counter's NextIteration:
        pushes inside a cond wait for it, so they too happen in iteration order."""
        if self._forward_sync is None:
            self._forward_sync = _trigger("f_sync", self._forward_context)
            self._forward_index.op.add_control_input(self._forward_sync)
        return self._forward_sync

    @property
    def grad_sync(self):
        """A ControlTrigger (`b_sync`) in the gradient loop, before the counter's NextIteration:
        every pop of an iteration happens before the next iteration starts."""
        if self._grad_sync is None:
            self._grad_sync = _trigger("b_sync", self._grad_context)
            self._grad_index.op.add_control_input(self._grad_sync)
        return self._grad_sync

    # -- saving forward values ----------------------------------------------------------------
    def add_forward_accumulator(self, value, dead_branch: bool = False):
        """A stack (created where gradients() was called) that receives `value` in every
        forward iteration; returns its handle. With `dead_branch`, `value` lives exactly when
        its cond branch does NOT run (zeros for the untaken side of a Switch).

        Raises:
          TypeError: `value` is inside a context nested in the loop that is not a cond.
        """
        graph = value.graph
        current = graph.control_flow_context
        with graph.control_dependencies(None):      # NOTE: also leaves every context
            with util.entered(current), graph.colocate_with(value.op):
                max_size = _int32_const(-1)
                acc = stack_v2(max_size, value.dtype.base_dtype, name="f_acc")
            enter_acc = self._forward_context.add_value(acc)
            push = self._push(enter_acc, value, dead_branch)
            push.op.add_control_input(self._forward_index.op.inputs[0].op)
        return acc

    def _push(self, enter_acc, value, dead_branch: bool):
        swap = self._forward_context.swap_memory
        value_ctxt = util.get_output_context(value.op)
        if value_ctxt is self._forward_context:
            with util.entered(self._forward_context):
                push = stack_push_v2(enter_acc, value, swap_memory=swap)
            self._forward_index.op.add_control_input(push.op)
            return push
        if not isinstance(value_ctxt, CondContext):
            raise TypeError(f"Cannot save '{value.name}' for the gradient of while loop "
                            f"'{self._forward_context.name}': it is in context {value_ctxt!r}, "
                            "which is neither the loop nor a cond inside it")
        if dead_branch:
            with util.entered(value_ctxt.outer_context):
                push = stack_push_v2(enter_acc, value, swap_memory=swap)
            util.set_context(push.op, value_ctxt)
        else:
            with util.entered(value_ctxt):
                push = stack_push_v2(enter_acc, value, swap_memory=swap)
        self.forward_sync.add_control_input(push.op)
        return push

    def add_backprop_accumulated_value(self, history_value, value, dead_branch: bool = False):
        """The pop, in the gradient loop, of stack `history_value` that saved `value`; behind
        a Switch on the saved predicate when `value` is inside a cond (`dead_branch`: on the
        untaken side)."""
        cond_ctxt = _enclosing_cond(value, util.get_context(history_value.op))
        graph = value.graph
        with graph.control_dependencies(None), util.entered(self._grad_context):
            if cond_ctxt is not None:
                pred = self._saved_pred(cond_ctxt)
                branch = (1 - cond_ctxt.branch) if dead_branch else cond_ctxt.branch
                history_value = switch_ref_or_tensor(history_value, pred)[branch]
            pop = stack_pop_v2(history_value, value.dtype.base_dtype)
            pop.set_shape(value.shape)
        if self._grad_context.parallel_iterations > 1:
            self.grad_sync.add_control_input(pop.op)
        return pop

    def _saved_pred(self, cond_ctxt):
        state, pred = self, None
        while pred is None and state is not None:
            pred = state.history_map.get(cond_ctxt.pred.name)
            state = state.outer_grad_state
        return cond_ctxt.pred if pred is None else pred

    def get_real_value(self, value):
        """`value` (a forward tensor of this loop) as seen in the gradient loop: an invariant
        enters the gradient loop directly, a constant is cloned, anything else is saved on a
        stack in the forward loop and popped here. Called in the gradient loop's context."""
        real = self._history_map.get(value.name)
        if real is not None:
            return real
        cur_value, cur_state, history = value, self, None
        while True:
            enter_op = util.get_loop_constant_enter(cur_value)
            if enter_op is not None:
                cur_value = enter_op.inputs[0]
                cur_state = cur_state.outer_grad_state
                if cur_state is None:       # outside every differentiated loop: an invariant
                    real = self._grad_context.add_value(cur_value)
                    break
            elif cur_value.op.type == "Const":
                real = _clone_const(cur_value)
                break
            else:
                self._grad_context.exit()
                history = cur_state.add_forward_accumulator(cur_value)
                self._grad_context.enter()
                break
        if real is None:
            real = cur_state.add_backprop_accumulated_value(history, cur_value)
            if cur_state is not self:
                real = self._grad_context.add_value(real)
        self._history_map[value.name] = real
        return real


class ControlFlowState:
    """The GradLoopState of every forward loop one `gradients()` call differentiates."""

    def __init__(self):
        self._map: dict = {}

    def get_grad_state(self, op, before: bool):
        """The state of the loop `op` is in; for an Exit with `before`, of the loop around it
        (an Exit's gradients are summed outside its loop)."""
        if before and util.is_loop_exit(op):
            ctxt = util.get_context(op).outer_context
            forward = ctxt.get_while_context() if ctxt is not None else None
        else:
            forward = util.get_while_context(op)
        return self._map.get(forward) if forward is not None else None

    def enter_grad_while_context(self, op, before: bool) -> None:
        state = self.get_grad_state(op, before)
        if state is not None:
            state.grad_context.enter()

    def exit_grad_while_context(self, op, before: bool) -> None:
        state = self.get_grad_state(op, before)
        if state is not None:
            state.grad_context.exit()

    def add_while_context(self, op, between_list: list, between: set) -> None:
        """Creates the state of the loop of Exit `op` (once), and puts all the loop's Exits
        between xs and ys: unused loop variables still carry gradient around the loop."""
        forward = util.get_while_context(op)
        if forward in self._map:
            return
        outer = forward.outer_context
        outer = outer.get_while_context() if outer is not None else None
        outer_state = self._map.get(outer) if outer is not None else None
        state = GradLoopState(forward, outer_state)
        self._map[forward] = state
        for loop_exit in state.forward_loop_exits:
            if loop_exit.op not in between:
                between.add(loop_exit.op)
                between_list.append(loop_exit.op)

    def process_unused_loop_exits(self, pending: dict, to_ops: set) -> list:
        """Counts the Exits no between op consumes; returns the unused ones of loops whose
        Exits are now all accounted for (they get zero gradients when trainable)."""
        loop_exits = []
        for state in self._map.values():
            for y in state.forward_loop_exits:
                if pending[y.op] == 0:
                    state.pending_exits_count -= 1
                    if y.op not in to_ops:
                        state.unused_exits.append(y)
                    if state.pending_exits_count == 0:
                        loop_exits.extend(state.unused_exits)
            for y in state.forward_context.loop_enters:
                if pending[y.op] == 0:
                    pending[y.op] = 1
        return loop_exits

    # -- zeros ----------------------------------------------------------------------------------
    def zeros_like_for_exit(self, val):
        """The zero gradient of Exit output `val` (a loop variable whose result is unused),
        built outside the loop; in a nested loop, from the shape saved per outer iteration."""
        forward = util.get_context(val.op)
        outer = forward.outer_context
        outer = outer.get_while_context() if outer is not None else None
        outer_state = self._map.get(outer) if outer is not None else None
        if outer_state is None:
            if val.shape.is_fully_defined():
                return _zeros(val.shape.as_list(), val.dtype)
            return apply_op("ZerosLike", val, name="zeros_like")
        if val.shape.is_fully_defined():
            with util.entered(outer_state.grad_context):
                return _zeros(val.shape.as_list(), val.dtype)
        with util.entered(forward.outer_context):
            shape = apply_op("Shape", val)
        history = outer_state.add_forward_accumulator(shape)
        with util.entered(outer_state.grad_context):
            real_shape = outer_state.add_backprop_accumulated_value(history, shape)
            return _zeros(real_shape, val.dtype)

    def zeros_like_v1_while_loop(self, op, index: int):
        """The zero gradient of output `index` of `op`, which got none. Built in the gradient
        loop of `op`'s loop (called there): a constant, or zeros of the shape saved per
        iteration; for the untaken side of a cond Switch, behind a Switch on the saved
        predicate. None for a loop Switch (its Exit side fills it in)."""
        if util.is_loop_switch(op):
            return None
        state = self._map.get(util.get_while_context(op))
        if state is None:
            from tensorweave.autodiff.gradients import zeros_for_output

            return zeros_for_output(op, index)
        val = op.outputs[index]
        dead_branch = util.is_switch(op)
        if val.shape.is_fully_defined():
            result = _zeros(val.shape.as_list(), val.dtype)
            if dead_branch:
                op_ctxt = util.get_context(op)
                pred = state.history_map.get(op_ctxt.pred.name)
                if pred is None:
                    pred = state.get_real_value(op_ctxt.pred)
                result = switch_ref_or_tensor(result, pred)[1 - op_ctxt.branch]
            return result
        zeros_shape = _forward_shape(op, index, dead_branch)
        state.grad_context.exit()
        history = state.add_forward_accumulator(zeros_shape, dead_branch=dead_branch)
        state.grad_context.enter()
        shape = state.add_backprop_accumulated_value(history, zeros_shape, dead_branch)
        return _zeros(shape, val.dtype)

    def post_processing(self) -> None:
        """A loop variable whose next value does not depend on its current one: its gradient
        Merge never got a back edge; zeros flow around instead (for iterations > 0)."""
        for state in self._map.values():
            for b_merge in state.switch_map.values():
                inputs = b_merge.op.inputs
                if inputs[0] is not inputs[1]:
                    continue
                util.update_input(b_merge.op, 1, _zeros_next_iteration(state, b_merge))


def maybe_create_control_flow_state(between_list: list, between: set, colocate: bool):
    """A ControlFlowState when a loop Exit is between xs and ys, else None. Adds the other
    Exits of those loops to `between_list` and `between`.

    Raises:
      TypeError: the loop is itself a gradient loop (second-order loop gradients).
      ValueError: an Exit has no loop context (its loop was imported from a GraphDef).
    """
    state = None
    for op in between_list:     # NOTE: the list grows while iterating (more Exits)
        if not util.is_loop_exit(op):
            continue
        ctxt = util.get_context(op)
        if ctxt is None:
            raise ValueError(
                f"Failed to call gradients on a while loop without properly serializing graph "
                f"via MetaGraphDef: Exit op '{op.name}' has no while-loop context (a loop "
                "imported from a GraphDef cannot be differentiated; build it with "
                "tf.while_loop)")
        if ctxt.grad_state is not None:
            raise TypeError("Second-order gradient for while loops not supported.")
        if state is None:
            state = ControlFlowState()
        if colocate:
            with op.graph.colocate_with(op):
                state.add_while_context(op, between_list, between)
        else:
            state.add_while_context(op, between_list, between)
    return state


# -- helpers -----------------------------------------------------------------------------------
def _grad_context_for(forward_ctxt, grad_state):
    from tensorweave.ops.while_loop import WhileContext

    return WhileContext(maximum_iterations=forward_ctxt.maximum_iterations,
                        parallel_iterations=forward_ctxt.parallel_iterations,
                        back_prop=forward_ctxt.back_prop, swap_memory=forward_ctxt.swap_memory,
                        name=forward_ctxt.name, grad_state=grad_state)


def _trigger(name: str, ctxt):
    """A ControlTrigger in `ctxt`, without the pivot input an op built there would get."""
    from tensorweave.ops.control_flow_ops import control_trigger

    graph = ctxt.graph
    with graph.control_dependencies(None):
        op = control_trigger(name=name)
    util.set_context(op, ctxt)
    return op


def _enclosing_cond(value, stop_ctxt):
    """The innermost CondContext around `value` inside `stop_ctxt`, or None."""
    ctxt = util.get_context(value.op)
    while ctxt is not None and ctxt is not stop_ctxt:
        if isinstance(ctxt, CondContext):
            return ctxt
        ctxt = ctxt.outer_context
    return None


def _forward_shape(op, index: int, dead_branch: bool):
    """The runtime shape of output `index` of forward `op`, computed in `op`'s context; for a
    cond Switch, of its input on the untaken side (alive exactly when zeros are needed)."""
    op_ctxt = util.get_context(op)
    if not dead_branch:
        with util.entered(op_ctxt):
            return apply_op("Shape", op.outputs[index])
    with util.entered(op_ctxt.outer_context):
        val = switch_ref_or_tensor(op.inputs[0], op_ctxt.pred)[1 - op_ctxt.branch]
        shape = apply_op("Shape", val)
    util.set_context(val.op, op_ctxt)
    util.set_context(shape.op, op_ctxt)
    return shape


def _zeros_next_iteration(state, b_merge):
    """NextIteration(zeros like the gradient entering through `b_merge`)."""
    from tensorweave.ops.control_flow_ops import next_iteration

    grad = b_merge.op.inputs[0]
    if grad.shape.is_fully_defined():
        with util.entered(state.grad_context):
            return next_iteration(_zeros(grad.shape.as_list(), grad.dtype))
    with util.entered(state.grad_context.outer_context):
        zeros = _zeros(apply_op("Shape", grad.op.inputs[0]), grad.dtype)
    with util.entered(state.grad_context):
        return next_iteration(zeros)


def _zeros(shape, dtype):
    from tensorweave.ops.creation_ops import zeros

    return zeros(shape, dtype.base_dtype)


def _int32_const(value: int):
    from tensorweave.ops.constant_op import constant

    return constant(value, dtype=dtypes.int32)


def _clone_const(t):
    """A copy of Const `t` built in the current (gradient loop) context."""
    from tensorweave.ops.constant_op import constant

    return constant(np.asarray(t.op.get_attr("value")), dtype=t.dtype.base_dtype)


__all__: list[str] = []
