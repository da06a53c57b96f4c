"""The CTCLoss gradient (TF's ctc_ops.py): the op's second output, the logits gradient its
kernel computed, scaled by the loss gradient per batch entry. It goes through
PreventGradient, since that fused output has no gradient of its own (TF's message). The
decoders have no gradient, as in TF.
"""

from __future__ import annotations

from tensorweave.autodiff.registry import NotDifferentiable, RegisterGradient
from tensorweave.ops.apply import apply_op

_NO_SECOND = ("Currently there is no way to take the second  derivative of ctc_loss due to "
              "the fused implementation's interaction  with tf.gradients()")


@RegisterGradient("CTCLoss")
def _ctc_loss_grad(op, grad_loss, _):
    grad = apply_op("PreventGradient", op.outputs[1], message=_NO_SECOND)
    return [apply_op("ExpandDims", grad_loss, -1) * grad, None, None, None]


NotDifferentiable("CTCGreedyDecoder")
NotDifferentiable("CTCBeamSearchDecoder")
