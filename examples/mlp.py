"""A multi-layer perceptron, TF1 style, on scikit-learn's 8x8 digits: two ReLU layers built
with tf.layers.dense, trained with Adam on shuffled minibatches, evaluated with
tf.metrics.accuracy on a held-out split.

Run: .venv/bin/python examples/mlp.py [--epochs 20] [--batch-size 64]
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


def build_model(hidden, learning_rate: float):
    x = tf.placeholder(tf.float32, [None, 64], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    h = x
    for units in hidden:
        h = tf.layers.dense(h, units, activation=tf.nn.relu)
    logits = tf.layers.dense(h, 10, name="logits")
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    train_op = tf.train.AdamOptimizer(learning_rate).minimize(loss)
    predictions = tf.argmax(logits, axis=1, output_type=tf.int32)
    accuracy, accuracy_update = tf.metrics.accuracy(labels=y, predictions=predictions)
    return dict(x=x, y=y, loss=loss, train_op=train_op, accuracy=accuracy,
                accuracy_update=accuracy_update)


def batches(n: int, batch_size: int, rng):
    order = rng.permutation(n)
    for start in range(0, n, batch_size):
        yield order[start:start + batch_size]


def evaluate(sess, model, x, y, batch_size: int = 256) -> float:
    """Streams the split through tf.metrics.accuracy (its local variables reset first)."""
    sess.run(tf.local_variables_initializer())
    for start in range(0, len(x), batch_size):
        sess.run(model["accuracy_update"], {model["x"]: x[start:start + batch_size],
                                            model["y"]: y[start:start + batch_size]})
    return float(sess.run(model["accuracy"]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--hidden", type=int, nargs="+", default=[128, 64])
    parser.add_argument("--test-fraction", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    tf.set_random_seed(args.seed)
    rng = np.random.RandomState(args.seed)
    x_train, x_test, y_train, y_test = load_data(args.test_fraction, args.seed)
    model = build_model(args.hidden, args.learning_rate)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(1, args.epochs + 1):
            losses = []
            for idx in batches(len(x_train), args.batch_size, rng):
                _, loss = sess.run([model["train_op"], model["loss"]],
                                   {model["x"]: x_train[idx], model["y"]: y_train[idx]})
                losses.append(loss)
            if epoch % 5 == 0 or epoch == args.epochs:
                print(f"epoch {epoch:3d}  loss {np.mean(losses):.4f}")
        test_acc = evaluate(sess, model, x_test, y_test)
    print(f"test accuracy: {test_acc:.3f}")
    return test_acc


if __name__ == "__main__":
    main()
