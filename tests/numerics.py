"""Tolerances argued from the operation, for comparing two computations of one result.

A dot product of length k computed in floating point, in any order (any BLAS kernel, tile
size, blocking or thread count), is within gamma_k * (|a| . |b|) of the exact value, where
gamma_k = k*u / (1 - k*u) and u = eps/2 is the unit roundoff (Higham, "Accuracy and
Stability of Numerical Algorithms", 2nd ed., section 3.1). Two such computations therefore
differ by at most about k * eps * (|a| . |b|), elementwise. The bound is relative to the
product of magnitudes, not to the result: cancellation can make a result arbitrarily small
while both computations keep their absolute error. A GEMM is m*n such dot products of depth
k; a convolution is a GEMM of depth kh*kw*in_channels over the image patches. An error in a
kernel (a wrong tile, a missed edge, a stale buffer) moves results by O(|a| . |b|), far
beyond the bound, so the comparison still fails for real bugs.
"""

from __future__ import annotations

import numpy as np


def dot_bound(depth: int, magnitude, dtype) -> np.ndarray:
    """The elementwise bound on |x - y| for two computations of dot products of length
    `depth` whose |a| . |b| is `magnitude` (same shape as the result)."""
    eps = np.finfo(dtype).eps
    tiny = np.finfo(dtype).tiny  # NOTE: covers results that underflow to subnormals
    return depth * eps * np.asarray(magnitude, np.float64) + depth * tiny


def assert_dot_close(got, want, depth: int, magnitude) -> None:
    """Asserts |got - want| <= dot_bound(...) elementwise, naming the worst element."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    bound = dot_bound(depth, magnitude, got.dtype)
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    worst = np.unravel_index(np.argmax(err - bound), err.shape) if err.size else ()
    assert (err <= bound).all(), (
        f"{int((err > bound).sum())} of {err.size} elements beyond the depth-{depth} dot "
        f"bound; worst at {worst}: |{got[worst]} - {want[worst]}| = {err[worst]:.3g} > "
        f"{bound[worst]:.3g}")


def assert_gemm_close(got, a, b, want=None) -> None:
    """`got` against a @ b (numpy's, unless `want` is given) within the GEMM's dot bound."""
    a, b = np.asarray(a), np.asarray(b)
    want = np.matmul(a, b) if want is None else want
    magnitude = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    assert_dot_close(got, want, a.shape[-1], magnitude)
