"""Writes tests/data/while_grad_expected.npz: TensorFlow's gradients through `tf.while_loop`.

Run with the TensorFlow peer (the tests themselves do not need TensorFlow):
    /root/.cache/tensorweave-tf-peer/bin/python tests/autodiff/make_while_expected.py

Each case of `CASES` is a builder `build(tf, *inputs) -> (feeds, y, xs)` written against the
TF1 API, so the same code builds the graph in TensorFlow (here) and in tensorweave (the test).
For each case the file holds its inputs (`<name>/in<i>`), y (`<name>/y`), the gradient of y
with respect to each x (`<name>/grad<i>`, IndexedSlices densified), and the number of stack
ops in TF's gradient graph (`<name>/pushes`, `<name>/pops`); for `GRAPH_DEF_CASES`, TF's
GraphDef (`<name>/graph_def`, serialized bytes) with the names of its feeds and fetches
(y, then the gradients). The `rnn_train` case holds the
losses of 5 GradientDescent steps on a tiny RNN (`rnn_train/losses`) and the final weights.
"""

from __future__ import annotations

import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

OUT = os.path.join(ROOT, "tests", "data", "while_grad_expected.npz")
F64 = np.float64


def _rand(seed, shape, lo=-1.0, hi=1.0, dtype=F64):
    return np.random.RandomState(seed).uniform(lo, hi, shape).astype(dtype)


def _ph(tf, a, name, static=True):
    return tf.placeholder(tf.as_dtype(a.dtype), a.shape if static else None, name=name)


# -- the cases: build(tf, *inputs) -> (feeds, y, xs) -----------------------------------------
def power(tf, x):
    """v = x^5 elementwise by repeated multiplication (x is a loop invariant and the init)."""
    xp = _ph(tf, x, "x")
    _, v = tf.while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, v * xp), [tf.constant(0), xp])
    return {xp: x}, tf.reduce_sum(v), [xp]


def trip_count(tf, x, w, n):
    """The trip count is fed (a counter against n); sin and an invariant weight in the body."""
    xp, wp, np_ = _ph(tf, x, "x"), _ph(tf, w, "w"), _ph(tf, n, "n")

    def body(i, v):
        return i + 1, tf.sin(v) * wp + xp

    _, v = tf.while_loop(lambda i, v: i < np_, body, [tf.constant(0), xp])
    return {xp: x, wp: w, np_: n}, tf.reduce_sum(v * v), [xp, wp]


def data_trip(tf, x, c):
    """The trip count depends on the data: grow v until its sum passes 20."""
    xp, cp = _ph(tf, x, "x"), _ph(tf, c, "c")
    v = tf.while_loop(lambda v: tf.reduce_sum(v) < 20.0, lambda v: v * cp + xp, [xp])
    return {xp: x, cp: c}, tf.reduce_sum(tf.square(v)), [xp, cp]


def rnn_gather(tf, xs, w, h0):
    """h = tanh(h @ W + xs[t]) over a gathered sequence (an IndexedSlices gradient of xs)."""
    xp, wp, hp = _ph(tf, xs, "xs"), _ph(tf, w, "w"), _ph(tf, h0, "h0")
    steps = xs.shape[0]

    def body(t, h):
        return t + 1, tf.tanh(tf.matmul(h, wp) + tf.gather(xp, t))

    _, h = tf.while_loop(lambda t, h: t < steps, body, [tf.constant(0), hp])
    return {xp: xs, wp: w, hp: h0}, tf.reduce_sum(h * h), [xp, wp, hp]


def invariant(tf, v0, c):
    """An outer matrix captured by the body, used twice per iteration (summed gradients)."""
    vp, cp = _ph(tf, v0, "v0"), _ph(tf, c, "c")

    def body(i, v):
        return i + 1, tf.matmul(v, cp) + tf.reduce_sum(cp * cp)

    _, v = tf.while_loop(lambda i, v: i < 3, body, [tf.constant(0), vp])
    return {vp: v0, cp: c}, tf.reduce_sum(v), [vp, cp]


