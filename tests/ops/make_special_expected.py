"""Writes tests/data/special_expected.npz with TensorFlow: Zeta and Polygamma on tables of
values (regular grids and edge cases: poles, q <= 0, huge n, inf, nan) in float64 and float32,
on broadcast shapes, their gradients, and MirrorPadGrad's values and error messages.

    ~/.cache/tensorweave-tf-peer/bin/python tests/ops/make_special_expected.py

Keys (f32 tables take the float64 inputs rounded to float32):
  zeta_x, zeta_q -> zeta_f64, zeta_f32, zeta_f32in_f64 (float64 TF on the float32-rounded
  inputs); polygamma_n, polygamma_x -> polygamma_f64, polygamma_f32, polygamma_f32in_f64;
  zeta_bx, zeta_bq -> zeta_b_f64, zeta_b_f32; polygamma_bn, polygamma_bx -> polygamma_b_*;
  grad_*: gradients; mpg_<i>_{input,paddings,mode,out}: MirrorPadGrad; mpg_err_*: errors.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402
from tensorflow.python.ops import gen_array_ops  # noqa: E402

tf.disable_v2_behavior()
OUT = Path(__file__).resolve().parents[1] / "data" / "special_expected.npz"
INF, NAN = np.inf, np.nan

ZETA_EDGES = [
    (1, 1), (1, -2), (0.5, 1), (-3, 2), (1.0000001, 1), (1.001, 0.3), (0.99999, 1),
    (2, 0), (3, 0), (4, -1), (2.5, 0), (2, -1.5), (3, -1.5), (2.5, -1.5), (3, -2.5), (4, -2),
    (5, -3.7), (2, -20.5), (3, -20.5), (4, -100.25), (2, -1000.5), (3, -100000.25), (6, -0.0),
    (2, -0.0), (1.5, -0.0), (INF, 0), (INF, -1.5), (INF, 0.5), (INF, 1), (INF, 2), (-INF, 1),
    (2, -INF), (3, -INF), (2, INF), (1e20, 0), (5, -1e-9), (2, 1e-8), (3, 1e-300), (6, 1e300),
    (NAN, 1), (2, NAN), (150, 0.5), (300, 0.9), (2, 1e-200), (1.5, 1e12),
]
POLYGAMMA_EDGES = [
    (0, 0), (0, -1), (0, -1e-9), (1, 0), (2, 0), (1, -3), (2, -3), (3, -3), (-1, 1), (0.5, 1),
    (1.5, 2), (NAN, 1), (1, NAN), (0, NAN), (INF, 1), (-INF, 1), (1e20, 2), (200, 2),
    (200, 0.5), (170, 1.5), (171, 1.5), (30, 0.5), (35, 2), (34, 2), (1, INF), (0, INF),
    (0, -INF), (1, -INF), (2, -INF), (1, 1e-300), (0, 1e-300), (4, 1e-20), (3, -100000.25),
    (2, -1000.5), (1, -20.5), (2, -3.5), (0, -2.5), (0, 1.4616321449683622),
]


def _grid(a_values, b_values):
    return list(itertools.product(a_values, b_values))


def _tables():
    zeta = _grid([1.5, 2, 2.5, 3, 4, 7.3, 12, 30, 60, 100],
                 [0.1, 0.5, 1, 1.7, 3, 9.5, 25, 1e3, 1e5]) + ZETA_EDGES
    poly = (_grid([0, 1, 2, 3, 4, 7, 10, 20], [0.1, 0.5, 1, 1.4616, 2.5, 7, 31.3, 1e4])
            + _grid([0, 1, 2, 3], [-0.5, -1.5, -2.75, -20.5]) + POLYGAMMA_EDGES)
    return np.array(zeta, np.float64).T, np.array(poly, np.float64).T


def _run(fn, a, b):
    with tf.Graph().as_default(), tf.Session() as sess:
        return sess.run(fn(tf.constant(a), tf.constant(b)))


def _table(out, name, fn, a, b) -> None:
    with np.errstate(over="ignore"):
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
    out[f"{name}_f64"] = _run(fn, a, b)
    out[f"{name}_f32"] = _run(fn, a32, b32)
    out[f"{name}_f32in_f64"] = _run(fn, a32.astype(np.float64), b32.astype(np.float64))


def _special(out) -> None:
    (out["zeta_x"], out["zeta_q"]), (out["polygamma_n"], out["polygamma_x"]) = _tables()
    _table(out, "zeta", tf.math.zeta, out["zeta_x"], out["zeta_q"])
    _table(out, "polygamma", tf.math.polygamma, out["polygamma_n"], out["polygamma_x"])
    out["zeta_bx"] = np.array([[1.5], [2.0], [3.25]])
    out["zeta_bq"] = np.array([0.25, 1.0, 2.5, 10.0])
    _table(out, "zeta_b", tf.math.zeta, out["zeta_bx"], out["zeta_bq"])
    out["polygamma_bn"] = np.array([[0.0], [1.0], [2.0], [3.0]])
    out["polygamma_bx"] = np.linspace(0.3, 6.1, 10).reshape(2, 1, 5)
    _table(out, "polygamma_b", tf.math.polygamma, out["polygamma_bn"], out["polygamma_bx"])


def _gradients(out) -> None:
    """d sum(f(a, b)) / d b for Polygamma and Zeta (broadcast), and Digamma's d/dx."""
    with tf.Graph().as_default(), tf.Session() as sess:
        n, x = tf.constant([[1.0], [2.0]], tf.float64), tf.constant([0.7, 1.9, 3.3], tf.float64)
        zx, zq = tf.constant([[2.5], [3.0]], tf.float64), tf.constant([0.6, 1.2, 4.0], tf.float64)
        d = tf.constant([[0.4, 1.1, 2.7], [5.2, 0.9, 1.6]], tf.float64)
        grads = [tf.gradients(tf.math.polygamma(n, x), [n, x]),
                 tf.gradients(tf.math.zeta(zx, zq), [zx, zq]), tf.gradients(tf.digamma(d), d)]
        assert grads[0][0] is None and grads[1][0] is None
        out["grad_polygamma_dx"], out["grad_zeta_dq"], out["grad_digamma_dx"] = sess.run(
            [grads[0][1], grads[1][1], grads[2][0]])
        out["grad_polygamma_n"], out["grad_polygamma_x"] = sess.run([n, x])
        out["grad_zeta_x"], out["grad_zeta_q"], out["grad_digamma_x"] = sess.run([zx, zq, d])


