"""Writes tests/data/check_expected.json with TensorFlow: StringFormat texts (what tf.print
prints) for a table of tensors and summarize values, and the messages of failing asserts
(static and at run time).

    ~/.cache/tensorweave-tf-peer/bin/python tests/ops/make_check_expected.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
OUT = Path(__file__).resolve().parents[1] / "data" / "check_expected.json"

# (name, numpy value, summarize)
FORMAT_CASES = [
    ("int_matrix", np.arange(6, dtype=np.int32).reshape(2, 3), 3),
    ("long_vector", np.arange(10, dtype=np.int64), 3),
    ("long_vector_s2", np.arange(10, dtype=np.int64), 2),
    ("long_vector_all", np.arange(10, dtype=np.int64), -1),
    ("floats", np.array([0.5, -1.25, 3.0, 1e-5, 123456.0], np.float32), 3),
    ("float64_scalar", np.float64(0.1), 3),
    ("bools", np.array([True, False, True]), 3),
    ("strings", np.array([b"a", b"bc"]), 3),
    ("string_scalar", np.array(b"hello"), 3),
    ("cube", np.arange(24, dtype=np.int32).reshape(2, 3, 4), 3),
    ("big_matrix", np.arange(70, dtype=np.int32).reshape(7, 10), 2),
    ("empty", np.zeros((0,), np.float32), 3),
]


def _formats(sess):
    out = {}
    for name, value, summarize in FORMAT_CASES:
        t = tf.strings.format("{}", [tf.constant(value)], summarize=summarize)
        out[name] = {"value": value.tolist() if value.dtype.kind != "S" else
                     [v.decode() for v in np.atleast_1d(value)],
                     "dtype": str(value.dtype), "shape": list(value.shape),
                     "summarize": summarize, "text": sess.run(t).decode()}
    return out


def _asserts(sess):
    out = {}
    x = tf.placeholder_with_default(np.array([1, 2, 3], np.int32), [3], name="x")
    cases = {
        "equal": lambda: tf.assert_equal(x, [1, 0, 3], message="msg"),
        "none_equal": lambda: tf.assert_none_equal(x, [0, 2, 0]),
        "less": lambda: tf.assert_less(x, 3),
        "greater_equal": lambda: tf.assert_greater_equal(x, [2, 2, 2]),
        "positive": lambda: tf.assert_positive(x - 2),
        "near": lambda: tf.assert_near(tf.cast(x, tf.float32), [1.0, 2.5, 3.0]),
        "rank": lambda: tf.assert_rank(tf.placeholder_with_default(x, None), 2),
    }
    for name, make in cases.items():
        op = make()
        try:
            sess.run(op)
            out[name] = None
        except tf.errors.InvalidArgumentError as e:
            out[name] = next(line.strip() for line in e.message.split("\n")
                             if "assertion failed" in line)
    for name, make in {"static_equal": lambda: tf.assert_equal([1, 2], [1, 3]),
                       "static_less": lambda: tf.assert_less(2, 1)}.items():
        try:
            make()
            out[name] = None
        except tf.errors.InvalidArgumentError as e:
            out[name] = e.message
    return out


def main() -> None:
    with tf.Graph().as_default(), tf.Session() as sess:
        data = {"format": _formats(sess), "asserts": _asserts(sess)}
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
