"""Second-order max-pooling ops: MaxPoolGradGrad and MaxPoolGradGradV2 (TF's nn_ops.cc).

`MaxPoolGradGrad(orig_input, orig_output, grad)` is the gradient of MaxPoolGrad with
respect to its `grad` input: for each pooling window it picks `grad` at the window's
(first) maximum of `orig_input`, so the result is shaped like `orig_output`. The V2 op takes
`ksize` and `strides` as int32 inputs instead of attrs.
"""

from __future__ import annotations

from tensorweave.ops.joining_ops import merge_dims
from tensorweave.ops.nn_geometry import (
    GeometryError,
    check_list_attr,
    spatial_axes,
    windowed_output_size,
)
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

_TYPES = "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, " \
         "uint64}"
_COMMON = ["padding: {'SAME', 'VALID'}", "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
           f"T: {_TYPES}"]


def _rank4(ctx, i: int):
    dims = ctx.input_dims(i)
    if dims is None:
        return (None,) * 4
    if len(dims) != 4:
        raise ctx.fail(f"Shape must be rank 4 but is rank {len(dims)}")
    return dims


def pool_output_dims(op: str, x, ksize, strides, padding: str, fmt: str) -> tuple:
    """The dims of a max pool's output for input dims `x` (ints or None) in `fmt`.

    Raises:
      GeometryError: bad ksize/strides lists, pooling over the batch or depth dims, or a
        window larger than the input.
    """
    check_list_attr(op, "ksize", ksize)
    check_list_attr(op, "strides", strides, "stride")
    h, w, c = spatial_axes(fmt)
    if ksize[0] != 1 or strides[0] != 1:
        raise GeometryError("Pooling is not yet supported on the batch dimension.")
    if ksize[c] != 1 or strides[c] != 1:
        raise GeometryError(f"{op} is not yet supported on the depth dimension.")

    def out(axis):
        if x[axis] is None:
            return None
        return windowed_output_size(x[axis], ksize[axis], strides[axis], 1, padding)[0]

    dims = list(x)
    dims[h], dims[w] = out(h), out(w)
    return tuple(dims)


def _grad_grad_shape(ctx, op: str, ksize, strides):
    x, y, g = _rank4(ctx, 0), _rank4(ctx, 1), _rank4(ctx, 2)
    merge_dims(ctx, x, g)
    if ksize is None or strides is None:
        return TensorShape(y)
    try:
        dims = pool_output_dims(op, x, ksize, strides, ctx.attr("padding"),
                                ctx.attr("data_format") or "NHWC")
    except GeometryError as e:
        raise ctx.fail(str(e)) from None
    return TensorShape(merge_dims(ctx, y, dims))


def _v1_shape(ctx):
    return _grad_grad_shape(ctx, "MaxPoolGradGrad", ctx.attr("ksize"), ctx.attr("strides"))


def _ints(value):
    return None if value is None else [int(i) for i in value.reshape(-1)]


def _v2_shape(ctx):
    return _grad_grad_shape(ctx, "MaxPoolGradGradV2", _ints(ctx.constant_value(3)),
                            _ints(ctx.constant_value(4)))


register_op("MaxPoolGradGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
            outputs=["output: T"],
            attrs=["ksize: list(int) >= 4", "strides: list(int) >= 4", *_COMMON],
            shape_fn=_v1_shape)
register_op("MaxPoolGradGradV2",
            inputs=["orig_input: T", "orig_output: T", "grad: T", "ksize: int32",
                    "strides: int32"],
            outputs=["output: T"], attrs=_COMMON, shape_fn=_v2_shape)

__all__: list = []
