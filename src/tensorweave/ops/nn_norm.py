"""Normalization: the FusedBatchNorm op family (V1-V3 and their gradients) with
`tf.nn.fused_batch_norm`, and the composites `moments`, `batch_normalization`,
`l2_normalize`.

FusedBatchNorm in training normalizes with the biased batch variance but outputs the
UNBIASED one as `batch_variance` (n / (n - 1) correction), blended with the running value
when `exponential_avg_factor` != 1, exactly as TensorFlow's CPU kernel.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.op_scope import OpScope
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

_FORMATS_2D = "data_format: {'NHWC', 'NCHW'} = 'NHWC'"
_FORMATS_3D = "data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'"


def _layout(ctx) -> tuple[int, int]:
    """(rank, channel axis) of x for the op's data_format."""
    fmt = ctx.attr("data_format") or "NHWC"
    rank = 5 if fmt in ("NDHWC", "NCDHW") else 4
    return rank, 1 if fmt.startswith("NC") else rank - 1


def _rank(ctx, i: int, rank: int):
    dims = ctx.input_dims(i)
    if dims is None:
        return (None,) * rank
    if len(dims) != rank:
        raise ctx.fail(f"Shape must be rank {rank} but is rank {len(dims)}")
    return dims


def _merge_channels(ctx, channel, inputs) -> int | None:
    for i in inputs:
        d = _rank(ctx, i, 1)[0]
        if channel is not None and d is not None and channel != d:
            raise ctx.fail(f"Dimensions must be equal, but are {channel} and {d}")
        channel = channel if channel is not None else d
    return channel


def _fused_bn_v3_shape(ctx):
    return [*_fused_bn_shape(ctx), TensorShape(None)]


def _fused_bn_shape(ctx):
    rank, c = _layout(ctx)
    x = list(_rank(ctx, 0, rank))
    factor = ctx.attr("exponential_avg_factor")
    training = ctx.attr("is_training") and (factor is None or factor == 1.0)
    x[c] = _merge_channels(ctx, x[c], range(1, 3 if training else 5))
    vec = TensorShape([x[c]])
    return [TensorShape(x), vec, vec, vec, vec]


def _fused_bn_grad_shape(ctx):
    """y_backprop and x of equal channels; scale and reserve spaces 1, 2 vectors of them."""
    rank, c = _layout(ctx)
    dy = list(_rank(ctx, 0, rank))
    x = _rank(ctx, 1, rank)
    if dy[c] is not None and x[c] is not None and dy[c] != x[c]:
        raise ctx.fail(f"Dimensions must be equal, but are {dy[c]} and {x[c]}")
    dy[c] = _merge_channels(ctx, dy[c] if dy[c] is not None else x[c], range(2, 5))
    vec = TensorShape([dy[c]])
    return [TensorShape(dy), vec, vec, TensorShape([0]), TensorShape([0])]


_BN = ["epsilon: float = 0.0001", "exponential_avg_factor: float = 1.0"]
_BN_INPUTS = ["x: T", "scale: U", "offset: U", "mean: U", "variance: U"]
_BN_OUTPUTS = ["y: T", "batch_mean: U", "batch_variance: U", "reserve_space_1: U",
               "reserve_space_2: U"]
register_op("FusedBatchNorm", inputs=[s.replace(": U", ": T") for s in _BN_INPUTS],
            outputs=[s.replace(": U", ": T") for s in _BN_OUTPUTS],
            attrs=["T: {float}", *_BN, _FORMATS_2D, "is_training: bool = true"],
            shape_fn=_fused_bn_shape)
register_op("FusedBatchNormV2", inputs=_BN_INPUTS, outputs=_BN_OUTPUTS,
            attrs=["T: {half, bfloat16, float}", "U: {float}", *_BN, _FORMATS_2D,
                   "is_training: bool = true"],
            shape_fn=_fused_bn_shape)
register_op("FusedBatchNormV3", inputs=_BN_INPUTS, outputs=[*_BN_OUTPUTS, "reserve_space_3: U"],
            attrs=["T: {half, bfloat16, float}", "U: {bfloat16, float}", *_BN, _FORMATS_3D,
                   "is_training: bool = true"],
            shape_fn=_fused_bn_v3_shape)

_GRAD_OUT = ["x_backprop: T", "scale_backprop: U", "offset_backprop: U"]
register_op("FusedBatchNormGrad",
            inputs=["y_backprop: T", "x: T", "scale: T", "reserve_space_1: T",
                    "reserve_space_2: T"],
            outputs=["x_backprop: T", "scale_backprop: T", "offset_backprop: T",
                     "reserve_space_3: T", "reserve_space_4: T"],
            attrs=["T: {float}", "epsilon: float = 0.0001", _FORMATS_2D,
                   "is_training: bool = true"],
            shape_fn=_fused_bn_grad_shape)
register_op("FusedBatchNormGradV2",
            inputs=["y_backprop: T", "x: T", "scale: float", "reserve_space_1: U",
                    "reserve_space_2: U"],
            outputs=[*_GRAD_OUT, "reserve_space_3: U", "reserve_space_4: U"],
            attrs=["T: {half, bfloat16, float}", "U: {float}", "epsilon: float = 0.0001",
                   _FORMATS_2D, "is_training: bool = true"],
            shape_fn=_fused_bn_grad_shape)
