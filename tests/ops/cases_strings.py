"""String ops in the harness: static vs runtime shape and dtype, with small references
(TF's outputs for a wider table: test_strings.py)."""

import numpy as np

from tensorweave.ops.apply import apply_op
from tests.ops.harness import OpCase

_S = np.array([b"ab cd", b"e"], dtype=object)
_M = np.array([[b"Ab ", b" c"], [b"d", b"EF"], [b"g", b"h"]], dtype=object)


def _obj(values, shape=None):
    arr = np.array(values, dtype=object)
    return arr.reshape(shape) if shape is not None else arr


def _split_ref(s, d):
    return [np.array([[0, 0], [0, 1], [1, 0]], np.int64), _obj([b"ab", b"cd", b"e"]),
            np.array([2, 2], np.int64)]


CASES = [
    OpCase("StringSplit", lambda s, d: apply_op("StringSplit", s, d), [_S, np.array(b" ", object)],
           _split_ref, exact_static_shape=False),
    OpCase("StringSplitV2", lambda s, d: apply_op("StringSplitV2", s, d),
           [_S, np.array(b" ", object)], _split_ref, exact_static_shape=False),
    OpCase("Substr", lambda s, p, n: apply_op("Substr", s, p, n),
           [_M, np.array([0, 1], np.int32), np.array([1, 5], np.int32)],
           lambda s, p, n: _obj([[b"A", b"c"], [b"d", b"F"], [b"g", b""]])),
    OpCase("RegexReplace", lambda s, p, r: apply_op("RegexReplace", s, p, r),
           [_M, np.array(b"[a-z]", object), np.array(b"*", object)],
           lambda *a: _obj([[b"A* ", b" *"], [b"*", b"EF"], [b"*", b"*"]])),
    OpCase("StaticRegexReplace",
           lambda s: apply_op("StaticRegexReplace", s, pattern=r"(\w)", rewrite=r"<\1>"),
           [_S], lambda s: _obj([b"<a><b> <c><d>", b"<e>"])),
    OpCase("RegexFullMatch", lambda s, p: apply_op("RegexFullMatch", s, p),
           [_M, np.array(b"[a-z]+", object)],
           lambda *a: np.array([[False, False], [True, False], [True, True]])),
    OpCase("StaticRegexFullMatch", lambda s: apply_op("StaticRegexFullMatch", s, pattern="e"),
           [_S], lambda s: np.array([False, True])),
    OpCase("ReduceJoin", lambda s, a: apply_op("ReduceJoin", s, a, separator="|"),
           [_M, np.array([1], np.int32)],
           lambda *a: _obj([b"Ab | c", b"d|EF", b"g|h"])),
    OpCase("AsString", lambda x: apply_op("AsString", x, precision=2),
           [np.array([[1.5, -0.125, 3.0]], np.float32)],
           lambda x: _obj([[b"1.50", b"-0.12", b"3.00"]])),
    OpCase("StringLength", lambda s: apply_op("StringLength", s), [_M],
           lambda s: np.array([[3, 2], [1, 2], [1, 1]], np.int32)),
    OpCase("StringStrip", lambda s: apply_op("StringStrip", s), [_M],
           lambda s: _obj([[b"Ab", b"c"], [b"d", b"EF"], [b"g", b"h"]])),
    OpCase("StringUpper", lambda s: apply_op("StringUpper", s), [_S],
           lambda s: _obj([b"AB CD", b"E"])),
    OpCase("StringLower", lambda s: apply_op("StringLower", s), [_M],
           lambda s: _obj([[b"ab ", b" c"], [b"d", b"ef"], [b"g", b"h"]])),
]

EXEMPT: dict = {}
