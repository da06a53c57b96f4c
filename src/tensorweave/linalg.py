"""`tf.linalg`."""

from tensorweave.ops.math_matmul_ops import matmul, tensordot, trace  # noqa: F401
from tensorweave.ops.diag_ops import (  # noqa: F401
    diag as tensor_diag, diag_part as tensor_diag_part, matrix_band_part as band_part,
    matrix_diag as diag, matrix_diag_part as diag_part,
)
