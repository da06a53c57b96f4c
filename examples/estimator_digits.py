"""A canned tf.estimator.DNNClassifier over feature columns on scikit-learn's 8x8 digits,
trained and evaluated with train_and_evaluate (a TF 1.x Estimator program: runs unchanged
with `import tensorflow as tf` on TF 1.15).

    .venv/bin/python examples/estimator_digits.py [--steps N] [--model-dir DIR]

Checkpoints and TensorBoard events go to --model-dir (default: a fresh temporary folder);
a second run with the same folder resumes from its latest checkpoint.
"""

import argparse
import tempfile

import numpy as np
from sklearn.datasets import load_digits

import tensorweave as tf


def data():
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    order = np.random.RandomState(0).permutation(len(x))
    x, y = x[order], y[order].astype(np.int64)
    return (x[:1500], y[:1500]), (x[1500:], y[1500:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--model-dir", default=None)
    args = parser.parse_args()
    (x_train, y_train), (x_test, y_test) = data()

    pixels = tf.feature_column.numeric_column("pixels", shape=(64,))
    config = tf.estimator.RunConfig(model_dir=args.model_dir or tempfile.mkdtemp(),
                                    save_checkpoints_steps=500, log_step_count_steps=500,
                                    tf_random_seed=0)
    classifier = tf.estimator.DNNClassifier(
        hidden_units=[128, 64], feature_columns=[pixels], n_classes=10,
        optimizer=tf.train.AdamOptimizer(1e-3), config=config)

    train = tf.estimator.inputs.numpy_input_fn({"pixels": x_train}, y_train, batch_size=64,
                                               num_epochs=None, shuffle=True)
    test = tf.estimator.inputs.numpy_input_fn({"pixels": x_test}, y_test, batch_size=297,
                                              shuffle=False)
    metrics, _ = tf.estimator.train_and_evaluate(
        classifier, tf.estimator.TrainSpec(train, max_steps=args.steps),
        tf.estimator.EvalSpec(test, steps=None))
    print(f"model dir: {classifier.model_dir}")
    print(f"global step: {metrics['global_step']}")
    print(f"test accuracy: {metrics['accuracy']:.4f}")


if __name__ == "__main__":
    main()
