"""CPU kernels for Diag, DiagPart, MatrixDiag, MatrixDiagPart, MatrixBandPart."""

from __future__ import annotations

import numpy as np

from tensorweave.runtime.kernels.cpu.array import fmt_shape, invalid
from tensorweave.runtime.kernels.registry import register_kernel, register_simple_kernel


def _diag(x):
    x = np.asarray(x)
    if x.ndim < 1:
        raise invalid(f"Input must be at least rank 1, got {x.ndim}")
    n = x.size
    out = np.zeros((n, n), dtype=x.dtype)
    out[np.arange(n), np.arange(n)] = x.reshape(-1)
    return out.reshape(x.shape + x.shape)


def _diag_part(x):
    x = np.asarray(x)
    half = x.ndim // 2
    if x.ndim % 2 or not x.ndim or x.shape[:half] != x.shape[half:]:
        raise invalid(f"Invalid shape {fmt_shape(x.shape)}: dimensions must be of rank 2k "
                      f"with matching halves")
    n = int(np.prod(x.shape[:half], dtype=np.int64))
    return np.ascontiguousarray(x.reshape(n, n).diagonal()).reshape(x.shape[:half])


def _matrix_diag(x):
    x = np.asarray(x)
    if x.ndim < 1:
        raise invalid(f"input must be at least 1-dim, received shape: {fmt_shape(x.shape)}")
    n = x.shape[-1]
    out = np.zeros(x.shape + (n,), dtype=x.dtype)
    i = np.arange(n)
    out[..., i, i] = x
    return out


def _matrix_diag_part(x):
    x = np.asarray(x)
    if x.ndim < 2:
        raise invalid(f"input must be at least 2-dim, received shape: {fmt_shape(x.shape)}")
    return np.ascontiguousarray(np.diagonal(x, axis1=-2, axis2=-1))


register_simple_kernel("Diag", _diag)
register_simple_kernel("DiagPart", _diag_part)
register_simple_kernel("MatrixDiag", _matrix_diag)
register_simple_kernel("MatrixDiagPart", _matrix_diag_part)


@register_kernel("MatrixBandPart")
def _matrix_band_part(node):
    def run(x, num_lower, num_upper):
        x = np.asarray(x)
        if x.ndim < 2:
            raise invalid(f"input must be at least 2-dim, received shape: "
                          f"{fmt_shape(x.shape)}")
        m, n = x.shape[-2:]
        lower, upper = int(num_lower), int(num_upper)
        if lower > m:
            raise invalid(f"num_lower must be negative or less or equal to number of rows "
                          f"({m}) got: {lower}")
        if upper > n:
            raise invalid(f"num_upper must be negative or less or equal to number of columns "
                          f"({n}) got: {upper}")
        rows, cols = np.arange(m)[:, None], np.arange(n)[None, :]
        band = ((lower < 0) | (rows - cols <= lower)) & ((upper < 0) | (cols - rows <= upper))
        zero = b"" if x.dtype == object else 0
        return np.where(band, x, np.asarray(zero, dtype=x.dtype))

    return run
