"""CRC-32C for checkpoints: raw, masked (as TF stores it) and over numpy buffers without copies.

`google_crc32c` only takes `bytes`, which would force a copy of every tensor. Its wheel ships
the C library it wraps (`libcrc32c`), so numpy buffers are checksummed by calling
`crc32c_extend` through ctypes on the array's memory (ctypes releases the GIL, so a checksum can
run beside file I/O). Where that library cannot be found, buffers go through `google_crc32c` in
bounded chunks (one chunk-sized copy at a time).
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import google_crc32c
import numpy as np

_MASK_DELTA = 0xA282EAD8
_CHUNK = 16 << 20


def mask(crc: int) -> int:
    """TF's masked CRC (crc32c::Mask): rotate right by 15 bits, add a constant."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    """Inverse of `mask`."""
    rot = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def extend(crc: int, data: bytes) -> int:
    """CRC-32C of `data` continuing from `crc` (0 to start)."""
    return google_crc32c.extend(crc, data if isinstance(data, bytes) else bytes(data))


def value(data: bytes) -> int:
    return extend(0, data)


def _native_extend():
    """`crc32c_extend(crc, ptr, n)` from the library bundled with google_crc32c, or None."""
    pkg = os.path.dirname(google_crc32c.__file__)
    patterns = [os.path.join(os.path.dirname(pkg), "google_crc32c.libs", "libcrc32c*"),
                os.path.join(pkg, ".dylibs", "libcrc32c*")]
    for path in sorted(p for pattern in patterns for p in glob.glob(pattern)):
        try:
            fn = ctypes.CDLL(path).crc32c_extend
        except (OSError, AttributeError):
            continue
        fn.argtypes = [ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t]
        fn.restype = ctypes.c_uint32
        if fn(0, ctypes.c_char_p(b"123456789"), 9) == 0xE3069283:  # the standard check value
            return fn
    return None


_NATIVE = _native_extend()


def extend_array(crc: int, flat: np.ndarray) -> int:
    """CRC-32C of the bytes of a C-contiguous array, continuing from `crc`; no copy."""
    if flat.nbytes == 0:
        return crc
    if not flat.flags.c_contiguous:
        raise ValueError("extend_array needs a C-contiguous array")
    if _NATIVE is not None:
        return _NATIVE(crc, flat.ctypes.data, flat.nbytes)
    raw = memoryview(flat.reshape(-1).view(np.uint8))
    for start in range(0, len(raw), _CHUNK):
        crc = google_crc32c.extend(crc, bytes(raw[start:start + _CHUNK]))
    return crc


def has_native() -> bool:
    """Whether arrays are checksummed in place (no chunk copies)."""
    return _NATIVE is not None


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            workers = max(2, min(8, os.cpu_count() or 2))
            _POOL = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tw-crc")
        return _POOL


def checksums(flats: list[np.ndarray]) -> list[int]:
    """CRC-32C of each C-contiguous array, computed in parallel when the native library can
    (it releases the GIL)."""
    if _NATIVE is None or len(flats) < 2:
        return [extend_array(0, f) for f in flats]
    return list(_pool().map(lambda f: extend_array(0, f), flats))


class ChecksumPipe:
    """The CRC-32C of a sequence of chunks, each computed on a helper thread while the caller
    does I/O on the next one (the native checksum releases the GIL, so they overlap, and the
    chunk is still in cache). Without the native library it checksums inline.

    Use: `add(chunk)` after reading a chunk (or before writing it), then `value()`. Not
    thread-safe: one pipe per buffer.
    """

    def __init__(self):
        self._crc = 0
        self._pending = None

    def _extend(self, chunk: np.ndarray) -> None:
        self._crc = extend_array(self._crc, chunk)

    def add(self, chunk: np.ndarray) -> None:
        self.wait()
        if _NATIVE is None:
            self._extend(chunk)
        else:
            self._pending = _pool().submit(self._extend, chunk)

    def wait(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()

    def value(self) -> int:
        self.wait()
        return self._crc


__all__ = ["mask", "unmask", "extend", "value", "extend_array", "has_native", "ChecksumPipe",
           "checksums"]
