"""Writes tests/data/tensor_array_grad_expected.npz: TensorFlow's gradients through TensorArrays.

Run with the TensorFlow peer (the tests themselves do not need TensorFlow):
    /root/.cache/tensorweave-tf-peer/bin/python tests/autodiff/make_tensor_array_expected.py

TF1 graph mode with control flow v1 (`disable_control_flow_v2`), so TF builds TensorArrayV3
ops and gradient loops with stacks, as tensorweave does. Each case of `CASES` is a builder
`build(tf, *inputs) -> (feeds, y, xs)` written against the TF1 API, run by both. For each case
the file holds its inputs (`<name>/in<i>`), y (`<name>/y`), the gradient of y with respect to
each x (`<name>/grad<i>`), and how many ops of each TensorArray/stack type TF's graph has
(`<name>/count/<OpType>`); for `GRAPH_DEF_CASES`, TF's GraphDef (`<name>/graph_def`) with the
names of its feeds and fetches. `rnn_train/*` holds the losses of 5 GradientDescent steps on a
TensorArray RNN and the final weights.
"""

from __future__ import annotations

import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

OUT = os.path.join(ROOT, "tests", "data", "tensor_array_grad_expected.npz")
F64 = np.float64
COUNTED = ("TensorArrayV3", "TensorArrayGradV3", "TensorArrayReadV3", "TensorArrayWriteV3",
           "TensorArrayGatherV3", "TensorArrayScatterV3", "TensorArrayConcatV3",
           "TensorArraySplitV3", "StackPushV2", "StackPopV2")


def _rand(seed, shape, lo=-1.0, hi=1.0, dtype=F64):
    return np.random.RandomState(seed).uniform(lo, hi, shape).astype(dtype)


def _ph(tf, a, name, static=True):
    return tf.placeholder(tf.as_dtype(a.dtype), a.shape if static else None, name=name)


# -- without loops -----------------------------------------------------------------------------
def read_write(tf, x):
    """Unstack, read elements (one twice, clear_after_read=False), write them elsewhere, stack."""
    xp = _ph(tf, x, "x")
    ta = tf.TensorArray(tf.float64, size=3, clear_after_read=False).unstack(xp)
    r0, r1 = ta.read(0), ta.read(1)
    out = tf.TensorArray(tf.float64, size=2).write(0, r1 * r0).write(1, tf.sin(r1) + ta.read(2))
    return {xp: x}, tf.reduce_sum(tf.square(out.stack())), [xp]


def gather_repeat(tf, x):
    """Gather with a repeated index: the gradient array sums the two writes to index 0."""
    xp = _ph(tf, x, "x")
    ta = tf.TensorArray(tf.float64, size=4, clear_after_read=False).unstack(xp)
    g = ta.gather([0, 2, 0, 3])
    return {xp: x}, tf.reduce_sum(g * g * tf.constant([1.0, 2.0, 3.0, 4.0], tf.float64)[:, None]), \
        [xp]


def concat_split(tf, x, w):
    """Split into pieces of lengths 1, 2, 3; read one piece; concat the rest back."""
    xp, wp = _ph(tf, x, "x"), _ph(tf, w, "w")
    ta = tf.TensorArray(tf.float64, size=3, infer_shape=False, clear_after_read=False)
    ta = ta.split(xp, [1, 2, 3])
    piece = ta.read(1)
    y = tf.reduce_sum(tf.tanh(ta.concat()) * wp) + tf.reduce_sum(piece * piece)
    return {xp: x, wp: w}, y, [xp, wp]


def partial_read(tf, x):
    """Only one element is read, on a placeholder of unknown shape: the gradient array gives
    zeros of each forward element's shape for the others."""
    xp = _ph(tf, x, "x", static=False)
    ta = tf.TensorArray(tf.float64, size=tf.shape(xp)[0]).unstack(xp)
    return {xp: x}, tf.reduce_sum(tf.exp(ta.read(1))), [xp]


# -- functional ops ----------------------------------------------------------------------------
def map_fn(tf, x, w):
    """map_fn with a captured weight."""
    xp, wp = _ph(tf, x, "x"), _ph(tf, w, "w")
    y = tf.map_fn(lambda e: tf.tanh(tf.matmul(e, wp)), xp)
    return {xp: x, wp: w}, tf.reduce_sum(y * y), [xp, wp]


def map_fn_struct(tf, a, b):
    """map_fn over a pair, returning a pair (two input and two output TensorArrays)."""
    ap, bp = _ph(tf, a, "a"), _ph(tf, b, "b")
    p, s = tf.map_fn(lambda ab: (ab[0] * ab[1], tf.sin(ab[0]) + ab[1]), (ap, bp),
                     dtype=(tf.float64, tf.float64))
    return {ap: a, bp: b}, tf.reduce_sum(p * s), [ap, bp]


