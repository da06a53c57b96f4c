"""Gradient of ReverseSequence (TF's array_grad.py): reversing is its own inverse, so the
gradient is the same partial reversal of `grad`."""

from __future__ import annotations

from tensorweave.autodiff.registry import RegisterGradient
from tensorweave.ops.apply import apply_op


@RegisterGradient("ReverseSequence")
def _reverse_sequence_grad(op, grad):
    return [apply_op("ReverseSequence", grad, op.inputs[1], seq_dim=op.get_attr("seq_dim"),
                     batch_dim=op.get_attr("batch_dim")), None]
