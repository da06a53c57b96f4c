"""Unicode and RaggedTensor cases shared by make_unicode_expected.py (run with TensorFlow)
and test_unicode.py (run with tensorweave): each builds a list of fetchables from the `tf`
module. Inputs include invalid UTF-8 (a stray byte, a truncated sequence, an encoded
surrogate, an overlong form), a control character and 4-byte characters."""

from __future__ import annotations

import numpy as np

BAD = [b"ok\xffz", b"\xe2\x82", b"a\xed\xa0\x80b", b"\xc0\xafq", b"\xf0\x9f\x98\x80\x01x", b"",
       "h\u00e9llo w\u00f6rld".encode()]
GOOD = ["caf\u00e9", "\u4e2d\u6587", "\U0001f600!", "", "plain"]
GRID = [["ab", "c\u00e9"], ["", "\u4e2d"], ["xyz", "\U0001f600"]]
CODES = [[72, 233, 0x4E2D], [0x1F600], [], [0xD800, 65, 0x110000, -1, 66]]


def _decode_cases(tf) -> dict:
    out = {}
    for errors in ("replace", "ignore"):
        for controls in (False, True):
            key = f"decode_{errors}_{int(controls)}"
            out[key] = lambda tf, e=errors, c=controls: list(
                tf.strings.unicode_decode_with_offsets(BAD, "UTF-8", errors=e,
                                                       replace_control_characters=c))
    out["decode_replacement_char"] = lambda tf: [tf.strings.unicode_decode(
        BAD, "UTF-8", replacement_char=ord("?"))]
    out["decode_scalar"] = lambda tf: list(tf.strings.unicode_decode_with_offsets(
        tf.constant(GOOD[0]), "UTF-8"))
    out["decode_2d"] = lambda tf: list(tf.strings.unicode_decode_with_offsets(GRID, "UTF-8"))
    out["decode_utf16"] = lambda tf: list(tf.strings.unicode_decode_with_offsets(
        [s.encode("utf-16-be") for s in GOOD] + [b"\x00a\xd8\x00"], "UTF-16-BE"))
    out["decode_latin1"] = lambda tf: [tf.strings.unicode_decode([b"caf\xe9"], "ISO-8859-1")]
    return out


def _encode(tf, codes, encoding, **kw):
    return [tf.strings.unicode_encode(tf.ragged.constant(codes, dtype=tf.int32), encoding, **kw)]


CASES = {
    **_decode_cases(None),
    "encode_utf8": lambda tf: _encode(tf, CODES, "UTF-8"),
    "encode_utf16": lambda tf: _encode(tf, CODES, "UTF-16-BE"),
    "encode_utf32_ignore": lambda tf: _encode(tf, CODES, "UTF-32-BE", errors="ignore"),
    "encode_repl": lambda tf: _encode(tf, CODES, "UTF-8", replacement_char=63),
    "encode_dense_2d": lambda tf: [tf.strings.unicode_encode(
        tf.constant([[104, 105], [0x4E2D, 33]]), "UTF-8")],
    "encode_dense_3d": lambda tf: [tf.strings.unicode_encode(
        tf.constant(np.arange(97, 97 + 12).reshape(2, 3, 2), dtype=tf.int32), "UTF-8")],
    "encode_vector": lambda tf: [tf.strings.unicode_encode(tf.constant([72, 105]), "UTF-8")],
    "encode_ragged_2": lambda tf: _encode(tf, [[[72, 105], []], [[0x1F600]]], "UTF-8"),
    "roundtrip": lambda tf: [tf.strings.unicode_encode(
        tf.strings.unicode_decode(GRID, "UTF-8"), "UTF-8")],
    "split": lambda tf: list(tf.strings.unicode_split_with_offsets(BAD, "UTF-8")),
    "split_2d": lambda tf: [tf.strings.unicode_split(GRID, "UTF-8")],
    "transcode_16": lambda tf: [tf.strings.unicode_transcode(BAD, "UTF-8", "UTF-16-BE")],
    "transcode_ignore": lambda tf: [tf.strings.unicode_transcode(
        BAD, "UTF-8", "UTF-8", errors="ignore", replace_control_characters=True)],
    "transcode_from_16": lambda tf: [tf.strings.unicode_transcode(
        [b"\x00h\x00i\xd8\x00", b"\xd8=\xde\x00"], "UTF-16-BE", "UTF-8")],
    "transcode_latin1": lambda tf: [tf.strings.unicode_transcode(
        [[b"caf\xe9", b"na\xefve"]], "ISO-8859-1", "UTF-32-BE")],
    "length_utf8": lambda tf: [tf.strings.length(BAD, unit="UTF8_CHAR"),
                               tf.strings.length(BAD)],
    "substr_utf8": lambda tf: [tf.strings.substr(BAD, [1, 0, 1, 0, 1, 0, 1],
                                                 [2, 1, 3, 2, 1, 0, 5], unit="UTF8_CHAR")],
    "substr_utf8_negative": lambda tf: [tf.strings.substr(
        [s.encode() for s in GOOD[:3]], -2, 2, unit="UTF8_CHAR")],
    "split_ragged": lambda tf: [tf.strings.split(["a b  c", "", "d"], result_type="RaggedTensor"),
                                tf.string_split(["x,y", "z"], ",", result_type="RaggedTensor")],
    "ragged_from": lambda tf: _ragged_parts(tf),
    "ragged_constant": lambda tf: _ragged_constants(tf),
}