def map_fn_dynamic(tf, x, w):
    """map_fn on placeholders of unknown shape."""
    xp, wp = _ph(tf, x, "x", static=False), _ph(tf, w, "w", static=False)
    y = tf.map_fn(lambda e: tf.sin(e) * wp, xp)
    return {xp: x, wp: w}, tf.reduce_sum(y * y), [xp, wp]


def scan(tf, x):
    """scan without an initializer (element 0 is read outside the loop)."""
    xp = _ph(tf, x, "x")
    y = tf.scan(lambda a, e: a * e + tf.sin(a), xp)
    return {xp: x}, tf.reduce_sum(y * y), [xp]


def scan_init_reverse(tf, x, a0, w):
    """A reversed scan from an initializer, with a captured weight."""
    xp, ap, wp = _ph(tf, x, "x"), _ph(tf, a0, "a0"), _ph(tf, w, "w")
    y = tf.scan(lambda a, e: tf.tanh(a * wp + e), xp, initializer=ap, reverse=True)
    return {xp: x, ap: a0, wp: w}, tf.reduce_sum(y * tf.cos(y)), [xp, ap, wp]


def foldl(tf, x, w):
    xp, wp = _ph(tf, x, "x"), _ph(tf, w, "w")
    y = tf.foldl(lambda a, e: tf.sin(a) * wp + e, xp)
    return {xp: x, wp: w}, tf.reduce_sum(y * y), [xp, wp]


def foldr(tf, x, a0):
    xp, ap = _ph(tf, x, "x"), _ph(tf, a0, "a0")
    y = tf.foldr(lambda a, e: a * e + 0.5, xp, initializer=ap)
    return {xp: x, ap: a0}, tf.reduce_sum(y), [xp, ap]


def nested_map(tf, x, w):
    """map_fn inside map_fn: the inner TensorArrays are made in every outer iteration (their
    handles are saved per outer iteration)."""
    xp, wp = _ph(tf, x, "x"), _ph(tf, w, "w")
    y = tf.map_fn(lambda row: tf.map_fn(lambda e: tf.sin(e * wp), row), xp)
    return {xp: x, wp: w}, tf.reduce_sum(y * y), [xp, wp]


# -- hand-written loops ------------------------------------------------------------------------
def _rnn(tf, xp, wxp, whp, bp, static=True):
    """dynamic_rnn's loop: inputs unstacked into a TensorArray read at time t, outputs written
    at t and stacked; returns (outputs, final state)."""
    steps = xp.shape[0].value if static else tf.shape(xp)[0]
    input_ta = tf.TensorArray(tf.float64, size=steps, name="input_ta").unstack(xp)
    output_ta = tf.TensorArray(tf.float64, size=steps, name="output_ta")
    h0 = tf.zeros_like(tf.matmul(xp[0], wxp))

    def body(t, h, out):
        h = tf.tanh(tf.matmul(input_ta.read(t), wxp) + tf.matmul(h, whp) + bp)
        return t + 1, h, out.write(t, h)

    _, h, out = tf.while_loop(lambda t, h, out: t < steps, body,
                              [tf.constant(0), h0, output_ta])
    return out.stack(), h


def rnn(tf, x, wx, wh, b):
    """A dynamic_rnn-style loop (static shapes); y uses the outputs and the final state."""
    ps = [_ph(tf, a, n) for a, n in ((x, "x"), (wx, "wx"), (wh, "wh"), (b, "b"))]
    outputs, h = _rnn(tf, *ps)
    y = tf.reduce_sum(outputs * outputs) + tf.reduce_sum(h)
    return dict(zip(ps, (x, wx, wh, b))), y, ps


def rnn_dynamic(tf, x, wx, wh, b):
    """The same loop on placeholders of unknown shape."""
    ps = [_ph(tf, a, n, static=False) for a, n in ((x, "x"), (wx, "wx"), (wh, "wh"), (b, "b"))]
    outputs, h = _rnn(tf, *ps, static=False)
    y = tf.reduce_sum(tf.sin(outputs)) + tf.reduce_sum(h * h)
    return dict(zip(ps, (x, wx, wh, b))), y, ps


def dynamic_size(tf, x, c):
    """A data-dependent trip count writing into a dynamically sized TensorArray."""
    xp, cp = _ph(tf, x, "x"), _ph(tf, c, "c")
    ta = tf.TensorArray(tf.float64, size=0, dynamic_size=True)

    def body(i, v, ta):
        v = v * cp + xp
        return i + 1, v, ta.write(i, v)

    _, _, ta = tf.while_loop(lambda i, v, ta: tf.reduce_sum(v) < 20.0, body,
                             [tf.constant(0), xp, ta])
    stacked = ta.stack()
    return {xp: x, cp: c}, tf.reduce_sum(stacked * stacked), [xp, cp]


