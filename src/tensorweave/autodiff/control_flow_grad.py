"""Gradient functions for dataflow control flow (TF1's control_flow_grad.py).

cond: every tensor a branch takes from outside passes a Switch on the predicate, and the
branch results meet in Merges. Backward, a Merge's gradient is a Switch of the incoming
gradient on the same predicate (so only the taken branch's gradient ops run), and a Switch's
gradient is a Merge of its outputs' gradients (the untaken output's gradient is a zeros that
lives only when the other branch runs; `gradients()` makes it). Inside a while loop the
predicate of each iteration is saved, and the gradient Switch uses the saved one.

while_loop: the gradient functions run inside the loop's gradient loop
(`control_flow_state.py`), which runs once per forward iteration, in reverse:
- Exit → Enter (`b_exit`) of the gradient into the gradient loop;
- loop Switch → Merge (`b_switch`) of the Exit side's gradient with, from the second visit
  (the loop body side), a NextIteration of the body's gradient;
- loop Merge → Switch of the gradient on the gradient loop's predicate: output 0 leaves the
  gradient loop (to the Enter's gradient), output 1 goes round (to the NextIteration's);
- NextIteration → the gradient itself; LoopCond → none;
- Enter → Exit of the gradient from the gradient loop; for a loop invariant (constant Enter),
  the sum over all iterations (an accumulator loop).
"""

from __future__ import annotations

from tensorweave.autodiff.registry import NotDifferentiable, RegisterGradient
from tensorweave.ops import control_flow_util as util
from tensorweave.ops.apply import apply_op
from tensorweave.ops.indexed_slices import IndexedSlices


def _cond_context(ctxt):
    """`ctxt` when it is a CondContext, else None."""
    return ctxt if getattr(ctxt, "pred", None) is not None else None


def _while_context(ctxt):
    """`ctxt` when it is a WhileContext, else None."""
    return ctxt if ctxt is not None and ctxt.get_while_context() is ctxt else None


def _grad_context(op):
    """The context gradients are being built in (the gradient loop, inside a loop)."""
    return op.graph.control_flow_context


def _switch(data, pred, name="Switch"):
    from tensorweave.ops.control_flow_context import switch_ref_or_tensor

    return switch_ref_or_tensor(data, pred, name=name)


def _merge(inputs, name="Merge"):
    op = "RefMerge" if all(t.dtype.is_ref_dtype for t in inputs) else "Merge"
    return apply_op(op, list(inputs), name=name)[0]


def _dense(g):
    from tensorweave.autodiff.gradients import to_dense

    return to_dense(g) if isinstance(g, IndexedSlices) else g


@RegisterGradient("Switch")
@RegisterGradient("RefSwitch")
def _switch_grad(op, *grads):
    """A Merge of the two outputs' gradients (exactly one of them is live)."""
    op_ctxt = util.get_context(op)
    if _while_context(op_ctxt) is not None:
        return _loop_switch_grad(op, grads)
    ctxt = _cond_context(op_ctxt)
    if ctxt is not None:
        if grads[1 - ctxt.branch] is None:
            return None, None
        return _merge(grads, name="cond_grad"), None
    false_grad = _switch(grads[0], op.inputs[1])[0]
    true_grad = _switch(grads[1], op.inputs[1])[1]
    return _merge([false_grad, true_grad]), None


def _loop_switch_grad(op, grads):
    """First visit (from the Exit): Merge(g, g) named b_switch; second visit (from the body):
    the body's gradient becomes the Merge's back edge through a NextIteration."""
    from tensorweave.ops.control_flow_ops import next_iteration

    state = _grad_context(op).grad_state
    merge_grad = state.switch_map.get(op)
    if merge_grad is not None:
        if grads[1] is not None:
            util.update_input(merge_grad.op, 1, next_iteration(_dense(grads[1])))
        return None, None
    if grads[0] is None:        # reached from the body first: the Exit side has no gradient
        return None, None
    g = _dense(grads[0])
    merge_grad = _merge([g, g], name="b_switch")
    state.switch_map[op] = merge_grad
    return merge_grad, None


