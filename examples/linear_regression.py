"""Linear regression, TF1 style: fit y = x @ w + b to noisy synthetic data with plain
gradient descent, then print the fitted parameters next to the true ones.

Run: .venv/bin/python examples/linear_regression.py [--steps 200] [--learning-rate 0.1]
"""

import argparse

import numpy as np

import tensorweave as tf

TRUE_W = np.array([[2.0], [-3.4], [1.5]], np.float32)
TRUE_B = 4.2


def make_data(n: int, seed: int):
    """n noisy samples of y = x @ TRUE_W + TRUE_B."""
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 3).astype(np.float32)
    y = x @ TRUE_W + TRUE_B + 0.01 * rng.randn(n, 1).astype(np.float32)
    return x, y


def build_model(learning_rate: float):
    """Placeholders, parameters, the mean squared error and its gradient-descent step."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    b = tf.Variable(0.0, name="b")
    prediction = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.square(prediction - y), name="mse")
    train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss)
    return x, y, w, b, loss, train_op


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    features, targets = make_data(1000, args.seed)
    x, y, w, b, loss, train_op = build_model(args.learning_rate)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(args.steps):
            _, mse = sess.run([train_op, loss], {x: features, y: targets})
            if step % 50 == 0:
                print(f"step {step:4d}  mse {mse:.5f}")
        fitted_w, fitted_b, mse = sess.run([w, b, loss], {x: features, y: targets})
    print("true   w:", " ".join(f"{v:.3f}" for v in TRUE_W.ravel()), f"  b: {TRUE_B:.3f}")
    print("fitted w:", " ".join(f"{v:.3f}" for v in fitted_w.ravel()), f"  b: {fitted_b:.3f}")
    print(f"final mse: {mse:.6f}")
    return fitted_w, fitted_b


if __name__ == "__main__":
    main()
