"""Writes tests/data/grad_expected.npz: TensorFlow's gradients of `expressions.EXPRESSIONS`.

Run with the TensorFlow peer (not needed by the tests themselves):
    /root/.cache/tensorweave-tf-peer/bin/python tests/autodiff/make_expected.py
For each expression the file holds its inputs (`<name>/in<i>`) and the gradient of y with
respect to each x (`<name>/grad<i>`, IndexedSlices densified).
"""

from __future__ import annotations

import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

OUT = os.path.join(ROOT, "tests", "data", "grad_expected.npz")


def main() -> None:
    import tensorflow.compat.v1 as tf

    from tests.autodiff.expressions import EXPRESSIONS

    tf.disable_v2_behavior()
    arrays = {}
    for name, (build, inputs) in EXPRESSIONS.items():
        g = tf.Graph()
        with g.as_default():
            y, xs = build(tf, inputs)
            grads = [tf.convert_to_tensor(d) for d in tf.gradients(y, xs)]
            with tf.Session(graph=g) as sess:
                values = sess.run(grads)
        for i, a in enumerate(inputs):
            arrays[f"{name}/in{i}"] = a
        for i, v in enumerate(values):
            arrays[f"{name}/grad{i}"] = v
    np.savez(OUT, **arrays)
    print(f"wrote {len(arrays)} arrays to {OUT}")


if __name__ == "__main__":
    main()
