"""Gradients of Zeta and Polygamma (TF's math_grad.py): only with respect to the second input.

TF defines no derivative in the order n of polygamma nor in x of zeta(x, q): those gradients
are None. MirrorPad and MirrorPadGrad gradients live in array_grad.py.
"""

from __future__ import annotations

from tensorweave.autodiff.gradients import conj, reduce_for_broadcast
from tensorweave.autodiff.registry import RegisterGradient
from tensorweave.ops.apply import apply_op


@RegisterGradient("Polygamma")
def _polygamma_grad(op, grad):
    """d psi^(n)(x) / dx = psi^(n+1)(x)."""
    n, x = op.inputs
    partial_x = apply_op("Polygamma", conj(n) + 1, conj(x))
    return reduce_for_broadcast(n, x, None, partial_x * grad)


@RegisterGradient("Zeta")
def _zeta_grad(op, grad):
    """d zeta(x, q) / dq = -x zeta(x + 1, q)."""
    x, q = op.inputs
    cx = conj(x)
    partial_q = -cx * apply_op("Zeta", cx + 1, conj(q))
    return reduce_for_broadcast(x, q, None, partial_q * grad)
