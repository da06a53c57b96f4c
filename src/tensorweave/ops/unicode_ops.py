"""Unicode string ops (TF's unicode_ops.cc and ragged_string_ops.py): `UnicodeDecode`,
`UnicodeDecodeWithOffsets`, `UnicodeEncode`, `UnicodeTranscode`, and the wrappers
`tf.strings.unicode_decode(_with_offsets)`, `unicode_encode`, `unicode_split(_with_offsets)`,
`unicode_transcode`. Decoded characters of an N-d string tensor come back as a RaggedTensor
of rank N + 1 (a plain vector for a scalar string), as TF returns them. None has a gradient.
Kernels: runtime/kernels/cpu/unicode.py.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import unchanged
from tensorweave.ops.ragged_tensor import RaggedTensor
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

_ERRORS = "errors: {'strict', 'replace', 'ignore'} = 'replace'"
_OUT_ENCODING = "output_encoding: {'UTF-8', 'UTF-16-BE', 'UTF-32-BE'}"
_DECODE_ATTRS = ["input_encoding: string", _ERRORS, "replacement_char: int = 65533",
                 "replace_control_characters: bool = false",
                 "Tsplits: {int32, int64} = DT_INT64"]


def _decode_shape(n_outputs: int):
    def fn(ctx):
        n = ctx.input_shape(0).num_elements()
        splits = TensorShape([None if n is None else n + 1])
        return [splits] + [TensorShape([None])] * (n_outputs - 1)

    return fn


def _encode_shape(ctx):
    if ctx.input_shape(0).ndims not in (None, 1) or ctx.input_shape(1).ndims not in (None, 1):
        raise ctx.fail("input_values and input_splits must be vectors")
    n = ctx.input_shape(1)[0] if ctx.input_shape(1).ndims == 1 else None
    return TensorShape([None if n is None else n - 1])


register_op("UnicodeDecode", inputs=["input: string"],
            outputs=["row_splits: Tsplits", "char_values: int32"], attrs=_DECODE_ATTRS,
            shape_fn=_decode_shape(2))
register_op("UnicodeDecodeWithOffsets", inputs=["input: string"],
            outputs=["row_splits: Tsplits", "char_values: int32",
                     "char_to_byte_starts: int64"], attrs=_DECODE_ATTRS,
            shape_fn=_decode_shape(3))
register_op("UnicodeEncode", inputs=["input_values: int32", "input_splits: Tsplits"],
            outputs=["output: string"],
            attrs=["errors: {'ignore', 'replace', 'strict'} = 'replace'", _OUT_ENCODING,
                   "replacement_char: int = 65533", "Tsplits: {int32, int64} = DT_INT64"],
            shape_fn=_encode_shape)
register_op("UnicodeTranscode", inputs=["input: string"], outputs=["output: string"],
            attrs=["input_encoding: string", _OUT_ENCODING, _ERRORS,
                   "replacement_char: int = 65533",
                   "replace_control_characters: bool = false"], shape_fn=unchanged)


# -- Python API --------------------------------------------------------------------------------
def _strings(x):
    if isinstance(x, RaggedTensor):
        return x
    return convert_to_tensor(x, dtype=dtypes.string, name="input")


def _as_ragged_rows(x, rank: int):
    """`x` (rank >= 2) with all but its innermost dimension ragged."""
    if isinstance(x, RaggedTensor):
        if x.ragged_rank < rank - 1:
            return x.with_flat_values(RaggedTensor.from_tensor(
                x.flat_values, ragged_rank=rank - x.ragged_rank - 1))
        return x
    return RaggedTensor.from_tensor(x, ragged_rank=rank - 1)


def _rank(x) -> int:
    rank = x.shape.ndims
    if rank is None:
        raise ValueError("Rank of `input` must be statically known.")
    return rank


def _decode(input, input_encoding, errors, replacement_char, replace_control_characters,  # noqa: A002
            with_offsets):
    x = _strings(input)
    rank = _rank(x)
    if rank > 1:
        x = _as_ragged_rows(x, rank)
    flat = apply_op("Reshape", x.flat_values if isinstance(x, RaggedTensor) else x, [-1])
    outs = apply_op("UnicodeDecodeWithOffsets" if with_offsets else "UnicodeDecode", flat,
                    input_encoding=input_encoding, errors=errors,
                    replacement_char=replacement_char,
                    replace_control_characters=replace_control_characters)
    splits, parts = outs[0], outs[1:]
    if rank == 0:
        return tuple(parts)
    ragged = [RaggedTensor.from_row_splits(p, splits, validate=False) for p in parts]
    if rank > 1:
        ragged = [x.with_flat_values(r) for r in ragged]
    return tuple(ragged)


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   replace_control_characters=False, name=None):
    """The code points of each string: a RaggedTensor `[..., (chars)]` (a vector for a
    scalar). `errors`: "strict" (InvalidArgumentError on bad input), "replace" (each bad
    sequence becomes `replacement_char`) or "ignore".

    Raises:
      ValueError: the input's rank is not known at graph construction.
    """
    with name_scope(name, "UnicodeDecode", [input]):
        return _decode(input, input_encoding, errors, replacement_char,
                       replace_control_characters, False)[0]


def unicode_decode_with_offsets(input, input_encoding, errors="replace",  # noqa: A002
                                replacement_char=65533, replace_control_characters=False,
                                name=None):
    """`(codepoints, offsets)`: unicode_decode's result and each character's start byte."""
    with name_scope(name, "UnicodeDecodeWithOffsets", [input]):
        return _decode(input, input_encoding, errors, replacement_char,
                       replace_control_characters, True)


def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   name=None):
    """Code points (int32, a Tensor or RaggedTensor of rank N + 1) as strings of rank N in
    `output_encoding` ("UTF-8", "UTF-16-BE" or "UTF-32-BE").

    Raises:
      ValueError: the input's rank is unknown or 0.
    """
    with name_scope(name, "UnicodeEncode", [input]):
        return _encode(input, output_encoding, errors, replacement_char)


def _encode(x, output_encoding, errors, replacement_char):
    if not isinstance(x, RaggedTensor):
        x = convert_to_tensor(x, name="input")
    rank = _rank(x)
    if rank == 0:
        raise ValueError("Rank of input must be at least 1.")
    again = lambda v: _encode(v, output_encoding, errors, replacement_char)  # noqa: E731
    if isinstance(x, RaggedTensor):
        if x.flat_values.shape.ndims != 1:
            return x.with_flat_values(again(x.flat_values))
        if x.ragged_rank > 1:
            return x.with_values(again(x.values))
        return apply_op("UnicodeEncode", x.values, x.row_splits, errors=errors,
                        output_encoding=output_encoding, replacement_char=replacement_char)
    if rank == 1:
        whole = RaggedTensor.from_row_splits(
            x, apply_op("Pack", [np.int64(0), apply_op("Size", x, out_type=dtypes.int64)],
                        axis=0), validate=False)
        return apply_op("Reshape", again(whole), np.zeros(0, np.int32))
    if rank == 2:
        return again(RaggedTensor.from_tensor(x))
    shape = apply_op("Shape", x)
    rows = apply_op("Reshape", x, apply_op("Pack", [-1, shape[-1]], axis=0))
    return apply_op("Reshape", again(rows), shape[:-1])


def _chars(codepoints, encoding, errors, replacement_char):
    """Each code point as its own string (one UnicodeEncode over one-character rows)."""
    def one_per_row(cp):
        n = apply_op("Size", cp, out_type=dtypes.int64)
        splits = apply_op("Range", np.int64(0), n + 1, np.int64(1))
        return apply_op("UnicodeEncode", cp, splits, errors=errors, output_encoding=encoding,
                        replacement_char=replacement_char)

    if isinstance(codepoints, RaggedTensor):
        return codepoints.with_flat_values(one_per_row(codepoints.flat_values))
    return one_per_row(codepoints)


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                  name=None):
    """Each string split into its characters (as strings in `input_encoding`), a
    RaggedTensor `[..., (chars)]`."""
    with name_scope(name, "UnicodeSplit", [input]):
        codepoints = _decode(input, input_encoding, errors, replacement_char, False, False)[0]
        return _chars(codepoints, input_encoding, errors, replacement_char)


def unicode_split_with_offsets(input, input_encoding, errors="replace",  # noqa: A002
                               replacement_char=65533, name=None):
    """`(chars, offsets)`: unicode_split's result and each character's start byte."""
    with name_scope(name, "UnicodeSplitWithOffsets", [input]):
        codepoints, offsets = _decode(input, input_encoding, errors, replacement_char, False,
                                      True)
        return _chars(codepoints, input_encoding, errors, replacement_char), offsets


def unicode_transcode(input, input_encoding, output_encoding, errors="replace",  # noqa: A002
                      replacement_char=65533, replace_control_characters=False, name=None):
    """Each string re-encoded from `input_encoding` to `output_encoding` (same shape)."""
    return apply_op("UnicodeTranscode", _strings(input), input_encoding=input_encoding,
                    output_encoding=output_encoding, errors=errors,
                    replacement_char=replacement_char,
                    replace_control_characters=replace_control_characters, name=name)


__all__ = ["unicode_decode", "unicode_decode_with_offsets", "unicode_encode", "unicode_split",
           "unicode_split_with_offsets", "unicode_transcode"]
