"""Per-thread scratch buffers for the conv/pool fast paths, and batch chunking.

A scratch buffer is reused from one call to the next on the same thread, so it saves the
allocation (and the page faults of fresh memory) of a large temporary. Contract: a buffer
never escapes the kernel that took it — nothing returned to the runtime may be (a view of)
scratch — and a caller holds at most one buffer per key at a time. Buffers are per thread
(`threading.local`), so kernels running concurrently on several threads never share one; a
kernel never calls back into code that could take the same key while it holds a buffer.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

#: Bytes of patch matrix (or tap products) per GEMM: small enough to stay in L2 between
#: being written and being read by the matmul.
CHUNK_BYTES = 1 << 20

_MAX_ENTRIES = 16                  # per thread, least recently used dropped first
_MAX_TOTAL_BYTES = 96 << 20        # per thread, least recently used dropped first
_MAX_CACHED_BYTES = 32 << 20       # a larger buffer is allocated per call, not kept


class _Store(threading.local):
    def __init__(self):
        self.buffers: OrderedDict = OrderedDict()


_STORE = _Store()


def scratch(key: tuple, shape: tuple, dtype, fill=None) -> np.ndarray:
    """A buffer of `shape` and `dtype` owned by this thread under `key`.

    With `fill`, a new buffer starts filled with it and its contents are kept between calls
    (the caller rewrites only what it changes, e.g. the interior of a padded input); without,
    the contents are arbitrary.
    """
    dtype = np.dtype(dtype)
    full_key = (key, tuple(shape), dtype.str, fill)
    buffers = _STORE.buffers
    buf = buffers.get(full_key)
    if buf is not None:
        buffers.move_to_end(full_key)
        return buf
    buf = np.empty(shape, dtype) if fill is None else np.full(shape, fill, dtype)
    if buf.nbytes <= _MAX_CACHED_BYTES:
        buffers[full_key] = buf
        while len(buffers) > _MAX_ENTRIES or \
                sum(b.nbytes for b in buffers.values()) > _MAX_TOTAL_BYTES:
            buffers.popitem(last=False)
    return buf


def cached_bytes() -> int:
    """Bytes of scratch this thread keeps."""
    return sum(b.nbytes for b in _STORE.buffers.values())


def flat_scratch(key: str, size: int, dtype) -> np.ndarray:
    """A 1-D scratch of at least `size` elements (sliced and reshaped by the caller)."""
    return scratch((key,), (size,), dtype)[:size]


def chunks(n: int, bytes_per_item: int, budget: int = CHUNK_BYTES) -> list[tuple[int, int]]:
    """[(start, stop), ...] splitting range(n) into near-equal runs of about `budget` bytes
    (at least one item each); [] when n is 0."""
    if n <= 0:
        return []
    per = max(1, min(n, budget // max(bytes_per_item, 1)))
    count = -(-n // per)
    per = -(-n // count)
    return [(i, min(n, i + per)) for i in range(0, n, per)]
