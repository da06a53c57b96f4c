"""Writes tests/data/igamma_expected.npz with TensorFlow: Igamma, Igammac, IgammaGradA,
Betainc and RandomGammaGrad on tables of values (grids and edge cases: zeros, negatives, inf,
nan, huge and tiny parameters) in float64 and float32, the gradients TF registers for them, and
the shape-function errors of Betainc.

    ~/.cache/tensorweave-tf-peer/bin/python tests/ops/make_igamma_expected.py

Keys: igamma_a, igamma_x -> {igamma, igammac, igamma_grad_a, random_gamma_grad}_{f64,f32}
(the f32 tables take the float64 inputs rounded to float32, and `*_f32in_f64` is TF's float64
kernel on those rounded inputs); betainc_a, betainc_b, betainc_x -> betainc_{f64,f32,
f32in_f64}; grad_*: gradients; err_*: Betainc's construction errors.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402
from tensorflow.python.ops import gen_math_ops, gen_random_ops  # noqa: E402

tf.disable_v2_behavior()
OUT = Path(__file__).resolve().parents[1] / "data" / "igamma_expected.npz"
INF, NAN = np.inf, np.nan

IGAMMA_EDGES = [
    (1, 0), (0.5, 0), (0, 1), (0, 0), (-1, 1), (1, -1), (-0.5, -0.5), (1, INF), (0.3, INF),
    (INF, 1), (INF, INF), (NAN, 1), (1, NAN), (1e-10, 1), (1e-300, 0.5), (1e-8, 1e-8),
    (1e6, 1e6), (1e6, 999000), (1e4, 1e4 + 100), (170, 171), (300, 250), (1e-3, 40),
    (50, 1e-3), (2.5, 1e-300), (0.2, 700), (5, 800), (1, 1), (1.0000001, 1), (1e3, 1),
]
BETAINC_EDGES = [
    (1, 1, 0), (1, 1, 1), (2, 3, 0), (2, 3, 1), (0, 1, 0.5), (1, 0, 0.5), (-1, 1, 0.5),
    (1, 1, -0.1), (1, 1, 1.1), (NAN, 1, 0.5), (1, NAN, 0.5), (1, 1, NAN), (INF, 1, 0.5),
    (1, INF, 0.5), (1e-8, 1, 0.5), (1, 1e-8, 0.5), (1e-8, 1e-8, 0.3), (1e4, 1e4, 0.5),
    (1e4, 1e4, 0.49), (1e5, 3, 0.99999), (3, 1e5, 1e-5), (200, 200, 0.45), (0.5, 0.5, 1e-12),
    (0.5, 0.5, 1 - 1e-12), (50, 0.5, 0.999), (0.5, 50, 0.001), (1, 1, 0.5), (2, 2, 0.5),
    (300, 1.5, 0.997), (1.5, 300, 0.003), (2, 5, 1e-300),
]


def _tables():
    ig = (list(itertools.product([0.01, 0.3, 1, 1.7, 2.5, 5, 12.3, 40, 200, 3000],
                                 [1e-4, 0.05, 0.5, 1, 2.2, 4.9, 11, 30, 120, 2500]))
          + IGAMMA_EDGES)
    bi = (list(itertools.product([0.05, 0.5, 1, 2.7, 10, 85], [0.1, 0.7, 1, 3.2, 20, 130],
                                 [1e-3, 0.1, 0.35, 0.5, 0.8, 0.97]))
          + BETAINC_EDGES)
    return np.array(ig, np.float64).T, np.array(bi, np.float64).T


def _run(fetch_fn, *arrays):
    with tf.Graph().as_default(), tf.Session() as sess:
        return sess.run(fetch_fn(*[tf.constant(a) for a in arrays]))


def _three(out, name, fn, *arrays) -> None:
    with np.errstate(over="ignore"):
        rounded = [a.astype(np.float32) for a in arrays]
    out[f"{name}_f64"] = _run(fn, *arrays)
    out[f"{name}_f32"] = _run(fn, *rounded)
    out[f"{name}_f32in_f64"] = _run(fn, *[r.astype(np.float64) for r in rounded])


def _values(out) -> None:
    (a, x), (ba, bb, bx) = _tables()
    out["igamma_a"], out["igamma_x"] = a, x
    out["betainc_a"], out["betainc_b"], out["betainc_x"] = ba, bb, bx
    _three(out, "igamma", tf.math.igamma, a, x)
    _three(out, "igammac", tf.math.igammac, a, x)
    _three(out, "igamma_grad_a", gen_math_ops.igamma_grad_a, a, x)
    _three(out, "random_gamma_grad", gen_random_ops.random_gamma_grad, a, x)
    _three(out, "betainc", tf.math.betainc, ba, bb, bx)
    # broadcasting: Igamma broadcasts; Betainc takes scalars beside same-shaped tensors
    out["b_a"] = np.array([[0.5], [2.0], [7.5]])
    out["b_x"] = np.array([0.1, 1.0, 3.0, 9.0])
    _three(out, "igamma_b", tf.math.igamma, out["b_a"], out["b_x"])
    _three(out, "igammac_b", tf.math.igammac, out["b_a"], out["b_x"])
    out["bs_x"] = np.linspace(0.05, 0.95, 6).reshape(2, 3)
    _three(out, "betainc_s", tf.math.betainc, np.float64(2.5), np.float64(0.8), out["bs_x"])


def _gradients(out) -> None:
    """d sum(w * f) / d inputs for Igamma, Igammac (broadcast), Betainc (x only)."""
    with tf.Graph().as_default(), tf.Session() as sess:
        a, x = tf.constant([[0.5], [2.0], [7.5]], tf.float64), tf.constant([0.3, 1.5, 8.0],
                                                                             tf.float64)
        w = tf.constant(np.arange(1.0, 10.0).reshape(3, 3))
        ga = tf.gradients(tf.math.igamma(a, x) * w, [a, x])
        gc = tf.gradients(tf.math.igammac(a, x) * w, [a, x])
        ba, bb = tf.constant([1.5, 0.7, 3.0], tf.float64), tf.constant([2.0, 0.9, 1.0],
                                                                       tf.float64)
        bx = tf.constant([0.2, 0.6, 0.9], tf.float64)
        gb = tf.gradients(tf.math.betainc(ba, bb, bx) * w[0], [ba, bb, bx])
        assert gb[0] is None and gb[1] is None
        out["grad_igamma_da"], out["grad_igamma_dx"] = sess.run(ga)
        out["grad_igammac_da"], out["grad_igammac_dx"] = sess.run(gc)
        out["grad_betainc_dx"] = sess.run(gb[2])
        # a reparameterized Gamma sample: d sample / d alpha through RandomGammaGrad
        alpha = tf.constant([0.7, 2.0, 9.0], tf.float64)
        s = tf.random.gamma([4], alpha, dtype=tf.float64, seed=3)
        sv, gv = sess.run([s, tf.gradients(s, alpha)[0]])
        out["grad_rg_alpha"], out["grad_rg_sample"], out["grad_rg_dalpha"] = (
            sess.run(alpha), sv, gv)


BETAINC_ERRORS = [((2,), (3,), (2,)), ((2, 2), (), (4,)), ((), (3,), (2,))]


def _errors(out) -> None:
    messages = []
    for shapes in BETAINC_ERRORS:
        with tf.Graph().as_default():
            try:
                tf.math.betainc(*[tf.zeros(s, tf.float32) for s in shapes])
            except ValueError as e:
                messages.append(str(e))
            else:
                raise AssertionError(f"no error for {shapes}")
    out["err_betainc_shapes"] = np.array([repr(s) for s in BETAINC_ERRORS])
    out["err_betainc_message"] = np.array(messages)


def main() -> None:
    out: dict = {}
    _values(out)
    _gradients(out)
    _errors(out)
    np.savez(OUT, **out)
    print(f"wrote {OUT} ({len(out)} arrays)")


if __name__ == "__main__":
    main()
