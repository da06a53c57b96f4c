"""`tf.ragged`: RaggedTensor factories and values (ops/ragged_tensor.py,
ops/ragged_factory.py)."""

from tensorweave.ops.ragged_factory import (  # noqa: F401
    constant,
    constant_value,
    map_flat_values,
    placeholder,
)
from tensorweave.ops.ragged_tensor import RaggedTensorValue, is_ragged  # noqa: F401
