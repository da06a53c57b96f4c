"""Gradients of the special functions (TF's math_grad.py and random_grad.py): Zeta and
Polygamma in their second input only; Igamma and Igammac in a and x; Betainc in x only; a
RandomGamma sample in alpha (implicit differentiation, through RandomGammaGrad).

TF defines no derivative in the order n of polygamma, in x of zeta(x, q), nor in a and b of
betainc: those gradients are None. MirrorPad and MirrorPadGrad gradients live in array_grad.py.
"""

from __future__ import annotations

from tensorweave.autodiff.gradients import conj, reduce_for_broadcast
from tensorweave.autodiff.registry import RegisterGradient
from tensorweave.ops.apply import apply_op
from tensorweave.ops.constant_op import constant


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


@RegisterGradient("Igamma")
def _igamma_grad(op, grad):
    """dP/da = IgammaGradA(a, x); dP/dx = x^(a-1) e^-x / Gamma(a), formed in logarithms (TF
    does: Gamma(a) alone overflows)."""
    a, x = op.inputs
    partial_a = apply_op("IgammaGradA", a, x)
    partial_x = apply_op("Exp", -x + (a - 1.0) * apply_op("Log", x) - apply_op("Lgamma", a))
    return reduce_for_broadcast(a, x, partial_a * grad, partial_x * grad)


@RegisterGradient("Igammac")
def _igammac_grad(op, grad):
    """Q = 1 - P: the negated gradients of Igamma."""
    ga, gx = _igamma_grad(op, grad)
    return -ga, -gx


def _xlog1py(t, y):
    """t * log1p(y), 0 where t == 0 (TF's xlog1py, from existing ops)."""
    zero = apply_op("ZerosLike", t)
    return apply_op("SelectV2", apply_op("Equal", t, zero), zero, t * apply_op("Log1p", y))


@RegisterGradient("Betainc")
def _betainc_grad(op, grad):
    """d I_x(a, b) / dx = x^(a-1) (1-x)^(b-1) / B(a, b), in logarithms (xlogy, xlog1py: the
    tails at a == 1 or b == 1 tend to 0 rather than nan); summed to x's shape when x is the
    scalar beside tensors."""
    a, b, x = op.inputs
    log_beta = apply_op("Lgamma", a) + apply_op("Lgamma", b) - apply_op("Lgamma", a + b)
    partial_x = apply_op("Exp", _xlog1py(b - 1.0, -x) + apply_op("Xlogy", a - 1.0, x)
                         - log_beta)
    return None, None, reduce_for_broadcast(op.outputs[0], x, None, partial_x * grad)[1]


@RegisterGradient("RandomGamma")
def _random_gamma_grad(op, grad):
    """d sample / d alpha (RandomGammaGrad), summed over the sample dimensions; the shape
    input has no gradient."""
    shape, alpha = op.inputs
    sample = op.outputs[0]
    n = apply_op("Size", shape, out_type="int32")
    ones = apply_op("Fill", apply_op("Reshape", n, constant([1])), constant(1))
    lead = apply_op("ConcatV2", [ones, apply_op("Shape", alpha, out_type="int32")], 0)
    partial = apply_op("RandomGammaGrad", apply_op("Reshape", alpha, lead), sample)
    axes = apply_op("Range", constant(0), n, constant(1))
    return None, apply_op("Sum", grad * partial, axes)
