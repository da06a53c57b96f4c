"""Row scatters shared by the scatter, segment-sum and sparse-update kernels.

`add_rows(out, indices, updates)` is `out[indices[i]] += updates[i]` for i in order (or `-=`):
the sequential loop of TF's CPU ScatterFunctor and UnsortedSegmentSum, so duplicate indices
add one after another and the bits are TF's (and numpy's `ufunc.at`'s). float32 and float64
take the compiled loop (native/scatter.c: one pass over the touched rows, ~10x faster than
`ufunc.at` on embedding-sized rows); other dtypes take `ufunc.at`.
"""

from __future__ import annotations

import numpy as np

from tensorweave.runtime.kernels.cpu import native

_WIDE = {np.dtype(np.float32): False, np.dtype(np.float64): True}


def add_rows(out: np.ndarray, indices, updates, subtract: bool = False) -> None:
    """out[indices[i], ...] += updates[i, ...] (-= when `subtract`) in index order, in place.

    `indices` any integer array (its flattened order is the order of the adds), each in
    [0, out.shape[0]) (callers check, with their op's message); `updates` of shape
    indices.shape + out.shape[1:] (or broadcastable to it) and out's dtype.
    """
    idx = np.asarray(indices).reshape(-1)
    want = idx.shape + out.shape[1:]
    updates = np.asarray(updates)
    if updates.shape != want:
        updates = np.broadcast_to(updates, want)
    wide = _WIDE.get(out.dtype)
    if wide is None or not native.enabled() or not out.flags.c_contiguous or out.ndim == 0:
        ufunc = np.subtract if subtract else np.add
        ufunc.at(out, idx, updates)
        return
    if idx.dtype != np.int64:
        idx = idx.astype(np.int64)
    if updates.dtype != out.dtype or not updates.flags.c_contiguous:
        updates = np.ascontiguousarray(updates, out.dtype)
    cols = out.size // out.shape[0] if out.shape[0] else 0
    native.scatter_rows(out, np.ascontiguousarray(idx), updates, out.shape[0], cols, subtract,
                        wide)
