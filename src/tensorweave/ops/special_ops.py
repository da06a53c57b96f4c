"""Special functions (TF's core/ops/math_ops.cc): Zeta, Polygamma, the regularized incomplete
gamma functions Igamma / Igammac with IgammaGradA and RandomGammaGrad, and the regularized
incomplete beta function Betainc; and MirrorPadGrad (TF's core/ops/array_ops.cc: the op the
MirrorPad gradient emits).

`tf.math.zeta(x, q)` is the Hurwitz zeta function sum_k (q + k)^-x; `tf.math.polygamma(a, x)`
the a-th derivative of digamma; `tf.math.igamma(a, x)` = P(a, x), `igammac` = Q = 1 - P;
`tf.math.betainc(a, b, x)` = I_x(a, b). All but Betainc broadcast; Betainc takes scalars beside
tensors of one shape. Kernels: runtime/kernels/cpu/special.py, special_incomplete.py;
gradients: autodiff/special_grad.py.
"""

from __future__ import annotations

from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import broadcast_binary
from tensorweave.ops.joining_ops import merge_dims, with_rank
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

__all__ = ["betainc", "igamma", "igammac", "polygamma", "zeta"]

register_op("Zeta", inputs=["x: T", "q: T"], outputs=["z: T"], attrs=["T: {float, double}"],
            shape_fn=broadcast_binary)
register_op("Polygamma", inputs=["a: T", "x: T"], outputs=["z: T"],
            attrs=["T: {float, double}"], shape_fn=broadcast_binary)
for _name, _types in (("Igamma", "{half, float, double}"), ("Igammac", "{half, float, double}"),
                      ("IgammaGradA", "{float, double}")):
    register_op(_name, inputs=["a: T", "x: T"], outputs=["z: T"], attrs=[f"T: {_types}"],
                shape_fn=broadcast_binary)
register_op("RandomGammaGrad", inputs=["alpha: T", "sample: T"], outputs=["output: T"],
            attrs=["T: {float, double}"], shape_fn=broadcast_binary)


def _betainc_shape(ctx) -> TensorShape:
    """TF's Betainc shape function: the non-scalar inputs merge into the output's shape; an
    input of unknown rank may be a scalar, so the output is unknown unless the others are
    scalars."""
    merged, scalars, other = None, 0, None
    for i in range(3):
        dims = ctx.input_dims(i)
        if dims is None:
            other = None
        elif len(dims) == 0:
            scalars += 1
        else:
            merged = merge_dims(ctx, merged, dims)
            other = merged
    if scalars == 3:
        return TensorShape([])
    if scalars == 2:
        return TensorShape(None) if other is None else TensorShape(list(other))
    return TensorShape(None) if merged is None else TensorShape(list(merged))


register_op("Betainc", inputs=["a: T", "b: T", "x: T"], outputs=["z: T"],
            attrs=["T: {float, double}"], shape_fn=_betainc_shape)


def _mirror_pad_grad_shape(ctx) -> TensorShape:
    """The input's shape less the paddings (TF's MirrorPadGrad shape function): unknown when
    the number of padding rows is, of unknown dims when their values are."""
    pad_dims = with_rank(ctx, ctx.input_dims(1), 2)
    rank = pad_dims[0]
    if rank is None:
        return TensorShape(None)
    dims = with_rank(ctx, ctx.input_dims(0), rank)
    if pad_dims[1] is not None and pad_dims[1] != 2:
        raise ctx.fail(f"Dimension 1 in both shapes must be equal, but are {pad_dims[1]} and 2. "
                       f"Shapes are [{rank},{pad_dims[1]}] and [{rank},2].")
    paddings = ctx.constant_value(1)
    if paddings is None:
        return TensorShape([None] * rank)
    return TensorShape([_folded_dim(ctx, d, int(b), int(a)) for d, (b, a) in zip(dims, paddings)])


def _folded_dim(ctx, dim, before: int, after: int):
    if before < 0 or after < 0:
        raise ctx.fail("Paddings must be non-negative")
    if dim is None:
        return None
    if dim < before + after:
        raise ctx.fail(f"Negative dimension size caused by subtracting {before + after} from "
                       f"{dim}")
    return dim - before - after


register_op("MirrorPadGrad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
            attrs=["T: type", "Tpaddings: {int32, int64} = DT_INT32",
                   "mode: {'REFLECT', 'SYMMETRIC'}"],
            shape_fn=_mirror_pad_grad_shape)


def zeta(x, q, name=None):
    """The Hurwitz zeta function, elementwise with broadcasting (TF's `tf.math.zeta`).

    zeta(x, q) = sum_{n >= 0} (q + n)^-x: +inf at x == 1, nan for x < 1.

    Args:
        x: a float32 or float64 Tensor.
        q: a Tensor of the same dtype.
        name: the op's name (default "Zeta").
    """
    return apply_op("Zeta", x, q, name=name)


def polygamma(a, x, name=None):
    """The polygamma function psi^(a)(x), elementwise with broadcasting (TF's
    `tf.math.polygamma`): digamma for a == 0, nan unless a is a non-negative integer.

    Args:
        a: a float32 or float64 Tensor of orders.
        x: a Tensor of the same dtype.
        name: the op's name (default "Polygamma").
    """
    return apply_op("Polygamma", a, x, name=name)


def mirror_pad_grad(input, paddings, mode, name=None):  # noqa: A002 - TF's argument name
    """Folds a MirrorPad-ed tensor back (TF's `gen_array_ops.mirror_pad_grad`): each padded
    element is added to the element it mirrors; the output has the input's shape less the
    paddings."""
    return apply_op("MirrorPadGrad", input, paddings, mode=mode, name=name)


def igamma(a, x, name=None):
    """The lower regularized incomplete gamma function P(a, x) = gamma(a, x) / Gamma(a),
    elementwise with broadcasting (TF's `tf.math.igamma`): 0 at x == 0, nan for a <= 0 or
    x < 0.

    Args:
        a: a float Tensor (half, float32 or float64), the shape parameter.
        x: a Tensor of the same dtype.
        name: the op's name (default "Igamma").
    """
    return apply_op("Igamma", a, x, name=name)


def igammac(a, x, name=None):
    """The upper regularized incomplete gamma function Q(a, x) = 1 - P(a, x), elementwise with
    broadcasting (TF's `tf.math.igammac`): nan for a <= 0 or x < 0."""
    return apply_op("Igammac", a, x, name=name)


def igamma_grad_a(a, x, name=None):
    """d P(a, x) / da (TF's `gen_math_ops.igamma_grad_a`, the op Igamma's gradient emits)."""
    return apply_op("IgammaGradA", a, x, name=name)


def random_gamma_grad(alpha, sample, name=None):
    """d sample / d alpha of a Gamma(alpha, 1) sample, by implicit differentiation of the CDF
    (TF's `gen_random_ops.random_gamma_grad`, the op RandomGamma's gradient emits)."""
    return apply_op("RandomGammaGrad", alpha, sample, name=name)


def betainc(a, b, x, name=None):
    """The regularized incomplete beta function I_x(a, b), elementwise (TF's
    `tf.math.betainc`): a, b and x have one shape, or some are scalars. 0 at x == 0, 1 at
    x == 1, nan for a <= 0, b <= 0 or x outside [0, 1].

    Raises:
        ValueError: at construction, when the non-scalar inputs' shapes differ.
    """
    return apply_op("Betainc", a, b, x, name=name)
