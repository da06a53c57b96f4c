"""Tensor slices in a V2 checkpoint: the `shape_and_slices` text, slice keys, slice protos.

A partitioned variable is saved as slices of its full tensor. SaveV2 gets, per tensor, the
text "d0 d1 ... s0:s1:..." (TF's TensorSlice spec): the full shape, then one extent per
dimension, "start,length" or "-" for the whole dimension. The bundle then holds:

- an entry under the full name with the full `shape`, the `dtype` and `slices` (one
  TensorSliceProto per saved slice) and no bytes;
- each slice's bytes under the key TF's `checkpoint::EncodeTensorNameSlice` builds:
  OrderedCode's WriteNumIncreasing(0), WriteString(name), WriteNumIncreasing(rank), then
  WriteSignedNumIncreasing(start) and WriteSignedNumIncreasing(length) per dimension (a whole
  dimension: start 0, length -1). Those keys start with a 0 byte, so they sort before names.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensorweave import errors
from tensorweave.proto import tensor_slice_pb2

FULL = -1  # a whole dimension's length, as TF's kFullExtent


@dataclass(frozen=True)
class Slice:
    """[start, start + length) per dimension; length FULL takes the whole dimension."""

    extents: tuple[tuple[int, int], ...]

    def bounds(self, full_shape) -> list[tuple[int, int]]:
        """(start, stop) per dimension of a tensor shaped `full_shape`."""
        return [(0, n) if length == FULL else (start, start + length)
                for (start, length), n in zip(self.extents, full_shape)]

    def shape(self, full_shape) -> list[int]:
        return [stop - start for start, stop in self.bounds(full_shape)]

    def index(self, full_shape) -> tuple[slice, ...]:
        """The numpy index of this slice within the full tensor."""
        return tuple(slice(a, b) for a, b in self.bounds(full_shape))

    def to_proto(self) -> tensor_slice_pb2.TensorSliceProto:
        proto = tensor_slice_pb2.TensorSliceProto()
        for start, length in self.extents:
            e = proto.extent.add()
            if length != FULL:
                e.start, e.length = start, length
        return proto

    @staticmethod
    def from_proto(proto, rank: int) -> Slice:
        extents = [(e.start, e.length) if e.HasField("length") else (0, FULL)
                   for e in proto.extent]
        return Slice(tuple(extents or [(0, FULL)] * rank))

    def key(self, name: str) -> bytes:
        """The bundle key of this slice of tensor `name` (EncodeTensorNameSlice)."""
        out = bytearray(_num_increasing(0))
        out += _string(name.encode("utf-8", "surrogateescape"))
        out += _num_increasing(len(self.extents))
        for start, length in self.extents:
            out += _signed_num_increasing(start) + _signed_num_increasing(length)
        return bytes(out)


def is_slice_key(key: str) -> bool:
    """Whether a bundle key is a slice's (EncodeTensorNameSlice keys start with a 0 byte)."""
    return key.startswith("\x00")


def parse_shape_and_slice(text: str) -> tuple[list[int], Slice]:
    """(full shape, slice) of a non-empty `shape_and_slices` element.

    Raises:
      InvalidArgumentError: malformed text, a rank mismatch, or a slice outside the shape.
    """
    parts = text.split()
    try:
        full_shape = [int(d) for d in parts[:-1]]
        extents = tuple((0, FULL) if s == "-" else _extent(s) for s in parts[-1].split(":"))
    except (ValueError, IndexError):
        raise _bad(text, "expected 'dim0 dim1 ... start,length:...'") from None
    if len(extents) != len(full_shape):
        raise _bad(text, f"{len(extents)} extents for a rank-{len(full_shape)} shape")
    result = Slice(extents)
    for (start, stop), n in zip(result.bounds(full_shape), full_shape):
        if start < 0 or stop > n or stop < start:
            raise _bad(text, f"extent [{start}, {stop}) is outside a dimension of {n}")
    return full_shape, result


def _extent(text: str) -> tuple[int, int]:
    start, length = text.split(",")
    return int(start), int(length)


def _bad(text: str, why: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, f"Invalid shape_and_slice {text!r}: {why}")


# -- OrderedCode (TF's strings::OrderedCode), the increasing encodings -----------------------
def _num_increasing(value: int) -> bytes:
    """A length byte, then the value big-endian without leading zero bytes."""
    body = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return bytes([len(body)]) + body


def _string(data: bytes) -> bytes:
    """0x00 → 00 ff, 0xff → ff 00, then the separator 00 01."""
    escaped = {0: b"\x00\xff", 0xff: b"\xff\x00"}
    return b"".join(escaped.get(c, bytes([c])) for c in data) + b"\x00\x01"


def _signed_num_increasing(value: int) -> bytes:
    """A sign bit (1 for >= 0), as many more bits equal to it as there are extra bytes, a
    delimiter bit, then the value (two's complement) big-endian, in 1 to 10 bytes."""
    magnitude = ~value if value < 0 else value
    length = next(n for n in range(1, 11) if magnitude.bit_length() + 1 <= 7 * n)
    raw = (value & ((1 << (8 * length)) - 1)).to_bytes(length, "big")
    header = _header_bits(length)  # NOTE: xored in: a negative value's size bits read 0
    return bytes(r ^ h for r, h in zip(raw, header + bytes(length - len(header))))


def _header_bits(length: int) -> bytes:
    """TF's kLengthToHeaderBits: `length` leading 1 bits (over up to two bytes)."""
    bits = ((1 << length) - 1) << (16 - length)
    return bits.to_bytes(2, "big")[:min(length, 2)]