@RegisterGradient("Merge")
@RegisterGradient("RefMerge")
def _merge_grad(op, grad, _):
    """A Switch of `grad`: on the gradient loop's predicate for a loop Merge; on the cond's
    predicate (saved per iteration inside a loop) for a cond Merge; else on value_index."""
    op_ctxt = util.get_output_context(op.inputs[0].op)
    grad_ctxt = _grad_context(op)
    if _while_context(op_ctxt) is not None:
        return list(_switch(grad, grad_ctxt.pivot))
    ctxt = _cond_context(op_ctxt)
    if ctxt is not None:
        return list(_switch(grad, _saved_pred(ctxt, grad_ctxt), name="cond_grad"))
    index = op.outputs[1]
    return [_switch(grad, apply_op("Equal", index, i))[1] for i in range(len(op.inputs))]


def _saved_pred(cond_ctxt, grad_ctxt):
    """The cond's predicate as seen in the current gradient loop: its forward value for
    each iteration, saved on a stack (once per predicate). Outside loops, the predicate."""
    state = getattr(grad_ctxt, "grad_state", None)
    pred = cond_ctxt.pred
    if state is None:
        return pred
    real_pred = state.history_map.get(pred.name)
    if real_pred is None:
        loop = state.grad_context
        loop.exit()
        history = state.add_forward_accumulator(pred)
        loop.enter()
        real_pred = state.add_backprop_accumulated_value(history, pred)
        state.history_map[pred.name] = real_pred
    return real_pred


@RegisterGradient("Exit")
@RegisterGradient("RefExit")
def _exit_grad(op, grad):
    """The gradient enters the gradient loop (`b_exit`), as one of its loop variables."""
    from tensorweave.ops.control_flow_ops import enter

    grad_ctxt = _grad_context(op)
    if not grad_ctxt.back_prop:
        return None
    if util.get_context(op).grad_state is not None:
        raise TypeError("Second-order gradient for while loops not supported.")
    grad = _dense(grad)     # NOTE: TF enters an IndexedSlices' parts; we sum it first
    grad_ctxt.add_name(grad.name)
    with util.entered(grad_ctxt):
        result = enter(grad, grad_ctxt.name, is_constant=False,
                       parallel_iterations=grad_ctxt.parallel_iterations, name="b_exit")
    grad_ctxt.loop_enters.append(result)
    return result


@RegisterGradient("NextIteration")
@RegisterGradient("RefNextIteration")
def _next_iteration_grad(_, grad):
    """The identity: the gradient loop's NextIteration is built by the Switch's gradient."""
    return grad


@RegisterGradient("Enter")
@RegisterGradient("RefEnter")
def _enter_grad(op, grad):
    """An Exit from the gradient loop; for a loop invariant, the sum over all iterations."""
    from tensorweave.ops.control_flow_ops import exit

    grad_ctxt = _grad_context(op)
    if getattr(grad_ctxt, "grad_state", None) is None or not grad_ctxt.back_prop:
        return grad
    if op.get_attr("is_constant"):
        if isinstance(grad, IndexedSlices):
            return grad_ctxt.add_backprop_indexed_slices_accumulator(op, grad)
        return grad_ctxt.add_backprop_accumulator(op, grad)
    result = exit(_dense(grad))
    grad_ctxt.loop_exits.append(result)
    grad_ctxt.exit_result([result])
    return result


@RegisterGradient("LoopCond")
def _loop_cond_grad(op, grad):
    """The loop predicate stops backprop."""
    return None


NotDifferentiable("Assert")
for _name in ("StackV2", "StackPushV2", "StackPopV2", "StackCloseV2"):
    NotDifferentiable(_name)

__all__: list[str] = []