MIRROR_CASES = [
    # input, paddings, mode
    (np.arange(1, 10, dtype=np.int32).reshape(3, 3), np.int32([[0, 1], [0, 1]]), "SYMMETRIC"),
    (np.linspace(-2, 3, 42, dtype=np.float32).reshape(6, 7), np.int32([[1, 2], [2, 1]]),
     "REFLECT"),
    (np.linspace(-1, 1, 120).reshape(4, 6, 5), np.int32([[1, 1], [0, 2], [2, 0]]), "SYMMETRIC"),
    (np.linspace(0.5, 4, 7), np.int64([[2, 2]]), "REFLECT"),
    (np.arange(18, dtype=np.int64).reshape(2, 9) * 3 - 7, np.int32([[0, 0], [3, 3]]),
     "SYMMETRIC"),
    (np.linspace(-1, 2, 12, dtype=np.float32).reshape(3, 4), np.int32([[0, 0], [0, 0]]),
     "REFLECT"),
    (np.linspace(-1, 2, 28, dtype=np.float32).reshape(1, 7, 4), np.int64([[0, 0], [2, 2], [1, 0]]),
     "REFLECT"),
    (np.linspace(-1, 1, 20, dtype=np.float16).reshape(4, 5), np.int32([[1, 1], [1, 2]]),
     "SYMMETRIC"),
    ((np.arange(12) + 1j * np.arange(12)[::-1]).reshape(3, 4), np.int32([[1, 0], [1, 1]]),
     "SYMMETRIC"),
    (np.float64(2.5), np.zeros((0, 2), np.int32), "REFLECT"),
]
MIRROR_ERRORS = [
    # input shape, paddings, mode
    ((3, 3), [[1, 1], [0, 0]], "REFLECT"), ((3, 3), [[2, 0], [0, 0]], "REFLECT"),
    ((4,), [[2, 1]], "SYMMETRIC"), ((3,), [[2, 1]], "SYMMETRIC"), ((4,), [[-1, 1]], "SYMMETRIC"),
    ((0,), [[0, 0]], "SYMMETRIC"), ((3,), [[1, 0], [0, 0]], "SYMMETRIC"),
    ((3,), [1, 0], "SYMMETRIC"), ((3,), [[1, 0, 0]], "SYMMETRIC"),
]


