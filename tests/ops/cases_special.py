"""Harness cases for Zeta, Polygamma and MirrorPadGrad (ops/special_ops.py), against numbers
written by TensorFlow (tests/ops/make_special_expected.py → tests/data/special_expected.npz).

float64 is compared at rtol 1e-10 (polygamma of order 0 at atol 1e-11: math_special's digamma
is accurate to ~1e-11 absolute). float32 is compared with TF's float32 kernel at rtol 1e-5,
except where that kernel is itself wrong (`F32_TF_ARTIFACTS`): our float32 is float64 rounded,
so there the reference is TF's float64 kernel on the same float32 inputs. (TF flushes float32
subnormals to zero, e.g. zeta(30, 25) = 1.7e-42 is 0 there: atol 1e-6 absorbs those.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tensorweave.ops import special_ops as sp
from tests.ops.harness import OpCase

DATA = np.load(Path(__file__).resolve().parents[1] / "data" / "special_expected.npz")
F32, F64 = np.float32, np.float64
_F64_TOL = {"rtol": 1e-10, "atol": 0.0}
_F32_TOL = {"rtol": 1e-5, "atol": 1e-6}

# (op, first input, second input) -> why TF's float32 kernel disagrees with its float64 one
F32_TF_ARTIFACTS = {
    ("zeta", 2.0, -20.5): "TF's float32 direct sum stops after 9 terms, so q < -9 is wrong",
    ("zeta", 4.0, -100.25): "same: q < -9 in float32",
    ("zeta", 2.0, -1000.5): "same: q < -9 in float32",
    ("zeta", 3.0, -100000.25): "same: q < -9 in float32",
    ("polygamma", 1.0, -20.5): "zeta(2, -20.5) in float32: q < -9",
    ("polygamma", 3.0, -20.5): "zeta(4, -20.5) in float32: q < -9",
    ("polygamma", 3.0, -100000.25): "zeta(4, q) in float32: q < -9",
    ("polygamma", 35.0, 2.0): "35! overflows float32 (inf), the product 1.5e29 does not",
    ("polygamma", 200.0, 2.0): "float32: inf (200!) * 0 (zeta underflow) = nan; float64: -inf",
}
# float64 points where TF's value is not the function's: (op, a, b) -> the true value
F64_TF_ARTIFACTS = {
    # TF flushes the subnormal Euler-Maclaurin terms to zero; sum_k (1000 + k)^-100 by fsum:
    ("zeta", 100.0, 1000.0): 1.060934200387494e-299,
}


def f32_artifacts(op: str) -> np.ndarray:
    """Mask of the float32 table where TF's float32 kernel and its float64 kernel (on the same
    float32 inputs) disagree beyond float32 tolerance."""
    with np.errstate(over="ignore"):
        tf32, tf64 = DATA[f"{op}_f32"], DATA[f"{op}_f32in_f64"].astype(F32)
    with np.errstate(invalid="ignore"):
        close = np.isclose(tf32, tf64, equal_nan=True, **_F32_TOL)
    return ~close


def _inputs(op: str):
    first, second = {"zeta": ("zeta_x", "zeta_q"), "polygamma": ("polygamma_n", "polygamma_x")}[op]
    return DATA[first], DATA[second]


def expected(op: str, dtype) -> np.ndarray:
    """TF's table for `op` in `dtype`, with the documented TF artifacts replaced."""
    if dtype == F32:
        with np.errstate(over="ignore"):
            rounded = DATA[f"{op}_f32in_f64"].astype(F32)
        return np.where(f32_artifacts(op), rounded, DATA[f"{op}_f32"])
    want = DATA[f"{op}_f64"].copy()
    a, b = _inputs(op)
    for (name, x, y), value in F64_TF_ARTIFACTS.items():
        if name == op:
            want[(a == x) & (b == y)] = value
    return want


def _table_cases(op: str, build) -> list[OpCase]:
    a, b = _inputs(op)
    digamma = a == 0 if op == "polygamma" else np.zeros(a.shape, bool)
    parts = [(F64, ~digamma, "float64", _F64_TOL), (F32, None, "float32", _F32_TOL)]
    if digamma.any():
        parts.append((F64, digamma, "float64_order0", {"rtol": 1e-10, "atol": 1e-11}))
    cases = []
    for dt, rows, name, tol in parts:
        want = expected(op, dt)
        with np.errstate(over="ignore"):
            ins = [a.astype(dt), b.astype(dt)]
        if rows is not None:
            ins, want = [v[rows] for v in ins], want[rows]
        cases.append(OpCase(op.capitalize(), build, ins, lambda *_, w=want: w,
                            name=f"table_{name}", **tol))
    return cases


def _broadcast_cases(op: str, build, first: str, second: str) -> list[OpCase]:
    a, b = DATA[first], DATA[second]
    out = []
    for dt, key, tol in ((F64, "f64", _F64_TOL), (F32, "f32", _F32_TOL)):
        want = DATA[f"{op}_b_{key}"]
        out.append(OpCase(op.capitalize(), build, [a.astype(dt), b.astype(dt)],
                          lambda *_, w=want: w, name=f"broadcast_{key}", **tol))
    return out


def _scalar_cases() -> list[OpCase]:
    """A scalar operand (0-d) against a tensor, sliced out of the broadcast tables."""
    zq, pn = DATA["zeta_bq"][1], DATA["polygamma_bn"][2, 0]
    return [
        OpCase("Zeta", sp.zeta, [DATA["zeta_bx"], np.float64(zq)],
               lambda *_: DATA["zeta_b_f64"][:, 1:2], name="scalar_q", **_F64_TOL),
        OpCase("Polygamma", sp.polygamma, [np.float32(pn), DATA["polygamma_bx"].astype(F32)],
               lambda *_: DATA["polygamma_b_f32"][:, 2:3, :], name="scalar_n", **_F32_TOL),
    ]


def _mirror_pad_grad_cases() -> list[OpCase]:
    cases, i = [], 0
    while f"mpg_{i}_input" in DATA:
        x, p, mode = DATA[f"mpg_{i}_input"], DATA[f"mpg_{i}_paddings"], str(DATA[f"mpg_{i}_mode"])
        cases.append(OpCase("MirrorPadGrad", lambda g, pads, m=mode: sp.mirror_pad_grad(g, pads, m),
                            [x, p], lambda *_, w=DATA[f"mpg_{i}_out"]: w, rtol=0.0, atol=0.0,
                            name=f"{mode.lower()}_{x.dtype.name}_{'x'.join(map(str, x.shape))}"))
        i += 1
    return cases


CASES = (
    _table_cases("zeta", sp.zeta) + _table_cases("polygamma", sp.polygamma)
    + _broadcast_cases("zeta", sp.zeta, "zeta_bx", "zeta_bq")
    + _broadcast_cases("polygamma", sp.polygamma, "polygamma_bn", "polygamma_bx")
    + _scalar_cases() + _mirror_pad_grad_cases()
)
