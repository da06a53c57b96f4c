"""Gradients of Einsum and Roll; the bitwise ops and EditDistance have none.

    Roll(x, s, a):      d x = Roll(grad, -s, a)
    Einsum("X,Y->O"):   d x = Einsum("O,Y->X'", grad, y), X' = X without letters only x has
                        (broadcast back), summed to x's shape where the ellipsis broadcast
"""

from __future__ import annotations

from tensorweave.autodiff.registry import NotDifferentiable, RegisterGradient
from tensorweave.ops.apply import apply_op
from tensorweave.ops.math_extra_ops import parse_equation


@RegisterGradient("Roll")
def _roll_grad(op, grad):
    return [apply_op("Roll", grad, apply_op("Neg", op.inputs[1]), op.inputs[2]), None, None]


def _einsum_input_grad(op, grad, i):
    inputs, out = parse_equation(op.get_attr("equation"), len(op.inputs))
    others = [j for j in range(len(inputs)) if j != i]
    available = set(out) | {c for j in others for c in inputs[j]}
    target = "".join(c for c in inputs[i] if c in available or c == ".")
    eq = ",".join([out] + [inputs[j] for j in others]) + "->" + target
    r = apply_op("Einsum", [grad] + [op.inputs[j] for j in others], equation=eq)
    x = op.inputs[i]
    if "..." in inputs[i]:
        r = _sum_to_ellipsis(r, x, len(target.replace("...", "")))
    if target == inputs[i]:
        return r
    # letters summed inside x alone: size-1 dims there, then broadcast back to x
    letters = inputs[i].replace("...", "")
    rank = x.shape.ndims
    missing = [rank - len(letters) + k for k, c in enumerate(letters) if c not in available]
    shape = apply_op("Shape", x)
    hot = apply_op("OneHot", missing, rank, True, False)
    mask = apply_op("Any", hot, [0])
    kept_shape = apply_op("SelectV2", mask, apply_op("OnesLike", shape), shape)
    return apply_op("BroadcastTo", apply_op("Reshape", r, kept_shape), shape)


def _sum_to_ellipsis(r, x, n_letters):
    """Sums r's leading (ellipsis) dims down to x's, which may be fewer or of size 1."""
    if x.shape.ndims is None or r.shape.ndims is None:
        return r
    extra = r.shape.ndims - x.shape.ndims
    lead = x.shape.ndims - n_letters
    axes = list(range(extra)) + [extra + k for k in range(lead)
                                 if x.shape.as_tuple()[k] == 1 and
                                 r.shape.as_tuple()[extra + k] != 1]
    if not axes:
        return r
    summed = apply_op("Sum", r, axes, keep_dims=True)
    return apply_op("Reshape", summed, apply_op("Shape", x)) if extra else summed


@RegisterGradient("Einsum")
def _einsum_grad(op, grad):
    return [_einsum_input_grad(op, grad, i) for i in range(len(op.inputs))]


for _name in ("BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift", "Invert",
              "PopulationCount"):
    NotDifferentiable(_name)
