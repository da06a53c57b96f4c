"""Fused ops the remapper pass creates (TF's `_FusedMatMul`/`_FusedConv2D` names and attrs),
`_TwFusedElementwise`, a chain of elementwise unary ops run in one kernel, and
`_TwFusedMaxPoolGradReluGrad`, ReluGrad(MaxPoolGrad(x, y, g), x): the gradient through
MaxPool(Relu(...)) in one pass."""

from tensorweave.ops.common_shapes import unchanged
from tensorweave.ops.registry import OPS, register_op


def _like(op_type: str):
    """The shape function of the op this one fuses (looked up when first used)."""
    return lambda ctx: OPS.lookup(op_type).shape_fn(ctx)


_FUSED_ATTRS = ["num_args: int >= 0", "fused_ops: list(string) = []",
                "epsilon: float = 0.0001", "leakyrelu_alpha: float = 0.2"]

register_op("_FusedMatMul", inputs=["a: T", "b: T", "args: num_args * T"],
            outputs=["product: T"],
            attrs=["transpose_a: bool = false", "transpose_b: bool = false",
                   "T: {half, bfloat16, float, double}"] + _FUSED_ATTRS,
            shape_fn=_like("MatMul"))
register_op("_FusedConv2D", inputs=["input: T", "filter: T", "args: num_args * T"],
            outputs=["output: T"],
            attrs=["T: {half, float, double}", "strides: list(int)",
                   "padding: {'SAME', 'VALID', 'EXPLICIT'}", "explicit_paddings: list(int) = []",
                   "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
                   "dilations: list(int) = [1, 1, 1, 1]", "use_cudnn_on_gpu: bool = true"]
            + _FUSED_ATTRS, shape_fn=_like("Conv2D"))
register_op("_TwFusedElementwise", inputs=["x: T"], outputs=["y: T"],
            attrs=["T: {half, float, double}", "ops: list(string)"], shape_fn=unchanged)
register_op("_TwFusedMaxPoolGradReluGrad",
            inputs=["orig_input: T", "orig_output: T", "grad: T"], outputs=["output: T"],
            attrs=["ksize: list(int) >= 4", "strides: list(int) >= 4",
                   "padding: {'SAME', 'VALID', 'EXPLICIT'}", "explicit_paddings: list(int) = []",
                   "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "T: {half, float, double}"],
            shape_fn=_like("MaxPoolGrad"))
