"""The digits CNN as a tf.keras program: Sequential layers, compile, fit with Keras's progress
bar and validation, evaluate. Runs unchanged under TensorFlow (`import tensorflow as tf`).

    .venv/bin/python examples/keras_digits.py [--epochs N]
"""

import argparse

import numpy as np
from sklearn.datasets import load_digits

import tensorweave as tf


def data():
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32).reshape(-1, 8, 8, 1)
    order = np.random.default_rng(0).permutation(len(x))
    x, y = x[order], y[order]
    return (x[:1500], y[:1500]), (x[1500:], y[1500:])


def build():
    return tf.keras.Sequential([
        tf.keras.layers.Conv2D(32, 3, padding="same", activation="relu", input_shape=(8, 8, 1)),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dropout(0.3),
        tf.keras.layers.Dense(10, activation="softmax"),
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    (x_train, y_train), (x_test, y_test) = data()
    tf.set_random_seed(0)
    np.random.seed(0)   # fit's shuffling
    model = build()
    model.compile(optimizer=tf.keras.optimizers.Adam(0.003),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.summary()
    model.fit(x_train, y_train, batch_size=64, epochs=args.epochs, validation_split=0.1)
    _, accuracy = model.evaluate(x_test, y_test, verbose=0)
    print(f"test accuracy: {accuracy:.3f}")


if __name__ == "__main__":
    main()
