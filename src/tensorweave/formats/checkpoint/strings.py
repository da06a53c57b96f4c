"""String tensors in a checkpoint's data file (TF's tensor_bundle WriteStringTensor layout).

    varint64 length of every element
    uint32   masked CRC-32C of the lengths, each taken as little-endian uint32
             (uint64 for an element over 4 GiB)
    bytes    all elements, back to back

The returned checksum (unmasked; the entry stores it masked) covers the fixed-width lengths,
the 4 checksum bytes and the element bytes, as TF computes it.
"""

from __future__ import annotations

import struct

import numpy as np

from tensorweave.formats.checkpoint import crc as crc32c
from tensorweave.formats.checkpoint.table import decode_varint, encode_varint

_U32_MAX = 0xFFFFFFFF


def _as_bytes(item) -> bytes:
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode("utf-8")
    if isinstance(item, (bytearray, memoryview, np.bytes_)):
        return bytes(item)
    raise TypeError(f"string tensor elements must be bytes or str, got {type(item).__name__}")


def _fixed_lengths(sizes: list[int]) -> bytes:
    """The lengths as TF checksums them: uint32 each, uint64 above 4 GiB."""
    if all(s <= _U32_MAX for s in sizes):
        return struct.pack(f"<{len(sizes)}I", *sizes)
    return b"".join(struct.pack("<I" if s <= _U32_MAX else "<Q", s) for s in sizes)


def encode(flat: np.ndarray) -> tuple[bytes, int]:
    """(stored bytes, unmasked entry checksum) of a 1-D array of bytes/str."""
    items = [_as_bytes(x) for x in flat.tolist()]
    sizes = [len(x) for x in items]
    crc = crc32c.value(_fixed_lengths(sizes))
    length_check = struct.pack("<I", crc32c.mask(crc))
    body = b"".join(items)
    crc = crc32c.extend(crc32c.extend(crc, length_check), body)
    return b"".join(encode_varint(s) for s in sizes) + length_check + body, crc


def decode(data: bytes, n: int) -> tuple[np.ndarray, int]:
    """(1-D object array of `n` bytes elements, unmasked entry checksum) of stored bytes.

    Raises:
      ValueError: truncated data, a bad length varint, or a length checksum mismatch.
    """
    sizes, pos = [], 0
    for _ in range(n):
        size, pos = decode_varint(data, pos)
        sizes.append(size)
    if pos + 4 > len(data):
        raise ValueError("truncated before the length checksum")
    fixed = _fixed_lengths(sizes)
    crc = crc32c.value(fixed)
    (stored,) = struct.unpack("<I", data[pos:pos + 4])
    if crc32c.unmask(stored) != crc:
        raise ValueError("the checksum of the string lengths does not match")
    body = pos + 4
    if body + sum(sizes) != len(data):
        raise ValueError(f"lengths add up to {sum(sizes)} bytes but {len(data) - body} are "
                         "stored")
    out = np.empty(n, dtype=object)
    for i, size in enumerate(sizes):
        out[i] = data[body:body + size]
        body += size
    crc = crc32c.extend(crc32c.extend(crc, data[pos:pos + 4]), data[pos + 4:])
    return out, crc


__all__ = ["encode", "decode"]
