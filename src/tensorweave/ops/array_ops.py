"""Array ops: placeholders, identity, shapes, reshaping, slicing, gathering, ..."""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import unchanged
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape


def _placeholder_shape(ctx):
    return ctx.attr("shape")


register_op("Placeholder", outputs=["output: dtype"],
            attrs=["dtype: type", "shape: shape = { unknown_rank: true }"],
            shape_fn=_placeholder_shape)
register_op("PlaceholderWithDefault", inputs=["input: dtype"], outputs=["output: dtype"],
            attrs=["dtype: type", "shape: shape"], shape_fn=_placeholder_shape)
register_op("Identity", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"],
            shape_fn=unchanged)


def placeholder(dtype, shape=None, name=None):
    """TF1 `tf.placeholder`: a value that must be fed."""
    return apply_op("Placeholder", dtype=dtypes.as_dtype(dtype), shape=TensorShape(shape),
                    name=name)


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TF's argument name
    """A tensor that is `input` unless fed."""
    from tensorweave.framework.tensor_conversion import convert_to_tensor

    value = convert_to_tensor(input)
    return apply_op("PlaceholderWithDefault", value, dtype=value.dtype, shape=TensorShape(shape),
                    name=name)


def identity(input, name=None):  # noqa: A002
    return apply_op("Identity", input, name=name)
