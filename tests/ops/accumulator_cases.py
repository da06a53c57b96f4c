"""Accumulator scenarios shared by `make_accumulators_expected.py` (run with TensorFlow) and
`test_accumulators.py` (run with tensorweave). Nothing here imports either.

A scenario is a list of steps run in order in one session against one accumulator; `run`
records what each `take`/`num` step returns and the error (class, first message line) of any
failing step. The expected records live in tests/data/accumulators_expected.json.

`ops` gives the raw ops: acc(sparse, dtype, shape, reduction) → handle, apply(h, step, grad),
sparse_apply(h, step, indices, values, shape or None), take(h, n), sparse_take(h, n),
set_step(h, step), num(h) — each returning a graph element to run.
"""

from __future__ import annotations

import numpy as np

_R = np.random.RandomState(7)
_F = [_R.randn(2, 3).astype(np.float32) for _ in range(3)]

DENSE = {
    "mean_f32": ("float32", [2, 3], "MEAN", [("apply", 0, g) for g in _F] + [("num",),
                                                                            ("take", 3)]),
    "int32_has_no_kernel": ("int32", [3], "MEAN", [("apply", 0, [-7, 5, 3]), ("take", 1)]),
    "sum_f64": ("float64", None, "SUM", [("apply", 0, [1.5, 2.0]), ("apply", 0, [0.25, -1.0]),
                                         ("take", 2)]),
    "stale_dropped": ("float32", [2], "MEAN", [
        ("set", 2), ("apply", 1, [100.0, 100.0]), ("num",), ("apply", 2, [1.0, 2.0]),
        ("apply", 3, [3.0, 6.0]), ("num",), ("take", 2), ("apply", 2, [9.0, 9.0]), ("num",),
        ("apply", 3, [5.0, 5.0]), ("take", 1)]),
    "take_more_than_required": ("float32", [1], "MEAN", [
        ("apply", 0, [1.0]), ("apply", 0, [2.0]), ("apply", 0, [6.0]), ("take", 2)]),
    "bad_grad_shape": ("float32", [2], "MEAN", [("apply", 0, [1.0, 2.0, 3.0])]),
    "grad_shape_changes": ("float32", None, "MEAN", [("apply", 0, [1.0, 2.0]),
                                                     ("apply", 0, [1.0, 2.0, 3.0])]),
    "num_required_zero": ("float32", [2], "MEAN", [("apply", 0, [1.0, 2.0]), ("take", 0)]),
}

SPARSE = {
    "sorted_three": ("float32", [5, 2], "MEAN", [
        ("apply", 0, [0, 2], [[1, 1], [2, 2]], [5, 2]),
        ("apply", 0, [1, 2], [[3, 3], [4, 4]], [5, 2]),
        ("apply", 0, [2, 4], [[6, 6], [8, 8]], [5, 2]), ("num",), ("take", 3)]),
    "unsorted_merge": ("float32", [5, 2], "MEAN", [
        ("apply", 0, [3, 1], [[1, 1], [2, 2]], [5, 2]),
        ("apply", 0, [1, 3], [[10, 10], [20, 20]], [5, 2]), ("take", 2)]),
    "duplicates": ("float32", None, "MEAN", [
        ("apply", 0, [2, 0, 2], [[1, 2], [3, 4], [5, 6]], None),
        ("apply", 0, [2, 0, 2], [[7, 8], [9, 10], [11, 12]], None), ("take", 2)]),
    "sum_scalar_shape": ("float64", [], "SUM", [
        ("apply", 0, [4, 1], [[1.0], [2.0]], None), ("apply", 0, [1], [[0.5]], None),
        ("take", 2)]),
    "stale_dropped": ("float32", [4, 1], "MEAN", [
        ("set", 1), ("apply", 0, [0], [[9.0]], [4, 1]), ("num",),
        ("apply", 1, [3], [[2.0]], [4, 1]), ("take", 1)]),
    "index_out_of_range": ("float32", [3, 2], "MEAN", [
        ("apply", 0, [0, 3], [[1, 1], [2, 2]], [3, 2])]),
    "values_dim_mismatch": ("float32", [3, 2], "MEAN", [
        ("apply", 0, [0], [[1, 1, 1]], None)]),
    "dense_shape_mismatch": ("float32", [3, 2], "MEAN", [
        ("apply", 0, [0], [[1, 1]], [4, 2])]),
    "values_rank_changes": ("float32", None, "MEAN", [
        ("apply", 0, [0], [[1, 1]], None), ("apply", 0, [1], [[[1, 1]]], None)]),
}


def _error(e) -> list:
    """[class name, the message's first line] (TF 2 puts "Node: '...'" lines before it)."""
    msg = getattr(e, "message", str(e))
    if "\nNode: '" in msg:
        msg = msg.split("\nNode: '", 1)[1].split("\n", 1)[1]
    return [type(e).__name__, msg.split("\n")[0].strip()]


def run(tf, ops, sparse: bool, spec) -> list:
    """Runs one scenario in a fresh graph and session; returns one record per step."""
    dtype, shape, reduction, steps = spec
    out = []
    with tf.Graph().as_default():
        h = ops["acc"](sparse, getattr(tf, dtype), shape, reduction)
        with tf.Session() as sess:
            for step in steps:
                try:
                    out.append(_step(tf, ops, sparse, sess, h, dtype, step))
                except tf.errors.OpError as e:
                    out.append(["error", *_error(e)])
                    break
    return out


def _step(tf, ops, sparse, sess, h, dtype, step) -> list:
    kind = step[0]
    if kind == "set":
        sess.run(ops["set_step"](h, tf.constant(step[1], tf.int64)))
        return ["ok"]
    if kind == "num":
        return ["num", int(sess.run(ops["num"](h)))]
    if kind == "take":
        n = tf.constant(step[1], tf.int32)
        if sparse:
            idx, vals, shp = sess.run(ops["sparse_take"](h, n))
            return ["take", idx.tolist(), vals.tolist(), shp.tolist()]
        return ["take", sess.run(ops["take"](h, n)).tolist()]
    local = tf.constant(step[1], tf.int64)
    if sparse:
        _, _, idx, vals, shp = step
        vals = tf.constant(np.asarray(vals, dtype))
        shp = None if shp is None else tf.constant(shp, tf.int64)
        sess.run(ops["sparse_apply"](h, local, tf.constant(idx, tf.int64), vals, shp))
    else:
        sess.run(ops["apply"](h, local, tf.constant(np.asarray(step[2], dtype))))
    return ["ok"]