def read_back(tf, x0, w):
    """Each iteration reads what the previous one wrote (a TensorArray both read and written
    in the loop), and y reads the array after the loop."""
    xp, wp = _ph(tf, x0, "x0"), _ph(tf, w, "w")
    ta = tf.TensorArray(tf.float64, size=5, element_shape=x0.shape, clear_after_read=False)
    ta = ta.write(0, xp)

    def body(i, ta):
        return i + 1, ta.write(i, tf.sin(ta.read(i - 1)) * wp)

    _, ta = tf.while_loop(lambda i, ta: i < 5, body, [tf.constant(1), ta])
    stacked = ta.stack()
    return {xp: x0, wp: w}, tf.reduce_sum(stacked * stacked), [xp, wp]


def gather_in_loop(tf, x, v0):
    """Overlapping gathers from a captured TensorArray in every iteration: the gradient array
    sums the writes to one index across iterations."""
    xp, vp = _ph(tf, x, "x"), _ph(tf, v0, "v0")
    ta = tf.TensorArray(tf.float64, size=4, clear_after_read=False).unstack(xp)

    def body(i, v):
        rows = ta.gather(tf.stack([i % 4, (i + 1) % 4]))
        return i + 1, v * rows[0] + tf.sin(rows[1])

    _, v = tf.while_loop(lambda i, v: i < 6, body, [tf.constant(0), vp])
    return {xp: x, vp: v0}, tf.reduce_sum(v * v), [xp, vp]


def cond_write(tf, x, w):
    """A tf.cond in the body decides, from the data, what to write (the TensorArray passes
    through the cond)."""
    xp, wp = _ph(tf, x, "x"), _ph(tf, w, "w")
    steps = x.shape[0]
    in_ta = tf.TensorArray(tf.float64, size=steps).unstack(xp)

    def body(t, out):
        e = in_ta.read(t)
        out = tf.cond(tf.reduce_sum(e) > 0.0, lambda: out.write(t, e * wp),
                      lambda: out.write(t, tf.sin(e) - wp))
        return t + 1, out

    _, out = tf.while_loop(lambda t, out: t < steps, body,
                           [tf.constant(0), tf.TensorArray(tf.float64, size=steps)])
    stacked = out.stack()
    return {xp: x, wp: w}, tf.reduce_sum(stacked * stacked), [xp, wp]


def read_gather(tf, x, w):
    """Rows gathered from each element read in the loop: the read gets an IndexedSlices
    gradient."""
    xp, wp = _ph(tf, x, "x"), _ph(tf, w, "w")
    in_ta = tf.TensorArray(tf.float64, size=x.shape[0]).unstack(xp)

    def body(t, v):
        return t + 1, v * wp + tf.reduce_sum(tf.gather(in_ta.read(t), [0, 2, 2]), 0)

    _, v = tf.while_loop(lambda t, v: t < x.shape[0], body, [tf.constant(0), wp])
    return {xp: x, wp: w}, tf.reduce_sum(v * v), [xp, wp]


CASES = {
    "read_write": (read_write, lambda: [_rand(1, (3, 2))]),
    "gather_repeat": (gather_repeat, lambda: [_rand(2, (4, 3))]),
    "concat_split": (concat_split, lambda: [_rand(3, (6, 2)), _rand(4, (6, 2))]),
    "partial_read": (partial_read, lambda: [_rand(5, (3, 2))]),
    "map_fn": (map_fn, lambda: [_rand(6, (4, 2, 3)), _rand(7, (3, 3))]),
    "map_fn_struct": (map_fn_struct, lambda: [_rand(8, (5, 2)), _rand(9, (5, 2))]),
    "map_fn_dynamic": (map_fn_dynamic, lambda: [_rand(10, (4, 3)), _rand(11, (3,))]),
    "scan": (scan, lambda: [_rand(12, (4, 3))]),
    "scan_init_reverse": (scan_init_reverse, lambda: [_rand(13, (5, 2)), _rand(14, (2,)),
                                                      _rand(15, (2,))]),
    "foldl": (foldl, lambda: [_rand(16, (5, 3)), _rand(17, (3,))]),
    "foldr": (foldr, lambda: [_rand(18, (4, 3), 0.5, 1.0), _rand(19, (3,))]),
    "nested_map": (nested_map, lambda: [_rand(20, (3, 4)), _rand(21, ())]),
    "rnn": (rnn, lambda: [_rand(22, (5, 2, 3)), _rand(23, (3, 4)), _rand(24, (4, 4)) * 0.7,
                          _rand(25, (4,)) * 0.1]),
    "rnn_dynamic": (rnn_dynamic, lambda: [_rand(26, (4, 3, 2)), _rand(27, (2, 3)),
                                          _rand(28, (3, 3)) * 0.7, _rand(29, (3,)) * 0.1]),
    "dynamic_size": (dynamic_size, lambda: [_rand(30, (2, 2), 0.5, 1.0),
                                            _rand(31, (2, 2), 1.1, 1.4)]),
    "read_back": (read_back, lambda: [_rand(32, (3,)), _rand(33, (3,), 0.5, 1.5)]),
    "gather_in_loop": (gather_in_loop, lambda: [_rand(34, (4, 3)), _rand(35, (3,))]),
    "cond_write": (cond_write, lambda: [_rand(36, (5, 3)), _rand(37, (3,))]),
    "read_gather": (read_gather, lambda: [_rand(38, (4, 3, 2)), _rand(39, (2,))]),
}
# TF's own gradient graphs of these cases are stored too, to be imported and run as they are.
GRAPH_DEF_CASES = ("rnn", "nested_map", "read_back", "dynamic_size")


