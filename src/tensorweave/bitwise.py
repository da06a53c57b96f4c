"""`tf.bitwise`."""

from tensorweave.ops.math_extra_ops import (  # noqa: F401
    bitwise_and, bitwise_or, bitwise_xor, invert, left_shift, population_count, right_shift,
)
