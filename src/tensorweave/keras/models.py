"""`tf.keras.models`: Model, Sequential, and saving/loading whole models (HDF5 through h5py)
and their architecture (`to_json` / `model_from_json`)."""

from __future__ import annotations

import json

from tensorweave.keras.engine.sequential import Sequential
from tensorweave.keras.engine.training import Model
from tensorweave.keras.saving import load_model, model_from_config, model_from_json, save_model


def clone_model(model, input_tensors=None, clone_function=None):
    """A new model of the same architecture with new (freshly initialized) weights."""
    return model_from_config({"class_name": type(model).__name__,
                              "config": model.get_config()})


__all__ = ["Model", "Sequential", "load_model", "save_model", "model_from_json",
           "model_from_config", "clone_model", "json"]