def _ragged_parts(tf) -> list:
    rt = tf.RaggedTensor.from_row_splits([1, 2, 3, 4, 5], [0, 2, 2, 5])
    lengths = tf.RaggedTensor.from_row_lengths([1.5, 2.5, 3.5], [0, 2, 0, 1])
    rowids = tf.RaggedTensor.from_value_rowids(["a", "b", "c"], [1, 1, 3], nrows=5)
    dense = tf.constant([[1, 0, 0], [2, 3, 0], [0, 0, 0]])
    return [rt, rt.row_lengths(), rt.value_rowids(), rt.nrows(), rt.to_tensor(),
            rt.to_tensor(default_value=-1), rt.to_sparse(), lengths.to_tensor(), rowids,
            rowids.to_tensor(), tf.RaggedTensor.from_tensor(dense, padding=0),
            tf.RaggedTensor.from_tensor(dense, lengths=[1, 3, 0]),
            tf.RaggedTensor.from_tensor(dense),
            tf.ragged.map_flat_values(tf.multiply, rt, 10),
            tf.ragged.map_flat_values(tf.strings.upper, rowids)]


def _ragged_constants(tf) -> list:
    nested = tf.ragged.constant([[[1, 2], [3]], [], [[4], [], [5, 6]]])
    uniform = tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)
    return [nested, nested.to_tensor(), nested.to_sparse(), nested.flat_values,
            nested.row_lengths(), uniform, uniform.to_tensor(9),
            tf.ragged.constant([["a"], ["b", "c"]]).to_tensor(),
            tf.ragged.constant([[1.5], []]), tf.ragged.constant([[True], [False, True]])]


def to_jsonable(value):
    """Fetched values as JSON: ragged values as nested lists, bytes as latin-1 text."""
    if hasattr(value, "to_list") and hasattr(value, "row_splits"):
        return {"ragged": _plain(value.to_list()), "dtype": str(np.asarray(
            value.flat_values).dtype.kind)}
    if hasattr(value, "dense_shape"):
        return {"sparse": [_plain(np.asarray(v).tolist()) for v in
                           (value.indices, value.values, value.dense_shape)]}
    arr = np.asarray(value)
    return {"shape": list(arr.shape), "kind": arr.dtype.kind if arr.dtype.kind != "S" else "O",
            "values": _plain(arr.tolist())}


def _plain(x):
    if isinstance(x, list):
        return [_plain(v) for v in x]
    if isinstance(x, bytes):
        return x.decode("latin-1")
    return x
