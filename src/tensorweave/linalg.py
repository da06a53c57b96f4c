"""`tf.linalg`."""

from tensorweave.ops.math_matmul_ops import matmul, tensordot, trace  # noqa: F401
from tensorweave.ops.diag_ops import (  # noqa: F401
    diag as tensor_diag, diag_part as tensor_diag_part, matrix_band_part as band_part,
    matrix_diag as diag, matrix_diag_part as diag_part,
)
from tensorweave.ops.linalg_ops import (  # noqa: F401
    cholesky, cholesky_solve, log_matrix_determinant as slogdet, logdet,
    matrix_determinant as det, matrix_inverse as inv, matrix_solve as solve,
    matrix_triangular_solve as triangular_solve, qr, self_adjoint_eig as eigh,
    self_adjoint_eigvals as eigvalsh, svd,
)
