"""Loss-scaling runs built the same way by TensorFlow (make_loss_scale_expected.py) and by
tensorweave (test_loss_scale.py): `run(tf)` -> {case: [[w, loss scale, good steps] per step]}."""

import numpy as np

FEEDS = [[[1.0, 1.0]], [[1e30, 1.0]], [[0.5, -1.0]], [[0.25, 0.5]], [[2.0, 0.0]],
         [[-1.0, 1.0]]]


def _model(tf):
    x = tf.placeholder(tf.float32, [None, 2])
    w = tf.Variable([[1.0], [2.0]], name="w")
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
    return x, w, loss


def _steps(tf, x, step, watched):
    out = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for feed in FEEDS:
            sess.run(step, {x: feed})
            got = sess.run(watched)
            out.append([np.asarray(got[0]).ravel().tolist()] + [float(v) for v in got[1:]])
    return out


def run(tf):
    results = {}
    with tf.Graph().as_default():      # the default: a dynamic scale from 2**15
        x, w, loss = _model(tf)
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(
            tf.train.GradientDescentOptimizer(0.1))
        step = opt.minimize(loss)
        scale, good = (v for v in tf.global_variables() if v.op.name != "w")
        results["dynamic_default"] = _steps(tf, x, step, [w, scale, good])
    with tf.Graph().as_default():      # growth after 2 good steps, capped by float32 range
        x, w, loss = _model(tf)
        ls = tf.train.experimental.DynamicLossScale(initial_loss_scale=4.0, increment_period=2,
                                                    multiplier=8.0)
        opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
            tf.train.MomentumOptimizer(0.05, 0.9), ls)
        step = opt.minimize(loss)
        scale, good = (v for v in tf.global_variables()
                       if v.op.name in ("current_loss_scale", "good_steps"))
        results["dynamic_growing_momentum"] = _steps(tf, x, step, [w, scale, good])
    with tf.Graph().as_default():      # a fixed scale never skips (the inf step poisons w)
        x, w, loss = _model(tf)
        opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
            tf.train.GradientDescentOptimizer(0.1), 128.0)
        step = opt.minimize(loss)
        results["fixed"] = _steps(tf, x, step, [w])
    return results
