"""Composite `tf.nn` functions built from other families' ops: zero_fraction (TF's
nn_impl.py). The embedding lookups live in embedding_ops.py, the sampled losses in
nn_sampled.py."""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.embedding_ops import embedding_lookup  # noqa: F401  (its old home)


def zero_fraction(value, name=None):
    """`tf.nn.zero_fraction`: the float32 fraction of zero entries of `value`."""
    with name_scope(name, "zero_fraction", [value]):
        value = convert_to_tensor(value, name="value")
        zero = convert_to_tensor(0, dtype=value.dtype.base_dtype, name="zero")
        is_zero = apply_op("Cast", apply_op("Equal", value, zero, name="Equal"),
                           DstT=dtypes.float32, name="Cast")
        flat = apply_op("Reshape", is_zero, [-1], name="Reshape")
        return apply_op("Mean", flat, [0], name="fraction")


__all__ = ["zero_fraction"]
