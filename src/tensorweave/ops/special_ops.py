"""Special functions Zeta and Polygamma (TF's core/ops/math_ops.cc), and MirrorPadGrad (TF's
core/ops/array_ops.cc: the op the MirrorPad gradient emits).

`tf.math.zeta(x, q)` is the Hurwitz zeta function sum_k (q + k)^-x; `tf.math.polygamma(a, x)`
the a-th derivative of digamma. Both broadcast, on float32 and float64. Kernels:
runtime/kernels/cpu/special.py; gradients: autodiff/special_grad.py.
"""

from __future__ import annotations

from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import broadcast_binary
from tensorweave.ops.joining_ops import with_rank
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

__all__ = ["polygamma", "zeta"]

register_op("Zeta", inputs=["x: T", "q: T"], outputs=["z: T"], attrs=["T: {float, double}"],
            shape_fn=broadcast_binary)
register_op("Polygamma", inputs=["a: T", "x: T"], outputs=["z: T"],
            attrs=["T: {float, double}"], shape_fn=broadcast_binary)


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