# -- training a TensorArray RNN ----------------------------------------------------------------
def rnn_train_inputs():
    f32 = np.float32
    return {"xs": _rand(40, (4, 2, 2), dtype=f32), "target": _rand(41, (4, 2, 3), dtype=f32),
            "wx": _rand(42, (2, 3), dtype=f32), "wh": _rand(43, (3, 3), dtype=f32) * 0.5,
            "b": _rand(44, (3,), dtype=f32) * 0.1}


def rnn_train(tf, inputs, steps=5, lr=0.1):
    """Losses (before each step, then after the last) and final weights of GradientDescent on
    the squared error of the RNN's outputs."""
    wx = tf.Variable(inputs["wx"], name="wx")
    wh = tf.Variable(inputs["wh"], name="wh")
    b = tf.Variable(inputs["b"], name="b")
    xs = tf.constant(inputs["xs"])
    steps_, batch = inputs["xs"].shape[:2]
    input_ta = tf.TensorArray(tf.float32, size=steps_).unstack(xs)

    def body(t, h, out):
        h = tf.tanh(tf.matmul(input_ta.read(t), wx) + tf.matmul(h, wh) + b)
        return t + 1, h, out.write(t, h)

    _, _, out = tf.while_loop(lambda t, h, out: t < steps_, body,
                              [tf.constant(0), tf.zeros([batch, 3]),
                               tf.TensorArray(tf.float32, size=steps_)])
    loss = tf.reduce_mean(tf.square(out.stack() - inputs["target"]))
    train = tf.train.GradientDescentOptimizer(lr).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            losses.append(sess.run([loss, train])[0])
        final = sess.run([loss, wx, wh, b])
    return np.asarray(losses + [final[0]], np.float32), final[1:]


# -- writing -----------------------------------------------------------------------------------
def op_counts(graph) -> dict:
    types = [op.type for op in graph.get_operations()]
    return {t: types.count(t) for t in COUNTED}


def _run_case(tf, build, inputs) -> dict:
    g = tf.Graph()
    with g.as_default():
        feeds, y, xs = build(tf, *inputs)
        grads = [tf.convert_to_tensor(d) for d in tf.gradients(y, xs)]
        with tf.Session(graph=g) as sess:
            values = sess.run([y] + grads, feeds)
    out = {f"in{i}": a for i, a in enumerate(inputs)}
    out["y"] = values[0]
    out.update({f"grad{i}": v for i, v in enumerate(values[1:])})
    out.update({f"count/{t}": np.int32(n) for t, n in op_counts(g).items()})
    out["graph_def"] = np.frombuffer(g.as_graph_def().SerializeToString(), np.uint8)
    out["feeds"] = np.array([p.name for p in feeds])
    out["fetches"] = np.array([t.name for t in [y] + grads])
    return out


def main() -> None:
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    tf.disable_control_flow_v2()
    arrays = {}
    for name, (build, make_inputs) in CASES.items():
        for key, value in _run_case(tf, build, make_inputs()).items():
            if key in ("graph_def", "feeds", "fetches") and name not in GRAPH_DEF_CASES:
                continue
            arrays[f"{name}/{key}"] = value
    with tf.Graph().as_default():
        losses, weights = rnn_train(tf, rnn_train_inputs())
    arrays["rnn_train/losses"] = losses
    for key, value in zip(("wx", "wh", "b"), weights):
        arrays[f"rnn_train/{key}"] = value
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {len(arrays)} arrays to {OUT}")


if __name__ == "__main__":
    main()
