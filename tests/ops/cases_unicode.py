"""Unicode ops in the harness on valid text, with Python's own codecs as the reference
(TF's numbers for invalid input, the error modes and the wrappers: test_unicode.py)."""

import numpy as np

from tensorweave.ops.apply import apply_op
from tests.ops.harness import OpCase

_TEXT = ["caf\u00e9", "\u4e2d\u6587", "", "\U0001f600!", "ab", "x"]
_STR = np.array([s.encode() for s in _TEXT], dtype=object).reshape(2, 3)


def _decode_ref(strings, offsets=False):
    flat = [s.decode() for s in strings.reshape(-1)]
    splits = np.cumsum([0] + [len(s) for s in flat]).astype(np.int64)
    points = np.array([ord(c) for s in flat for c in s], np.int32)
    starts = np.array([len(s[:i].encode()) for s in flat for i in range(len(s))], np.int64)
    return [splits, points, starts] if offsets else [splits, points]


def _encode_ref(values, splits):
    rows = [values[a:b] for a, b in zip(splits[:-1], splits[1:])]
    return np.array(["".join(map(chr, r)).encode("utf-16-be") for r in rows], dtype=object)


_CODES = np.array([72, 233, 0x4E2D, 0x1F600, 33], np.int32)
_SPLITS = np.array([0, 2, 2, 5], np.int64)

CASES = [
    OpCase("UnicodeDecode", lambda s: apply_op("UnicodeDecode", s, input_encoding="UTF-8"),
           [_STR], _decode_ref, exact_static_shape=False),
    OpCase("UnicodeDecodeWithOffsets",
           lambda s: apply_op("UnicodeDecodeWithOffsets", s, input_encoding="UTF-8"),
           [_STR], lambda s: _decode_ref(s, True), exact_static_shape=False),
    OpCase("UnicodeEncode", lambda v, sp: apply_op("UnicodeEncode", v, sp,
                                                   output_encoding="UTF-16-BE"),
           [_CODES, _SPLITS], _encode_ref),
    OpCase("UnicodeTranscode", lambda s: apply_op("UnicodeTranscode", s, input_encoding="UTF-8",
                                                  output_encoding="UTF-32-BE"),
           [_STR], lambda s: np.vectorize(lambda b: b.decode().encode("utf-32-be"),
                                          otypes=[object])(s)),
]
