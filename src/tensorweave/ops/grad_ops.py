"""The helper ops gradient graphs use (TF's math_ops.cc / array_ops.cc declare them):
SigmoidGrad, TanhGrad, SqrtGrad, RsqrtGrad, ReciprocalGrad, InvGrad, BroadcastGradientArgs
and StridedSliceGrad. Their CPU kernels are in runtime/kernels/cpu/grad_ops.py.
"""

from __future__ import annotations

from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
UNARY_GRAD_OPS = ("SigmoidGrad", "TanhGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad",
                  "InvGrad")


def _merge_both(ctx):
    try:
        return ctx.input_shape(0).merge_with(ctx.input_shape(1))
    except ValueError:
        raise ctx.fail(f"Shapes must be equal, but are {ctx.input_shape(0)} and "
                       f"{ctx.input_shape(1)}") from None


def _vector_shapes(ctx):
    return [TensorShape([None]), TensorShape([None])]


def broadcast_gradient_args(s0, s1) -> tuple[list, list]:
    """TF's BCast reduction indices for shapes `s0`, `s1` (lists of ints).

    Raises:
      ValueError: the shapes do not broadcast.
    """
    s0, s1 = [int(d) for d in s0], [int(d) for d in s1]
    if s0 == s1:
        return [], []
    rank = max(len(s0), len(s1))
    a = [1] * (rank - len(s0)) + s0
    b = [1] * (rank - len(s1)) + s1
    r0, r1 = [], []
    for i, (p, q) in enumerate(zip(a, b)):
        if p != q and p != 1 and q != 1:
            raise ValueError(f"Incompatible shapes: [{','.join(map(str, s0))}] vs. "
                             f"[{','.join(map(str, s1))}]")
        if p == 1:
            r0.append(i)
        if q == 1:
            r1.append(i)
    return r0, r1


for _name in UNARY_GRAD_OPS:
    register_op(_name, inputs=["y: T", "dy: T"], outputs=["z: T"],
                attrs=["T: {bfloat16, half, float, double, complex64, complex128}"],
                shape_fn=_merge_both)

register_op("BroadcastGradientArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T", "r1: T"],
            attrs=["T: {int32, int64} = DT_INT32"], shape_fn=_vector_shapes)

register_op("StridedSliceGrad",
            inputs=["shape: Index", "begin: Index", "end: Index", "strides: Index", "dy: T"],
            outputs=["output: T"],
            attrs=["T: type", "Index: {int32, int64}"] + [f"{m}: int = 0" for m in MASKS],
            shape_fn=lambda ctx: ctx.shape_from_tensor(0))


__all__ = ["MASKS", "UNARY_GRAD_OPS", "broadcast_gradient_args"]
