"""The sorted string table of a V2 checkpoint's `.index` file (TF's `core/lib/io/table`).

Layout (LevelDB's table format without filter blocks)::

    data block*  metaindex block  index block  footer (48 bytes)

A block holds entries `varint32 shared, varint32 non_shared, varint32 value_len,
key[shared:], value` (keys prefix-compressed against the previous key, restarting every 16
entries), then the restart offsets (uint32 each) and their count (uint32); on disk it is
followed by a 5-byte trailer: the compression type (0: none, 1: snappy) and the masked
CRC-32C of the block and that type byte. The index block maps a separator key (>= the last
key of a data block, < the first key of the next) to that block's handle (varint64 offset,
varint64 size). The footer holds the metaindex and index handles, zero padding to 40 bytes
and the fixed64 magic number 0xdb4775248b80fb57.

The writer reproduces TF's TableBuilder byte for byte (256 KiB blocks, restart interval 16,
index restart interval 1, TF's shortest-separator / short-successor keys, no compression, as
BundleWriter sets). The reader rejects compressed blocks (TF never writes them for bundles)
and reports every inconsistency as DataLossError naming the file.
"""

from __future__ import annotations

import struct

from tensorweave import errors
from tensorweave.formats.checkpoint import crc as crc32c

MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
_HANDLE_PAD = 40  # two BlockHandles at their maximum encoded length (2 * 20 bytes)
TRAILER_SIZE = 5
BLOCK_SIZE = 256 * 1024
RESTART_INTERVAL = 16
NO_COMPRESSION = 0
SNAPPY_COMPRESSION = 1


# -- varints ---------------------------------------------------------------------------------
def encode_varint(n: int) -> bytes:
    """Little-endian base-128 encoding of a non-negative int (TF's PutVarint64)."""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def decode_varint(buf, pos: int, limit: int | None = None) -> tuple[int, int]:
    """(value, position after it). Raises ValueError when truncated or longer than 10 bytes."""
    limit = len(buf) if limit is None else limit
    result = shift = 0
    while pos < limit and shift <= 63:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
    raise ValueError("bad varint")


# -- writing ---------------------------------------------------------------------------------
class _BlockBuilder:
    """One block's entries, prefix-compressed, with restart points."""

    def __init__(self, restart_interval: int):
        self._interval = restart_interval
        self.reset()

    def reset(self) -> None:
        self._buf = bytearray()
        self._restarts = [0]
        self._counter = 0
        self._last_key = b""

    @property
    def empty(self) -> bool:
        return not self._buf

    def size_estimate(self) -> int:
        return len(self._buf) + 4 * len(self._restarts) + 4

    def add(self, key: bytes, value: bytes) -> None:
        shared = 0
        if self._counter < self._interval:
            last = self._last_key
            n = min(len(last), len(key))
            while shared < n and last[shared] == key[shared]:
                shared += 1
        else:
            self._restarts.append(len(self._buf))
            self._counter = 0
        self._buf += encode_varint(shared) + encode_varint(len(key) - shared)
        self._buf += encode_varint(len(value)) + key[shared:] + value
        self._last_key = key
        self._counter += 1

    def finish(self) -> bytes:
        restarts = struct.pack(f"<{len(self._restarts)}I", *self._restarts)
        return bytes(self._buf) + restarts + struct.pack("<I", len(self._restarts))


def _shortest_separator(start: bytes, limit: bytes) -> bytes:
    """A short key k with start <= k < limit (TF's FindShortestSeparator)."""
    n = min(len(start), len(limit))
    i = 0
    while i < n and start[i] == limit[i]:
        i += 1
    if i >= n:
        return start
    b = start[i]
    if b < 0xFF and b + 1 < limit[i]:
        return start[:i] + bytes([b + 1])
    return start


def _short_successor(key: bytes) -> bytes:
    """A short key >= `key` (TF's FindShortSuccessor)."""
    for i, b in enumerate(key):
        if b != 0xFF:
            return key[:i] + bytes([b + 1])
    return key


def _encode_handle(offset: int, size: int) -> bytes:
    return encode_varint(offset) + encode_varint(size)


class TableBuilder:
    """Writes a table to a binary file object; keys must be added in strictly increasing order.

    Not thread-safe. `finish()` writes the footer; the caller closes the file.
    """

    def __init__(self, f, block_size: int = BLOCK_SIZE):
        self._f = f
        self._block_size = block_size
        self._offset = 0
        self._data = _BlockBuilder(RESTART_INTERVAL)
        self._index = _BlockBuilder(1)
        self._last_key = None
        self._pending_handle: bytes | None = None

    def add(self, key: bytes, value: bytes) -> None:
        """Raises ValueError when `key` is not greater than the previous key."""
        if self._last_key is not None and key <= self._last_key:
            raise ValueError(f"table keys must increase: {key!r} after {self._last_key!r}")
        if self._pending_handle is not None:
            self._index.add(_shortest_separator(self._last_key, key), self._pending_handle)
            self._pending_handle = None
        self._data.add(key, value)
        self._last_key = key
        if self._data.size_estimate() >= self._block_size:
            self._flush()

    def _flush(self) -> None:
        if not self._data.empty:
            self._pending_handle = self._write_block(self._data)

    def _write_block(self, block: _BlockBuilder) -> bytes:
        contents = block.finish()
        block.reset()
        kind = bytes([NO_COMPRESSION])
        check = crc32c.mask(crc32c.extend(crc32c.value(contents), kind))
        handle = _encode_handle(self._offset, len(contents))
        self._f.write(contents + kind + struct.pack("<I", check))
        self._offset += len(contents) + TRAILER_SIZE
        return handle

    def finish(self) -> int:
        """Writes the remaining blocks and the footer; returns the file size."""
        self._flush()
        metaindex = self._write_block(_BlockBuilder(RESTART_INTERVAL))
        if self._pending_handle is not None:
            self._index.add(_short_successor(self._last_key), self._pending_handle)
            self._pending_handle = None
        index = self._write_block(self._index)
        footer = (metaindex + index).ljust(_HANDLE_PAD, b"\0") + struct.pack("<Q", MAGIC)
        self._f.write(footer)
        self._offset += len(footer)
        return self._offset


