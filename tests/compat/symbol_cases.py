"""Programs for the symbols of TF1 that issue 18 added outside the op families (profiler,
mixed-precision loss scaling), shared by make_symbol_expected.py (run with TensorFlow) and
test_symbol_behaviour.py (run with tensorweave): each takes the `tf` module."""

from __future__ import annotations

import numpy as np

X = np.linspace(-1.0, 1.0, 2 * 6 * 6 * 3, dtype=np.float32).reshape(2, 6, 6, 3)


def model(tf, x=None):
    """A small conv net with fully known shapes on `x` (default: the constant X); returns
    its loss."""
    x = tf.constant(X) if x is None else x
    with tf.variable_scope("conv"):
        k = tf.get_variable("kernel", [3, 3, 3, 4], initializer=tf.ones_initializer())
        b = tf.get_variable("bias", [4], initializer=tf.zeros_initializer())
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, k, [1, 1, 1, 1], "VALID"), b))
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    with tf.variable_scope("dense"):
        w = tf.get_variable("w", [16, 5], initializer=tf.ones_initializer())
        tf.get_variable("frozen", [7], trainable=False)
        y = tf.matmul(tf.reshape(h, [2, 16]), w)
    return tf.reduce_mean(tf.square(y - 1.0))


def profile_numbers(tf) -> dict:
    """Parameters by scope, float ops by op type, as tf.profiler.profile reports them."""
    with tf.Graph().as_default() as g:
        model(tf)
        opts = tf.profiler.ProfileOptionBuilder
        params = tf.profiler.profile(g, options=opts.trainable_variables_parameter())
        flops = tf.profiler.profile(g, cmd="op", options=opts.float_operation())
        all_params = tf.profiler.profile(g, options=opts(
            opts.trainable_variables_parameter()).with_accounted_types(["VariableV2"]).build())
    return {"total_parameters": int(params.total_parameters),
            "scopes": [[c.name, int(c.total_parameters)] for c in params.children],
            "leaves": [[c.name, int(c.total_parameters)] for s in params.children
                       for c in s.children],
            "definitions": int(params.total_definition_count),
            "all_variables_parameters": int(all_params.total_parameters),
            "total_float_ops": int(flops.total_float_ops),
            "float_ops": _chain(flops),
            "options": {"params": opts.trainable_variables_parameter(),
                        "flops": opts.float_operation(), "time": opts.time_and_memory(),
                        "default": opts().build()}}


def _chain(node) -> list:
    """The op view's chain of op types: [name, own float ops, total, number of nodes]."""
    out = []
    while node.children:
        node = node.children[0]
        out.append([node.name, int(node.float_ops), int(node.total_float_ops),
                    len(node.graph_nodes)])
    return out


FEEDS = [1.0, 1.0, np.inf, 1.0, 1.0, np.nan, 1.0]


def loss_scale_steps(tf) -> list:
    """Seven steps of a dynamically loss-scaled optimizer (increment_period 2), a few fed a
    non-finite input: (loss scale, good steps, w, global step) after each."""
    with tf.Graph().as_default():
        scale_in = tf.placeholder(tf.float32, [])
        w = tf.get_variable("w", [3], initializer=tf.constant_initializer([1.0, -2.0, 0.5]))
        loss = tf.reduce_sum(tf.square(w * scale_in - 0.25))
        step = tf.train.get_or_create_global_step()
        loss_scale = tf.mixed_precision.DynamicLossScale(initial_loss_scale=8.0,
                                                         increment_period=2, multiplier=4.0)
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(
            tf.train.GradientDescentOptimizer(0.05), loss_scale=loss_scale)
        train = opt.minimize(loss, global_step=step)
        out = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for feed in FEEDS:
                sess.run(train, {scale_in: feed})
                cur, good = sess.run([loss_scale(), loss_scale._num_good_steps])
                out.append([float(cur), int(good), sess.run(w).tolist(), int(sess.run(step))])
    return out