def cond_in_body(tf, v0, w):
    """A tf.cond in the body, its predicate changing from one iteration to the next."""
    vp, wp = _ph(tf, v0, "v0"), _ph(tf, w, "w")

    def body(i, v):
        v = tf.cond(tf.reduce_sum(v) > 0.0, lambda: v * wp - 1.0, lambda: tf.sin(v) + wp)
        return i + 1, v

    _, v = tf.while_loop(lambda i, v: i < 6, body, [tf.constant(0), vp])
    return {vp: v0, wp: w}, tf.reduce_sum(v * v), [vp, wp]


def max_iter(tf, x):
    """maximum_iterations stops a loop whose condition stays true."""
    xp = _ph(tf, x, "x")
    v = tf.while_loop(lambda v: tf.reduce_sum(v) > -1e9, lambda v: v * xp + 0.5, [xp],
                      maximum_iterations=5)
    return {xp: x}, tf.reduce_sum(v), [xp]


def two_vars(tf, a0, b0, c):
    """Two loop variables; y reads only a, but b feeds a in every iteration."""
    ap, bp, cp = _ph(tf, a0, "a0"), _ph(tf, b0, "b0"), _ph(tf, c, "c")

    def body(i, a, b):
        return i + 1, a * b, b * 0.5 + cp

    _, a, _ = tf.while_loop(lambda i, a, b: i < 4, body, [tf.constant(0), ap, bp])
    return {ap: a0, bp: b0, cp: c}, tf.reduce_sum(a), [ap, bp, cp]


def unused_var(tf, a0, b0):
    """y reads only b; a feeds b but not the other way: a's Exit gets a zero gradient."""
    ap, bp = _ph(tf, a0, "a0"), _ph(tf, b0, "b0")

    def body(i, a, b):
        return i + 1, a * 0.5 + 1.0, tf.sin(b) + a

    _, _, b = tf.while_loop(lambda i, a, b: i < 3, body, [tf.constant(0), ap, bp])
    return {ap: a0, bp: b0}, tf.reduce_sum(b), [ap, bp]


def dynamic_shapes(tf, v0, c):
    """Placeholders of unknown shape: zeros and accumulators from runtime shapes."""
    vp, cp = _ph(tf, v0, "v0", static=False), _ph(tf, c, "c", static=False)

    def body(i, v):
        return i + 1, tf.tanh(v * cp) + cp

    _, v = tf.while_loop(lambda i, v: i < 3, body, [tf.constant(0), vp], parallel_iterations=1)
    return {vp: v0, cp: c}, tf.reduce_sum(v * v), [vp, cp]


def cond_passthrough(tf, v0, w, c, static=True):
    """Conds whose branches pass a loop variable or an outer tensor through unchanged, with
    predicates from the counter and from the data; a second loop variable."""
    vp, wp, cp = (_ph(tf, a, n, static) for a, n in ((v0, "v0"), (w, "w"), (c, "c")))

    def body(i, v, u):
        v2 = tf.cond(tf.equal(i % 2, 0), lambda: v * wp, lambda: cp)
        u2 = tf.cond(tf.reduce_sum(v) > 0.0, lambda: u, lambda: u * v)
        return i + 1, v2 + tf.sin(u2), u2

    _, v, u = tf.while_loop(lambda i, v, u: i < 5, body, [tf.constant(0), vp, vp])
    return {vp: v0, wp: w, cp: c}, tf.reduce_sum(v * u), [vp, wp, cp]


def cond_dynamic(tf, v0, w, c):
    """`cond_passthrough` on placeholders of unknown shape (zeros from saved shapes)."""
    return cond_passthrough(tf, v0, w, c, static=False)


