"""Gradient of MaxPoolGradGrad (TF's nn_grad.py): linear in `grad`, whose adjoint is
MaxPoolGrad; the pooled values get zeros. TF defines no gradient for MaxPoolGradGradV2."""

from __future__ import annotations

from tensorweave.autodiff.gradients import zeros_like
from tensorweave.autodiff.registry import RegisterGradient
from tensorweave.ops.apply import apply_op


@RegisterGradient("MaxPoolGradGrad")
def _max_pool_grad_grad_grad(op, grad):
    attrs = {k: op.get_attr(k) for k in ("ksize", "strides", "padding", "data_format")}
    return (zeros_like(op.inputs[0]), zeros_like(op.inputs[1]),
            apply_op("MaxPoolGrad", op.inputs[0], op.inputs[1], grad, **attrs))
