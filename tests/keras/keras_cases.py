"""Keras training cases run the same way under TensorFlow (make_keras_expected.py) and
tensorweave (test_against_tf.py): `run_case(tf, name)` returns named numpy results."""

import numpy as np

# NOTE: no Nadam: TF's tf-keras in graph mode caches its momentum-schedule product behind a
# Python counter, so the product is multiplied once per variable per step; ours once per step.
CASES = ["sgd", "momentum", "adam", "rmsprop", "adagrad", "adadelta", "adamax", "sparse_adam",
         "mse_sgd"]


def _data():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((24, 5)).astype(np.float32)
    y = rng.integers(0, 3, 24)
    return x, y


def _weights(shapes):
    rng = np.random.default_rng(11)
    return [(rng.standard_normal(s) * 0.5).astype(np.float32) for s in shapes]


def run_case(tf, name: str) -> dict:
    keras = tf.keras
    x, y = _data()
    inputs = keras.Input(shape=(5,))
    h = keras.layers.Dense(8, activation="tanh")(inputs)
    out_act = None if name == "mse_sgd" else "softmax"
    outputs = keras.layers.Dense(3, activation=out_act)(h)
    model = keras.Model(inputs, outputs)
    model.set_weights(_weights([(5, 8), (8,), (8, 3), (3,)]))
    opt = {"sgd": lambda: keras.optimizers.SGD(0.1),
           "momentum": lambda: keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
           "adam": lambda: keras.optimizers.Adam(0.01),
           "sparse_adam": lambda: keras.optimizers.Adam(0.01),
           "rmsprop": lambda: keras.optimizers.RMSprop(0.01),
           "adagrad": lambda: keras.optimizers.Adagrad(0.1),
           "adadelta": lambda: keras.optimizers.Adadelta(1.0),
           "adamax": lambda: keras.optimizers.Adamax(0.02),
           "nadam": lambda: keras.optimizers.Nadam(0.02),
           "mse_sgd": lambda: keras.optimizers.SGD(0.05)}[name]()
    if name == "sparse_adam":
        loss, targets = "sparse_categorical_crossentropy", y
    elif name == "mse_sgd":
        loss, targets = "mse", np.eye(3, dtype=np.float32)[y]
    else:
        loss, targets = "categorical_crossentropy", np.eye(3, dtype=np.float32)[y]
    model.compile(optimizer=opt, loss=loss, metrics=["accuracy"])
    history = [model.train_on_batch(x[i * 8:(i + 1) * 8], targets[i * 8:(i + 1) * 8])
               for i in range(3) for _ in range(2)]
    result = {"history": np.asarray(history, np.float64),
              "evaluate": np.asarray(model.evaluate(x, targets, batch_size=10, verbose=0)),
              "predict": model.predict(x, batch_size=7)}
    for i, w in enumerate(model.get_weights()):
        result[f"weight{i}"] = w
    return result


def interop_model(tf):
    """A model with dense, batch-norm and convolution weights, named as Keras names them."""
    keras = tf.keras
    inputs = keras.Input(shape=(6,))
    h = keras.layers.Dense(5, activation="relu")(inputs)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.Reshape((5, 1))(h)
    h = keras.layers.Conv1D(2, 2)(h)
    outputs = keras.layers.Dense(3)(keras.layers.Flatten()(h))
    return keras.Model(inputs, outputs)