register_op("FusedBatchNormGradV3",
            inputs=["y_backprop: T", "x: T", "scale: float", "reserve_space_1: U",
                    "reserve_space_2: U", "reserve_space_3: U"],
            outputs=[*_GRAD_OUT, "reserve_space_4: U", "reserve_space_5: U"],
            attrs=["T: {half, bfloat16, float}", "U: {float}", "epsilon: float = 0.0001",
                   _FORMATS_3D, "is_training: bool = true"],
            shape_fn=_fused_bn_grad_shape)


# -- Python API ---------------------------------------------------------------------------------
def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None,
                     exponential_avg_factor=1.0):
    """TF1 `tf.nn.fused_batch_norm`: (y, batch_mean, batch_variance) from a
    FusedBatchNormV3 op. In training the returned variance is the unbiased batch variance
    (blended with `variance` when `exponential_avg_factor` != 1).

    Raises:
      ValueError: mean/variance missing where inference or a running average needs them.
    """
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or variance is None):
        raise ValueError(f"Both `mean` and `variance` must be a 1D tensor when `is_training` "
                         f"is False or `exponential_avg_factor` != 1.0. Received: `mean` "
                         f"{mean!r} and `variance` {variance!r}")
    from tensorweave.ops.constant_op import constant

    x = convert_to_tensor(x, name="input")
    scale = convert_to_tensor(scale, name="scale")
    offset = convert_to_tensor(offset, name="offset")
    mean = constant([]) if mean is None else mean
    variance = constant([]) if variance is None else variance
    y, batch_mean, batch_var, _, _, _ = apply_op(
        "FusedBatchNormV3", x, scale, offset, mean, variance, epsilon=epsilon,
        exponential_avg_factor=exponential_avg_factor, data_format=data_format,
        is_training=is_training, name=name)
    return y, batch_mean, batch_var


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """TF1 `tf.nn.moments`: (mean, variance) over `axes`, as Mean and
    Mean(SquaredDifference(x, StopGradient(mean))) under the scope "moments"; float16 is
    computed in float32."""
    keep = keepdims if keepdims is not None else bool(keep_dims)
    with name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x)
        half = x.dtype.base_dtype == dtypes.float16
        y = apply_op("Cast", x, DstT=dtypes.float32, name="Cast") if half else x
        mean = apply_op("Mean", y, axes, keep_dims=True, name="mean")
        diff = apply_op("SquaredDifference", y, apply_op("StopGradient", mean, name="StopGradient"),
                        name="SquaredDifference")
        variance = apply_op("Mean", diff, axes, keep_dims=True, name="variance")
        if not keep:
            dims = list(axes) if isinstance(axes, (list, tuple)) else [axes]
            mean = apply_op("Squeeze", mean, squeeze_dims=dims, name="Squeeze")
            variance = apply_op("Squeeze", variance, squeeze_dims=dims, name="Squeeze")
        if half:
            return tuple(apply_op("Cast", t, DstT=dtypes.float16, name="Cast")
                         for t in (mean, variance))
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """`tf.nn.batch_normalization`: scale * (x - mean) / sqrt(variance + eps) + offset, as
    TF's formula x * inv + (offset - mean * inv) with inv = rsqrt(variance + eps) * scale."""
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x)
        variance = convert_to_tensor(variance)
        inv = apply_op("Rsqrt", variance + variance_epsilon, name="Rsqrt")
        if scale is not None:
            inv = inv * scale
        shift = offset - mean * inv if offset is not None else -mean * inv
        return x * _cast_like(inv, x) + _cast_like(shift, x)


def _cast_like(t, like):
    t = convert_to_tensor(t)
    if t.dtype.base_dtype == like.dtype.base_dtype:
        return t
    return apply_op("Cast", t, DstT=like.dtype.base_dtype, name="Cast")


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """TF1 `tf.nn.l2_normalize`: x / sqrt(max(sum(x ** 2, axis), epsilon)); the final Mul is
    named "l2_normalize".

    Raises:
      ValueError: `axis` None (all axes) on an input of unknown rank.
    """
    axis = dim if axis is None else axis
    with OpScope(name, "l2_normalize", [x]) as s:
        x = convert_to_tensor(x, name="x")
        if axis is None:
            if x.shape.ndims is None:
                raise ValueError("l2_normalize over all axes needs an input of known rank")
            axis = list(range(x.shape.ndims))
        square_sum = apply_op("Sum", apply_op("Square", x, name="Square"), axis,
                              keep_dims=True, name="Sum")
        eps = convert_to_tensor(epsilon, dtype=x.dtype.base_dtype, name="Maximum/y")
        inv_norm = apply_op("Rsqrt", apply_op("Maximum", square_sum, eps, name="Maximum"),
                            name="Rsqrt")
        return s.apply("Mul", x, inv_norm)


__all__ = ["fused_batch_norm", "moments", "batch_normalization", "l2_normalize"]