def gather_dynamic(tf, params, v0):
    """Rows of a captured tensor of unknown shape gathered in each iteration (an IndexedSlices
    gradient accumulated across iterations, its shapes known only at run time)."""
    pp, vp = _ph(tf, params, "params", static=False), _ph(tf, v0, "v0", static=False)

    def body(i, v):
        return i + 1, v * tf.gather(pp, i % 3) + tf.gather(pp, 3 - i % 2)

    _, v = tf.while_loop(lambda i, v: i < 5, body, [tf.constant(0), vp])
    return {pp: params, vp: v0}, tf.reduce_sum(v), [pp, vp]


def nested(tf, x, v0):
    """A while loop inside a while loop (the inner one runs 2 times per outer iteration)."""
    xp, vp = _ph(tf, x, "x"), _ph(tf, v0, "v0")

    def inner(v):
        _, v = tf.while_loop(lambda j, v: j < 2, lambda j, v: (j + 1, tf.sin(v) * xp),
                             [tf.constant(0), v])
        return v

    _, v = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, inner(v) + v),
                         [tf.constant(0), vp])
    return {xp: x, vp: v0}, tf.reduce_sum(v), [xp, vp]


def nested_capture(tf, x, v0):
    """The inner loop reads a value of the outer body and runs i + 1 times in outer iteration
    i: both are saved per outer iteration."""
    xp, vp = _ph(tf, x, "x"), _ph(tf, v0, "v0")

    def outer_body(i, v):
        s = tf.tanh(v) * xp

        def inner_body(j, u):
            return j + 1, u * s + tf.sin(u)

        _, u = tf.while_loop(lambda j, u: j < i + 1, inner_body, [tf.constant(0), v])
        return i + 1, u + v

    _, v = tf.while_loop(lambda i, v: i < 3, outer_body, [tf.constant(0), vp])
    return {xp: x, vp: v0}, tf.reduce_sum(v * v), [xp, vp]


def nested_dynamic(tf, x, v0):
    """Nested loops on unknown shapes, the inner one with an unused loop variable: zeros and
    accumulators from shapes saved per outer iteration."""
    xp, vp = _ph(tf, x, "x", static=False), _ph(tf, v0, "v0", static=False)

    def outer_body(i, v):
        _, a, _ = tf.while_loop(lambda j, a, b: j < 2,
                                lambda j, a, b: (j + 1, a * b, b * xp + 0.1),
                                [tf.constant(0), v, v])
        return i + 1, a

    _, v = tf.while_loop(lambda i, v: i < 2, outer_body, [tf.constant(0), vp])
    return {xp: x, vp: v0}, tf.reduce_sum(v), [xp, vp]


CASES = {
    "power": (power, lambda: [_rand(1, (2, 3), 0.5, 1.5)]),
    "trip_count": (trip_count, lambda: [_rand(2, (3,)), _rand(3, (3,)), np.int32(5)]),
    "data_trip": (data_trip, lambda: [_rand(4, (2, 2), 0.5, 1.0), _rand(5, (2, 2), 1.1, 1.4)]),
    "rnn_gather": (rnn_gather, lambda: [_rand(6, (5, 2, 3)), _rand(7, (3, 3)) * 0.8,
                                        _rand(8, (2, 3))]),
    "invariant": (invariant, lambda: [_rand(9, (2, 3)), _rand(10, (3, 3)) * 0.5]),
    "cond_in_body": (cond_in_body, lambda: [_rand(11, (4,)), _rand(12, (4,))]),
    "max_iter": (max_iter, lambda: [_rand(13, (3,), 0.5, 1.2)]),
    "two_vars": (two_vars, lambda: [_rand(14, (3,)), _rand(15, (3,)), _rand(16, (3,))]),
    "unused_var": (unused_var, lambda: [_rand(17, (2,)), _rand(18, (2,))]),
    "dynamic_shapes": (dynamic_shapes, lambda: [_rand(19, (2, 3)), _rand(20, (2, 3))]),
    "nested": (nested, lambda: [_rand(21, (3,), 0.5, 1.5), _rand(22, (3,))]),
    "cond_passthrough": (cond_passthrough, lambda: [_rand(23, (3,)), _rand(24, (3,)),
                                                    _rand(25, (3,))]),
    "cond_dynamic": (cond_dynamic, lambda: [_rand(23, (3,)), _rand(24, (3,)), _rand(25, (3,))]),
    "gather_dynamic": (gather_dynamic, lambda: [_rand(26, (4, 3)), _rand(27, (3,))]),
    "nested_capture": (nested_capture, lambda: [_rand(28, (3,), 0.5, 1.0), _rand(29, (3,))]),
    "nested_dynamic": (nested_dynamic, lambda: [_rand(35, (3,), 0.5, 1.0), _rand(36, (3,))]),
}
# TF's own gradient graphs of these cases are stored too, to be imported and run as they are.
GRAPH_DEF_CASES = ("power", "cond_in_body")