# -- reading ---------------------------------------------------------------------------------
def _data_loss(filename: str, what: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, f"Unable to read checkpoint index {filename}: {what}")


def _decode_handle(buf, pos: int, filename: str) -> tuple[tuple[int, int], int]:
    try:
        offset, pos = decode_varint(buf, pos)
        size, pos = decode_varint(buf, pos)
    except ValueError:
        raise _data_loss(filename, "bad block handle") from None
    return (offset, size), pos


def _read_footer(data: bytes, filename: str) -> tuple[tuple[int, int], tuple[int, int]]:
    if len(data) < FOOTER_SIZE:
        raise _data_loss(filename, f"file is too short ({len(data)} bytes) to be an sstable "
                                   "(truncated?)")
    footer = data[-FOOTER_SIZE:]
    (magic,) = struct.unpack("<Q", footer[_HANDLE_PAD:])
    if magic != MAGIC:
        raise _data_loss(filename, "not an sstable (bad magic number); truncated or not a "
                                   "checkpoint index")
    metaindex, pos = _decode_handle(footer, 0, filename)
    index, _ = _decode_handle(footer, pos, filename)
    return metaindex, index


def _read_block(data: bytes, handle: tuple[int, int], filename: str) -> bytes:
    offset, size = handle
    end = offset + size
    if end + TRAILER_SIZE > len(data) - FOOTER_SIZE:
        raise _data_loss(filename, f"block [{offset}, {end}) lies past the end of the table "
                                   "(truncated?)")
    contents = data[offset:end]
    kind = data[end:end + 1]
    (stored,) = struct.unpack("<I", data[end + 1:end + TRAILER_SIZE])
    if crc32c.unmask(stored) != crc32c.extend(crc32c.value(contents), kind):
        raise _data_loss(filename, f"block checksum mismatch in block at offset {offset} "
                                   "(the file is corrupt)")
    if kind[0] == SNAPPY_COMPRESSION:
        raise errors.UnimplementedError(
            None, None, f"Checkpoint index {filename} has a snappy-compressed block; tensorweave "
                        "reads only uncompressed tables (TensorFlow's BundleWriter never "
                        "compresses them)")
    if kind[0] != NO_COMPRESSION:
        raise _data_loss(filename, f"bad block type {kind[0]} at offset {offset}")
    return contents


def _block_entries(block: bytes, filename: str):
    """Yields (key, value) of one block, in order."""
    if len(block) < 4:
        raise _data_loss(filename, "bad block contents")
    (num_restarts,) = struct.unpack("<I", block[-4:])
    limit = len(block) - 4 * (num_restarts + 1)
    if num_restarts == 0 and limit > 0 or limit < 0:
        raise _data_loss(filename, "bad block contents (restart array)")
    pos, key = 0, b""
    while pos < limit:
        try:
            shared, pos = decode_varint(block, pos, limit)
            non_shared, pos = decode_varint(block, pos, limit)
            size, pos = decode_varint(block, pos, limit)
        except ValueError:
            raise _data_loss(filename, "bad entry in block") from None
        if shared > len(key) or pos + non_shared + size > limit:
            raise _data_loss(filename, "bad entry in block")
        key = key[:shared] + block[pos:pos + non_shared]
        pos += non_shared
        yield key, block[pos:pos + size]
        pos += size


def read_table(data: bytes, filename: str) -> list[tuple[bytes, bytes]]:
    """All (key, value) pairs of a table held in memory, in key order.

    Raises:
      DataLossError: the table is truncated or corrupt (checksums, handles, entry encoding).
      UnimplementedError: a block is compressed.
    """
    _, index_handle = _read_footer(data, filename)
    out: list[tuple[bytes, bytes]] = []
    for _, handle_bytes in _block_entries(_read_block(data, index_handle, filename), filename):
        handle, _ = _decode_handle(handle_bytes, 0, filename)
        out.extend(_block_entries(_read_block(data, handle, filename), filename))
    for (a, _), (b, _) in zip(out, out[1:]):
        if a >= b:
            raise _data_loss(filename, "keys out of order")
    return out


__all__ = ["TableBuilder", "read_table", "encode_varint", "decode_varint", "MAGIC"]
