"""Random ops in the harness: static vs runtime shape and dtype (values: test_random.py)."""

import numpy as np

import tensorweave as tf
import tensorweave.runtime.kernels.cpu.random  # noqa: F401  (until runtime.kernels.cpu imports it)
from tensorweave.ops import random_ops  # noqa: F401  (registers the ops)
from tensorweave.ops.apply import apply_op
from tests.ops.harness import OpCase

_SHAPE = np.array([2, 3], np.int32)
_SHAPE64 = np.array([3, 1, 2], np.int64)


def _float_op(op_type, dtype):
    return lambda shape: apply_op(op_type, shape, dtype=dtype, seed=1, seed2=2)


CASES = [
    OpCase(op, _float_op(op, dt), [shape], None, name=f"{dt.name}-{shape.dtype}")
    for op in ("RandomStandardNormal", "RandomUniform", "TruncatedNormal")
    for dt, shape in ((tf.float32, _SHAPE), (tf.float64, _SHAPE64), (tf.float16, _SHAPE))
] + [
    OpCase("RandomUniformInt", lambda s, lo, hi: apply_op("RandomUniformInt", s, lo, hi),
           [_SHAPE, np.int32(-3), np.int32(7)], None, name="int32"),
    OpCase("RandomUniformInt", lambda s, lo, hi: apply_op("RandomUniformInt", s, lo, hi),
           [_SHAPE64, np.int64(0), np.int64(2**40)], None, name="int64"),
    OpCase("Multinomial", lambda lg, n: apply_op("Multinomial", lg, n),
           [np.zeros((3, 5), np.float32), np.int32(4)], None, name="int64"),
    OpCase("Multinomial", lambda lg, n: apply_op("Multinomial", lg, n, output_dtype=tf.int32),
           [np.zeros((2, 4), np.float64), np.int32(7)], None, name="int32"),
    OpCase("RandomShuffle", lambda x: apply_op("RandomShuffle", x),
           [np.arange(12, dtype=np.float32).reshape(4, 3)], None, name="float32"),
    OpCase("RandomShuffle", lambda x: apply_op("RandomShuffle", x),
           [np.arange(5, dtype=np.int64)], None, name="int64"),
    OpCase("RandomGamma", lambda s, a: apply_op("RandomGamma", s, a),
           [_SHAPE, np.array([0.5, 2.0], np.float32)], None, name="float32"),
    OpCase("RandomGamma", lambda s, a: apply_op("RandomGamma", s, a),
           [_SHAPE64, np.float64(3.0)], None, name="float64"),
    OpCase("RandomPoisson", lambda s, r: apply_op("RandomPoisson", s, r),
           [_SHAPE, np.array([1.0, 4.0, 9.0], np.float32)], None),
    OpCase("RandomPoissonV2", lambda s, r: apply_op("RandomPoissonV2", s, r),
           [_SHAPE, np.array([1.0, 4.0], np.float64)], None, name="int64"),
    OpCase("RandomPoissonV2", lambda s, r: apply_op("RandomPoissonV2", s, r, dtype=tf.float32),
           [_SHAPE64, np.float32(2.0)], None, name="float32"),
]

EXEMPT: dict = {}
