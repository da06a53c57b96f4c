"""One TF-Slim model built the same way by tensorweave (the tests) and by TensorFlow with
`tf_slim` (make_slim_expected.py): `build(tf, slim)` returns the fetches; every variable
gets a value from `value_for(name, shape)` so both sides start from the same weights."""

from __future__ import annotations

import zlib

import numpy as np

STEPS = 3


def value_for(name: str, shape) -> np.ndarray:
    """Deterministic weights per variable name (moving variances and gammas positive)."""
    rng = np.random.RandomState(zlib.crc32(name.encode()) % (2 ** 31))
    short = name.split("/")[-1].split(":")[0]
    if short in ("moving_variance", "gamma"):
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)
    if short == "global_step":
        return np.zeros(shape, np.int64)
    return rng.normal(0.0, 0.3, shape).astype(np.float32)


def inputs():
    rng = np.random.RandomState(7)
    return (rng.uniform(-1, 1, (2, 8, 8, 3)).astype(np.float32),
            np.array([0, 2], np.int32))


def model(tf, slim, x, labels):
    with slim.arg_scope([slim.conv2d, slim.fully_connected],
                        weights_regularizer=slim.l2_regularizer(0.01)):
        net = slim.conv2d(x, 4, [3, 3], scope="conv1")
        net = slim.conv2d(net, 4, [3, 3], normalizer_fn=slim.batch_norm,
                          normalizer_params={"is_training": True, "scale": True,
                                             "decay": 0.9})
        net = slim.max_pool2d(net, [2, 2])
        net = slim.repeat(net, 2, slim.conv2d, 4, [3, 3], scope="conv3")
        net = slim.avg_pool2d(net, [2, 2], stride=1, padding="SAME")
        net = slim.stack(net, slim.conv2d, [(5, [1, 1]), (6, [1, 1])], scope="s")
        net = slim.separable_conv2d(net, None, [3, 3], depth_multiplier=1, scope="dw")
        net = slim.separable_conv2d(net, 6, [3, 3], depth_multiplier=2)
        net = slim.conv2d_transpose(net, 3, [3, 3], stride=2, scope="up")
        net = slim.max_pool2d(net, [2, 2])
        net = slim.layer_norm(net)
        net = slim.flatten(net)
        net = slim.dropout(net, 0.5, is_training=False)
        net = slim.fully_connected(net, 7, scope="fc")
        logits = slim.fully_connected(net, 3, activation_fn=None)
    onehot = slim.one_hot_encoding(labels, 3)
    slim.losses.softmax_cross_entropy(logits, onehot)
    total = slim.losses.get_total_loss()
    train_op = slim.learning.create_train_op(total, tf.train.GradientDescentOptimizer(0.1))
    return logits, total, train_op


def run(tf, slim):
    """Builds, loads `value_for` weights, runs STEPS train steps; returns the arrays and
    names to compare."""
    x, labels = inputs()
    with tf.Graph().as_default():
        logits, total, train_op = model(tf, slim, tf.constant(x), tf.constant(labels))
        variables = tf.global_variables()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for v in variables:
                sess.run(v.assign(value_for(v.op.name, v.shape.as_list())))
            out = {"logits0": sess.run(logits), "total0": sess.run(total)}
            out["losses"] = np.array([sess.run(train_op) for _ in range(STEPS)])
            for v in tf.model_variables():
                out["var/" + v.op.name] = sess.run(v)
        out["names/global"] = np.array([v.op.name for v in variables])
        out["names/model"] = np.array([v.op.name for v in tf.model_variables()])
        out["names/regularization"] = np.array(
            [t.op.name for t in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)])
        out["names/logits"] = np.array(logits.op.name)
    return out