# -- training a tiny RNN -----------------------------------------------------------------------
def rnn_train_inputs():
    f32 = np.float32
    return {"xs": _rand(30, (4, 2, 2), dtype=f32), "target": _rand(31, (2, 3), dtype=f32),
            "w": _rand(32, (3, 3), dtype=f32) * 0.5, "u": _rand(33, (2, 3), dtype=f32),
            "b": _rand(34, (3,), dtype=f32) * 0.1}


def rnn_train(tf, inputs, steps=5, lr=0.1):
    """Losses (before each step) and final weights of GradientDescent on an RNN loss."""
    w = tf.Variable(inputs["w"], name="w")
    u = tf.Variable(inputs["u"], name="u")
    b = tf.Variable(inputs["b"], name="b")
    xs = tf.constant(inputs["xs"])
    n = inputs["xs"].shape[0]

    def body(t, h):
        return t + 1, tf.tanh(tf.matmul(h, w) + tf.matmul(tf.gather(xs, t), u) + b)

    h0 = tf.zeros([2, 3])
    _, h = tf.while_loop(lambda t, h: t < n, body, [tf.constant(0), h0])
    loss = tf.reduce_mean(tf.square(h - inputs["target"]))
    train = tf.train.GradientDescentOptimizer(lr).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            losses.append(sess.run([loss, train])[0])
        final = sess.run([loss, w, u, b])
    return np.asarray(losses + [final[0]], np.float32), final[1:]


# -- writing -----------------------------------------------------------------------------------
def _stack_counts(graph) -> tuple[int, int]:
    types = [op.type for op in graph.get_operations()]
    return types.count("StackPushV2"), types.count("StackPopV2")


def _run_case(tf, build, inputs) -> dict:
    g = tf.Graph()
    with g.as_default():
        feeds, y, xs = build(tf, *inputs)
        grads = [tf.convert_to_tensor(d) for d in tf.gradients(y, xs)]
        with tf.Session(graph=g) as sess:
            values = sess.run([y] + grads, feeds)
        pushes, pops = _stack_counts(g)
    out = {f"in{i}": a for i, a in enumerate(inputs)}
    out["y"] = values[0]
    out.update({f"grad{i}": v for i, v in enumerate(values[1:])})
    out["pushes"], out["pops"] = np.int32(pushes), np.int32(pops)
    out["graph_def"] = np.frombuffer(g.as_graph_def().SerializeToString(), np.uint8)
    out["feeds"] = np.array([p.name for p in feeds])
    out["fetches"] = np.array([t.name for t in [y] + grads])
    return out


def main() -> None:
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    arrays = {}
    for name, (build, make_inputs) in CASES.items():
        for key, value in _run_case(tf, build, make_inputs()).items():
            if key in ("graph_def", "feeds", "fetches") and name not in GRAPH_DEF_CASES:
                continue
            arrays[f"{name}/{key}"] = value
    with tf.Graph().as_default():
        losses, weights = rnn_train(tf, rnn_train_inputs())
    arrays["rnn_train/losses"] = losses
    for key, value in zip(("w", "u", "b"), weights):
        arrays[f"rnn_train/{key}"] = value
    np.savez(OUT, **arrays)
    print(f"wrote {len(arrays)} arrays to {OUT}")


if __name__ == "__main__":
    main()
