"""Einsum, Roll, the bitwise ops and EditDistance in the harness (TF's numbers:
test_math_extra.py)."""

import numpy as np

from tensorweave.ops.apply import apply_op
from tests.ops.harness import OpCase

_A = np.arange(6, dtype=np.float32).reshape(2, 3)
_B = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
_I = np.array([[12, 7, -3], [0, 1, 255]], np.int32)
_S = np.array([[1, 2, 3], [0, 4, 1]], np.int32)


def _popcount(x):
    return np.array([[bin(int(v) & 0xFFFFFFFF).count("1") for v in row] for row in x], np.uint8)


CASES = [
    OpCase("Einsum", lambda a, b: apply_op("Einsum", [a, b], equation="ij,jk->ik"), [_A, _B],
           lambda a, b: a @ b, name="matmul"),
    OpCase("Einsum", lambda a: apply_op("Einsum", [a], equation="ij->j"), [_A],
           lambda a: a.sum(0), name="reduce"),
    OpCase("Roll", lambda x, s, a: apply_op("Roll", x, s, a), [_B, np.int32(1), np.int32(1)],
           lambda x, s, a: np.roll(x, 1, 1)),
    OpCase("BitwiseAnd", lambda x, y: apply_op("BitwiseAnd", x, y), [_I, _S], np.bitwise_and),
    OpCase("BitwiseOr", lambda x, y: apply_op("BitwiseOr", x, y), [_I, _S], np.bitwise_or),
    OpCase("BitwiseXor", lambda x, y: apply_op("BitwiseXor", x, y), [_I, _S], np.bitwise_xor),
    OpCase("LeftShift", lambda x, y: apply_op("LeftShift", x, y), [_I, _S], np.left_shift),
    OpCase("RightShift", lambda x, y: apply_op("RightShift", x, y), [_I, _S], np.right_shift),
    OpCase("Invert", lambda x: apply_op("Invert", x), [_I], np.invert),
    OpCase("PopulationCount", lambda x: apply_op("PopulationCount", x), [_I], _popcount),
    OpCase("EditDistance",
           lambda hi, hv, hs, ti, tv, ts: apply_op("EditDistance", hi, hv, hs, ti, tv, ts),
           [np.array([[0, 0], [0, 1], [1, 0]], np.int64), np.array([1, 2, 3], np.int32),
            np.array([2, 2], np.int64), np.array([[0, 0], [1, 0], [1, 1]], np.int64),
            np.array([1, 3, 4], np.int32), np.array([2, 2], np.int64)],
           lambda *a: np.array([1.0, 0.5], np.float32)),
]

EXEMPT: dict = {}
