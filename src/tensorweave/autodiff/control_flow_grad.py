"""Gradient functions for dataflow control flow (TF's control_flow_grad.py), `tf.cond` only.

In a cond, every tensor a branch takes from outside passes a Switch on the predicate, and the
branch results meet in Merges. Backward, a Merge's gradient is a Switch of the incoming
gradient on the same predicate (so only the taken branch's gradient ops run), and a Switch's
gradient is a Merge of its outputs' gradients (the untaken output's gradient is a zeros that
lives only when the other branch runs; `gradients()` makes it). Loops (`tf.while_loop`) are
not differentiable here: their ops raise NotImplementedError.
"""

from __future__ import annotations

from tensorweave.autodiff.registry import NotDifferentiable, RegisterGradient
from tensorweave.ops.apply import apply_op


def _cond_context(op):
    """The CondContext `op` was built in (None outside a cond)."""
    from tensorweave.ops import control_flow_util as util

    ctxt = util.get_context(op)
    return ctxt if getattr(ctxt, "pred", None) is not None else None


def _switch(data, pred, name="Switch"):
    from tensorweave.ops.control_flow_context import switch_ref_or_tensor

    return switch_ref_or_tensor(data, pred, name=name)


def _merge(inputs, name="Merge"):
    op = "RefMerge" if all(t.dtype.is_ref_dtype for t in inputs) else "Merge"
    return apply_op(op, list(inputs), name=name)[0]


@RegisterGradient("Switch")
@RegisterGradient("RefSwitch")
def _switch_grad(op, *grads):
    """A Merge of the two outputs' gradients (exactly one of them is live)."""
    ctxt = _cond_context(op)
    if ctxt is not None:
        if grads[1 - ctxt.branch] is None:
            return None, None
        return _merge(grads, name="cond_grad"), None
    false_grad = _switch(grads[0], op.inputs[1])[0]
    true_grad = _switch(grads[1], op.inputs[1])[1]
    return _merge([false_grad, true_grad]), None


@RegisterGradient("Merge")
@RegisterGradient("RefMerge")
def _merge_grad(op, grad, _):
    """A Switch of `grad` on the cond's predicate: output i goes to the branch of input i."""
    from tensorweave.ops import control_flow_util as util

    ctxt = util.get_output_context(op.inputs[0].op)
    if getattr(ctxt, "pred", None) is not None:
        return list(_switch(grad, ctxt.pred, name="cond_grad"))
    index = op.outputs[1]
    return [_switch(grad, apply_op("Equal", index, i))[1] for i in range(len(op.inputs))]


def _while_loop_grad(op, *grads):
    raise NotImplementedError(
        f"Gradients through tf.while_loop are not supported (op '{op.name}' of type "
        f"{op.type}).")


for _name in ("Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration",
              "LoopCond"):
    RegisterGradient(_name)(_while_loop_grad)

NotDifferentiable("Assert")

__all__: list[str] = []
