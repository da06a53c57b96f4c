"""Multinomial logistic regression, TF1 style, on scikit-learn's 8x8 digits (1,797 images):
softmax over a linear model trained by gradient descent; prints the held-out accuracy.

Run: .venv/bin/python examples/logistic_regression.py [--steps 300]
(scikit-learn comes with the `examples` extra: pip install -e '.[examples]')
"""

import argparse

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import tensorweave as tf


def load_data(test_fraction: float, seed: int):
    """Pixels scaled to [0, 1] as float32, int32 labels, a stratified train/test split."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    return train_test_split(x, y, test_size=test_fraction, random_state=seed, stratify=y)


def build_model(learning_rate: float):
    x = tf.placeholder(tf.float32, [None, 64], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    w = tf.get_variable("w", [64, 10], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [10], initializer=tf.zeros_initializer())
    logits = tf.matmul(x, w) + b
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss)
    correct = tf.equal(tf.argmax(logits, axis=1, output_type=tf.int32), y)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    return x, y, loss, train_op, accuracy


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--learning-rate", type=float, default=1.0)
    parser.add_argument("--test-fraction", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    x_train, x_test, y_train, y_test = load_data(args.test_fraction, args.seed)
    x, y, loss, train_op, accuracy = build_model(args.learning_rate)
    train_feed = {x: x_train, y: y_train}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(args.steps):
            _, value = sess.run([train_op, loss], train_feed)
            if step % 100 == 0:
                print(f"step {step:4d}  loss {value:.4f}")
        train_acc = sess.run(accuracy, train_feed)
        test_acc = sess.run(accuracy, {x: x_test, y: y_test})
    print(f"train accuracy: {train_acc:.3f}")
    print(f"test accuracy: {test_acc:.3f}")
    return test_acc


if __name__ == "__main__":
    main()
