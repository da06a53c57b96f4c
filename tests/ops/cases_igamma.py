"""Harness cases for Igamma, Igammac, IgammaGradA, RandomGammaGrad and Betainc
(ops/special_ops.py), against numbers written by TensorFlow (tests/ops/make_igamma_expected.py
→ tests/data/igamma_expected.npz).

float64 is compared at rtol 1e-10, Betainc at 1e-9: its prefactor subtracts log-gammas of the
size of (a + b) log(a + b) (1e6 at a + b = 1e5), so an ulp of each (2e-10 there) is an error
of that size in the result, in TF's kernel as in ours. atol 1e-12 absorbs TF's rounding noise
around 0 (igammac(1e-300, 0.5) = -2.3e-14 there). Our float32 is float64 rounded; TF's float32
kernels run the loops in float32 and go wrong where `F32_TF_ARTIFACTS` says; there the reference
is TF's float64 kernel on the same float32 inputs.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from tensorweave.ops import special_ops as sp
from tests.ops.harness import OpCase

DATA = np.load(Path(__file__).resolve().parents[1] / "data" / "igamma_expected.npz")
F16, F32, F64 = np.float16, np.float32, np.float64
_F32_TOL = {"rtol": 1e-5, "atol": 1e-6}
_FLT_MAX_LOG = math.log(float(np.finfo(F32).max))


def _lgamma(v):
    return np.array([math.lgamma(t) if t > 0 else np.nan for t in np.ravel(v)])


def _large_a(a, *_):
    return a >= 170


def _float32_underflow_or_large(a, x):
    with np.errstate(all="ignore"):
        log_term = a * np.log(x) - x - _lgamma(a)
    return (a >= 170) | (log_term < -_FLT_MAX_LOG)


def _large_parameter(a, b, _x):
    return np.maximum(a, b) >= 85


# op -> (why TF's float32 kernel disagrees with its float64 one, the points where it may)
F32_TF_ARTIFACTS = {
    "igamma": ("for a >= 170 float32 terms lose the precision the sum needs", _large_a),
    "igammac": ("for a >= 170 float32 terms lose the precision the sum needs", _large_a),
    "igamma_grad_a": ("for a >= 170 float32 terms lose the precision the sum needs", _large_a),
    "random_gamma_grad": ("x^a e^-x / Gamma(a) underflows float32 (TF gives 0), or a >= 170",
                          _float32_underflow_or_large),
    "betainc": ("Eigen's float32 algorithm loses accuracy for a or b >= 85", _large_parameter),
}
OPS = {  # op -> (op type, wrapper, input keys, float64 rtol)
    "igamma": ("Igamma", sp.igamma, ("igamma_a", "igamma_x"), 1e-10),
    "igammac": ("Igammac", sp.igammac, ("igamma_a", "igamma_x"), 1e-10),
    "igamma_grad_a": ("IgammaGradA", sp.igamma_grad_a, ("igamma_a", "igamma_x"), 1e-10),
    "random_gamma_grad": ("RandomGammaGrad", sp.random_gamma_grad, ("igamma_a", "igamma_x"),
                          1e-10),
    "betainc": ("Betainc", sp.betainc, ("betainc_a", "betainc_b", "betainc_x"), 1e-9),
}


def inputs(op: str, dtype=F64) -> list:
    with np.errstate(over="ignore"):
        return [DATA[k].astype(dtype) for k in OPS[op][2]]


def f32_artifacts(op: str, table: str | None = None) -> np.ndarray:
    """Mask of the float32 table where TF's float32 kernel and its float64 kernel (on the same
    float32 inputs) disagree beyond float32 tolerance."""
    table = table or op
    with np.errstate(over="ignore"):
        tf64 = DATA[f"{table}_f32in_f64"].astype(F32)
    with np.errstate(invalid="ignore"):
        return ~np.isclose(DATA[f"{table}_f32"], tf64, equal_nan=True, **_F32_TOL)


def expected_f32(table: str) -> np.ndarray:
    with np.errstate(over="ignore"):
        rounded = DATA[f"{table}_f32in_f64"].astype(F32)
    return np.where(f32_artifacts(table, table), rounded, DATA[f"{table}_f32"])


def _const(value):
    return lambda *_: value


def _table_cases(op: str) -> list[OpCase]:
    op_type, build, _, rtol = OPS[op]
    return [
        OpCase(op_type, build, inputs(op), lambda *_, w=DATA[f"{op}_f64"]: w,
               name="table_float64", rtol=rtol, atol=1e-12),
        OpCase(op_type, build, inputs(op, F32), _const(expected_f32(op)),
               name="table_float32", **_F32_TOL),
    ]


def _broadcast_cases() -> list[OpCase]:
    a, x = DATA["b_a"], DATA["b_x"]
    out = []
    for op_type, fn, table in (("Igamma", sp.igamma, "igamma_b"),
                               ("Igammac", sp.igammac, "igammac_b")):
        out.append(OpCase(op_type, fn, [a, x], lambda *_, w=DATA[f"{table}_f64"]: w,
                          name="broadcast_float64", rtol=1e-10, atol=1e-12))
        out.append(OpCase(op_type, fn, [a.astype(F32), x.astype(F32)],
                          _const(expected_f32(table)), name="broadcast_float32",
                          **_F32_TOL))
        # half: float64 rounded to half (half's resolution: 1e-3 relative)
        out.append(OpCase(op_type, fn, [a.astype(F16), x.astype(F16)],
                          _const(DATA[f"{table}_f32in_f64"].astype(F16)),
                          name="broadcast_half", rtol=2e-3, atol=1e-3))
    return out


def _betainc_scalar_cases() -> list[OpCase]:
    x = DATA["bs_x"]
    return [
        OpCase("Betainc", sp.betainc, [F64(2.5), F64(0.8), x],
               lambda *_: DATA["betainc_s_f64"], name="scalar_params", rtol=1e-10, atol=1e-12),
        OpCase("Betainc", sp.betainc, [F32(2.5), F32(0.8), x.astype(F32)],
               lambda *_: expected_f32("betainc_s"), name="scalar_params_float32",
               **_F32_TOL),
    ]


CASES = ([c for op in OPS for c in _table_cases(op)] + _broadcast_cases()
         + _betainc_scalar_cases())
