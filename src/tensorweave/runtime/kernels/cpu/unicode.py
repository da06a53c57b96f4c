"""CPU kernels for the unicode ops (ops/unicode_ops.py), on Python's codecs.

Decoding follows TF's ICU conversion: an invalid byte sequence (each maximal invalid
subpart, as Python's decoders report them) is an error ("strict"), one `replacement_char`
("replace") or nothing ("ignore"); with `replace_control_characters` the C0 controls
U+0000-U+001F are treated as bad input too. Offsets are each character's first byte.
"""

from __future__ import annotations

import codecs
import threading

import numpy as np

from tensorweave.runtime.kernels.cpu.array import invalid
from tensorweave.runtime.kernels.registry import register_kernel

_SPANS = threading.local()
_HANDLER = "tensorweave.unicode_spans"


def _record(err: UnicodeError) -> tuple[str, int]:
    assert isinstance(err, UnicodeDecodeError)
    _SPANS.value.append((err.start, err.end))
    return "\ufffd", err.end


codecs.register_error(_HANDLER, _record)


def _codec(name: str, what: str) -> str:
    try:
        return codecs.lookup(name).name
    except LookupError:
        raise invalid(f"Could not create converter for {what} encoding: {name}") from None


def decode(s: bytes, codec: str, errors: str, repl: int, controls: bool):
    """(code points, byte offset of each) of `s` under the module docstring's rules."""
    _SPANS.value = []
    text = s.decode(codec, _HANDLER)
    spans, _SPANS.value = _SPANS.value, []
    if spans and errors == "strict":
        raise invalid("Invalid formatting on input string")
    points, starts, pos, k = [], [], 0, 0
    for ch in text:
        if k < len(spans) and pos == spans[k][0]:
            (start, pos), k = spans[k], k + 1
            if errors == "replace":
                points.append(repl)
                starts.append(start)
            continue
        cp, start = ord(ch), pos
        pos += len(ch.encode(codec))
        if controls and cp < 0x20:
            if errors == "strict":
                raise invalid("Invalid formatting on input string")
            if errors == "ignore":
                continue
            cp = repl
        points.append(cp)
        starts.append(start)
    return points, starts


def _valid(cp: int) -> bool:
    return 0 <= cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF


def encode(points, codec: str, errors: str, repl: int) -> bytes:
    """The code points as a string in `codec`; invalid ones (out of range, surrogates)
    fail, are replaced by `repl`, or dropped."""
    chars = []
    for cp in points:
        if not _valid(cp):
            if errors == "strict":
                raise invalid("Code point is out of range for Unicode, or is a surrogate.")
            if errors == "ignore" or not _valid(repl):
                continue
            cp = repl
        chars.append(chr(cp))
    return "".join(chars).encode(codec)


def _bytes(v) -> bytes:
    return v.encode("utf-8") if isinstance(v, str) else bytes(v)


def _decode_all(node, with_offsets: bool):
    errors, repl = node.attr("errors"), int(node.attr("replacement_char"))
    controls = bool(node.attr("replace_control_characters"))
    encoding = node.attr("input_encoding")
    splits_dtype = node.attr("Tsplits").np_dtype

    def run(strings):
        codec = _codec(encoding, "input")
        flat = np.asarray(strings, dtype=object).reshape(-1)
        splits, points, offsets = [0], [], []
        for s in flat.tolist():
            p, o = decode(_bytes(s), codec, errors, repl, controls)
            points += p
            offsets += o
            splits.append(len(points))
        out = (np.array(splits, splits_dtype), np.array(points, np.int32))
        return out + (np.array(offsets, np.int64),) if with_offsets else out

    return run


register_kernel("UnicodeDecode")(lambda node: _decode_all(node, False))
register_kernel("UnicodeDecodeWithOffsets")(lambda node: _decode_all(node, True))


@register_kernel("UnicodeEncode")
def _unicode_encode(node):
    errors, repl = node.attr("errors"), int(node.attr("replacement_char"))
    codec = _codec(node.attr("output_encoding"), "output")

    def run(values, splits):
        values, splits = np.asarray(values).tolist(), np.asarray(splits).tolist()
        if splits and (splits[0] != 0 or splits[-1] != len(values) or
                       any(b < a for a, b in zip(splits, splits[1:]))):
            raise invalid(f"Invalid input_splits for {len(values)} values: {splits}")
        rows = [encode(values[a:b], codec, errors, repl) for a, b in zip(splits, splits[1:])]
        return np.array(rows, dtype=object).reshape(len(rows))

    return run


@register_kernel("UnicodeTranscode")
def _unicode_transcode(node):
    errors, repl = node.attr("errors"), int(node.attr("replacement_char"))
    controls = bool(node.attr("replace_control_characters"))
    source, target = node.attr("input_encoding"), node.attr("output_encoding")

    def run(strings):
        src, dst = _codec(source, "input"), _codec(target, "output")
        arr = np.asarray(strings, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        for index in np.ndindex(arr.shape):
            points, _ = decode(_bytes(arr[index]), src, errors, repl, controls)
            out[index] = encode(points, dst, "replace" if errors == "strict" else errors, repl)
        return out

    return run
