"""Optimizer cases shared by make_proximal_expected.py (TensorFlow) and
test_proximal_optimizers.py (tensorweave): three steps on a dense and a gathered (sparse,
with a repeated row) variable from fixed starting values; the variables after each step."""

import numpy as np

W0 = np.array([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]], np.float32)
E0 = np.array([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6], [0.7, 0.8]], np.float32)
X = np.array([[1.0, -2.0, 0.5], [0.25, 1.0, -1.5]], np.float32)
IDS = np.array([2, 0, 2], np.int32)

OPTIMIZERS = {
    "ftrl": lambda tf: tf.train.FtrlOptimizer(0.3),
    "ftrl_l1_l2": lambda tf: tf.train.FtrlOptimizer(
        0.5, l1_regularization_strength=0.1, l2_regularization_strength=0.2),
    "ftrl_power": lambda tf: tf.train.FtrlOptimizer(0.2, learning_rate_power=-0.7,
                                                    initial_accumulator_value=0.5),
    "ftrl_shrinkage": lambda tf: tf.train.FtrlOptimizer(
        0.4, l1_regularization_strength=0.05, l2_shrinkage_regularization_strength=0.1),
    "proximal_adagrad": lambda tf: tf.train.ProximalAdagradOptimizer(0.4),
    "proximal_adagrad_l1_l2": lambda tf: tf.train.ProximalAdagradOptimizer(
        0.4, l1_regularization_strength=0.1, l2_regularization_strength=0.3),
    "proximal_gd": lambda tf: tf.train.ProximalGradientDescentOptimizer(0.1),
    "proximal_gd_l1_l2": lambda tf: tf.train.ProximalGradientDescentOptimizer(
        0.1, l1_regularization_strength=0.2, l2_regularization_strength=0.5),
}


def run(tf, make_optimizer, steps=3):
    """[(w, e) after step k] for k = 1..steps."""
    with tf.Graph().as_default():
        w = tf.Variable(W0, name="w")
        e = tf.Variable(E0, name="e")
        rows = tf.gather(e, IDS)
        loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant(X), w) - 1.0)) + \
            tf.reduce_sum(tf.sin(rows) * tf.constant([[1.0, -2.0]]))
        train = make_optimizer(tf).minimize(loss)
        out = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train)
                out.append(sess.run([w, e]))
        return out