def _mirror_pad_grad(out) -> None:
    with tf.Graph().as_default(), tf.Session() as sess:
        for i, (x, p, mode) in enumerate(MIRROR_CASES):
            y = gen_array_ops.mirror_pad_grad(tf.constant(x), tf.constant(p), mode=mode)
            out[f"mpg_{i}_input"], out[f"mpg_{i}_paddings"] = x, p
            out[f"mpg_{i}_mode"], out[f"mpg_{i}_out"] = np.array(mode), sess.run(y)
        messages = [_error(sess, *case) for case in MIRROR_ERRORS]
    out["mpg_err_shape"] = np.array([repr(c[0]) for c in MIRROR_ERRORS])
    out["mpg_err_paddings"] = np.array([repr(c[1]) for c in MIRROR_ERRORS])
    out["mpg_err_mode"] = np.array([c[2] for c in MIRROR_ERRORS])
    out["mpg_err_message"] = np.array(messages)


def _error(sess, shape, paddings, mode) -> str:
    x, p = tf.placeholder(tf.float32, None), tf.placeholder(tf.int32, None)
    try:
        sess.run(gen_array_ops.mirror_pad_grad(x, p, mode=mode),
                 {x: np.ones(shape), p: paddings})
    except tf.errors.InvalidArgumentError as e:
        # the kernel's own message: the line before the "[[{{node ...}}]]" trailer
        lines = [ln for ln in e.message.splitlines() if ln.strip()]
        return lines[lines.index(next(ln for ln in lines if "{{node" in ln)) - 1]
    raise AssertionError(f"no error for {shape} {paddings} {mode}")


def _mirror_pad_gradients(out) -> None:
    """d sum(w * MirrorPad(x)) / dx and d sum(w * MirrorPadGrad(g)) / dg (second order)."""
    x = np.linspace(-1, 1, 20).reshape(4, 5)
    with tf.Graph().as_default(), tf.Session() as sess:
        for mode, pads in (("REFLECT", [[1, 2], [3, 0]]), ("SYMMETRIC", [[2, 1], [0, 4]])):
            xt = tf.constant(x)
            padded = tf.pad(xt, pads, mode=mode)
            w = tf.constant(np.arange(np.prod(padded.shape.as_list()), dtype=np.float64)
                            .reshape(padded.shape.as_list()))
            folded = gen_array_ops.mirror_pad_grad(w, tf.constant(pads), mode=mode)
            out[f"grad_mirror_{mode}_dx"] = sess.run(tf.gradients(padded * w, xt)[0])
            out[f"grad_mirror_{mode}_paddings"] = np.array(pads, np.int32)
            dw = tf.gradients(folded * xt, w)[0]
            out[f"grad_mirror_{mode}_dg"] = sess.run(dw)
    out["grad_mirror_x"] = x


def main() -> None:
    out: dict = {}
    _special(out)
    _gradients(out)
    _mirror_pad_grad(out)
    _mirror_pad_gradients(out)
    np.savez_compressed(OUT, **out)
    print(f"wrote {OUT} ({len(out)} arrays)")


if __name__ == "__main__":
    main()
