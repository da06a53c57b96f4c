"""`tf.keras` in graph mode, as TF 1.13–1.15 programs use it: layers, functional and
Sequential models with compile/fit/evaluate/predict on the Keras session, optimizers, losses,
metrics, callbacks, backend, utils; built on tensorweave's graph, variables, layers and
checkpoints (one implementation, not a second framework)."""

from tensorweave.keras import (
    activations,
    applications,
    backend,
    callbacks,
    constraints,
    datasets,
    estimator,
    experimental,
    initializers,
    layers,
    losses,
    metrics,
    models,
    optimizers,
    preprocessing,
    regularizers,
    utils,
)
from tensorweave.keras.engine.input_layer import Input
from tensorweave.keras.engine.sequential import Sequential
from tensorweave.keras.engine.training import Model

__version__ = "2.2.4-tf"

__all__ = ["Input", "Model", "Sequential", "activations", "applications", "backend",
           "callbacks", "constraints", "datasets", "estimator", "experimental",
           "initializers", "layers", "losses", "metrics", "models", "optimizers",
           "preprocessing", "regularizers", "utils"]
