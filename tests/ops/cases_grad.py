"""Harness cases for the ops the autodiff package registers (when no op family has them):
the fused unary gradient ops, BroadcastGradientArgs and StridedSliceGrad. Run by
tests/autodiff/test_grad_ops.py (and by the harness once it collects this module)."""

from __future__ import annotations

import numpy as np

from tensorweave.autodiff import math_grad as _math_grad  # noqa: F401  (registers the ops)
from tensorweave.ops.apply import apply_op
from tests.ops.harness import OpCase

_RNG = np.random.default_rng(11)
F16, F32, F64 = np.float16, np.float32, np.float64


def _pair(lo, hi, dt, shape=(2, 3)):
    return [_RNG.uniform(lo, hi, shape).astype(dt), _RNG.uniform(-1, 1, shape).astype(dt)]


def _ref(fn):
    return lambda y, dy: fn(y.astype(np.float64), dy.astype(np.float64)).astype(y.dtype)


_UNARY = {
    "SigmoidGrad": (lambda y, dy: dy * y * (1 - y), (0.1, 0.9)),
    "TanhGrad": (lambda y, dy: dy * (1 - y * y), (-0.9, 0.9)),
    "SqrtGrad": (lambda y, dy: dy * 0.5 / y, (0.5, 2.0)),
    "RsqrtGrad": (lambda y, dy: dy * -0.5 * y ** 3, (0.5, 2.0)),
    "ReciprocalGrad": (lambda y, dy: -dy * y * y, (0.5, 2.0)),
    "InvGrad": (lambda y, dy: -dy * y * y, (0.5, 2.0)),
}

CASES = []
for _op, (_fn, (_lo, _hi)) in _UNARY.items():
    for _dt in (F16, F32, F64):
        tol = {"rtol": 2e-3, "atol": 2e-3} if _dt == F16 else {}
        CASES.append(OpCase(_op, lambda y, dy, _op=_op: apply_op(_op, y, dy),
                            _pair(_lo, _hi, _dt), _ref(_fn), name=np.dtype(_dt).name, **tol))
CASES.append(OpCase("SigmoidGrad", lambda y, dy: apply_op("SigmoidGrad", y, dy),
                    [np.array([0.3 + 0.1j, 0.6 - 0.2j], np.complex128),
                     np.array([1.0 - 1j, 0.5 + 2j], np.complex128)],
                    lambda y, dy: dy * np.conj(y * (1 - y)), name="complex128"))

CASES += [
    OpCase("BroadcastGradientArgs", lambda a, b: apply_op("BroadcastGradientArgs", a, b),
           [np.array([2, 1, 3], np.int32), np.array([4, 1], np.int32)],
           lambda a, b: [np.array([1], np.int32), np.array([0, 2], np.int32)],
           exact_static_shape=False),
    OpCase("BroadcastGradientArgs", lambda a, b: apply_op("BroadcastGradientArgs", a, b),
           [np.array([1, 1], np.int64), np.array([1], np.int64)],
           lambda a, b: [np.array([0, 1], np.int64), np.array([0, 1], np.int64)],
           name="int64_all_ones", exact_static_shape=False),
    OpCase("StridedSliceGrad",
           lambda s, b, e, st, dy: apply_op("StridedSliceGrad", s, b, e, st, dy),
           [np.array([3, 4], np.int32), np.array([1, 3], np.int32), np.array([3, 0], np.int32),
            np.array([1, -2], np.int32), np.arange(4, dtype=np.float32).reshape(2, 2)],
           lambda s, b, e, st, dy: _strided_ref(dy), exact_static_shape=False),
    OpCase("StridedSliceGrad",
           lambda s, b, e, st, dy: apply_op("StridedSliceGrad", s, b, e, st, dy,
                                            ellipsis_mask=1, shrink_axis_mask=2),
           [np.array([2, 3, 4], np.int64), np.array([0, 1], np.int64),
            np.array([0, 2], np.int64), np.array([1, 1], np.int64),
            np.arange(6, dtype=np.float64).reshape(2, 3)],
           lambda s, b, e, st, dy: _ellipsis_ref(dy), name="ellipsis_shrink",
           exact_static_shape=False),
]


def _strided_ref(dy):
    out = np.zeros((3, 4), dy.dtype)
    out[1:3, 3:0:-2] = dy
    return out


def _ellipsis_ref(dy):
    out = np.zeros((2, 3, 4), dy.dtype)
    out[..., 1] = dy
    return out


EXEMPT: dict[str, str] = {}
