"""Saving Keras models: weights as a TF checkpoint (variable names as keys, readable by
`tf.train.Saver` and `tf.train.load_checkpoint`) or in Keras's HDF5 layout (h5py: a group per
layer with `weight_names`, datasets `<layer>/<weight>:0`, `layer_names` on the root), whole
models as HDF5 (`model_config` JSON, `training_config`, `model_weights`), architectures as
JSON (`Sequential` and functional configs in Keras's format: layers with their
`inbound_nodes`, `input_layers`, `output_layers`).
"""

from __future__ import annotations

import json
import os

import numpy as np

from tensorweave.keras import backend as K
from tensorweave.keras.engine.base_layer import producer


def _h5py():
    try:
        import h5py
    except ImportError as e:
        raise ImportError("`save_weights`/`load_weights`/`save` in HDF5 format need h5py: "
                          "pip install h5py (or save in the TensorFlow format: a path that "
                          "does not end in .h5)") from e
    return h5py


def is_h5(filepath, save_format=None) -> bool:
    if save_format is not None:
        return save_format in ("h5", "keras")
    return os.fspath(filepath).endswith((".h5", ".keras", ".hdf5"))


# -- weights -------------------------------------------------------------------------------------
def save_weights(model, filepath, overwrite=True, save_format=None) -> None:
    if is_h5(filepath, save_format):
        with _h5py().File(filepath, "w") as f:
            _write_weights_group(f, model)
        return
    _write_object_based(model, os.fspath(filepath))


def _object_keys(model) -> list:
    """(weight, object path) of every weight, as tf.keras's object graph names them:
    `layer_with_weights-i/<weight>` (`.../cell/<weight>` inside a recurrent layer)."""
    out: list[tuple] = []
    for i, layer in enumerate(layer for layer in model.layers if layer.weights):
        cell = "cell/" if hasattr(layer, "cell") else ""
        out.extend((w, f"layer_with_weights-{i}/{cell}{w.name[:-2].split('/')[-1]}")
                   for w in layer.weights)
    return out


def _write_object_based(model, prefix: str) -> None:
    """An object-based checkpoint at `prefix` (what TF's `save_weights` writes in the TF
    format): the weights under their object paths plus the serialized object graph, and the
    `checkpoint` state file beside it."""
    from tensorweave.formats.checkpoint.bundle import BundleWriter
    from tensorweave.formats.checkpoint.state import update_checkpoint_state
    from tensorweave.proto.trackable_object_graph_pb2 import TrackableObjectGraph

    pairs = _object_keys(model)
    graph = TrackableObjectGraph()
    graph.nodes.add()
    nodes: dict[str, int] = {"": 0}
    for w, path in pairs:
        parent = ""
        for part in path.split("/"):
            here = f"{parent}/{part}" if parent else part
            if here not in nodes:
                nodes[here] = len(graph.nodes)
                graph.nodes.add()
                graph.nodes[nodes[parent]].children.add(node_id=nodes[here], local_name=part)
            parent = here
        graph.nodes[nodes[path]].attributes.add(name="VARIABLE_VALUE", full_name=w.op.name,
                                                checkpoint_key=path + _ATTRIBUTE)
    with BundleWriter(prefix) as writer:
        for (_, path), value in zip(pairs, K.batch_get_value([w for w, _ in pairs])):
            writer.add(path + _ATTRIBUTE, value)
        writer.add("_CHECKPOINTABLE_OBJECT_GRAPH",
                   np.array(graph.SerializeToString(), dtype=object))
    update_checkpoint_state(os.path.dirname(prefix) or ".", prefix)


def _write_weights_group(group, model) -> None:
    layers = [layer for layer in model.layers]
    group.attrs["layer_names"] = [layer.name.encode() for layer in layers]
    group.attrs["backend"] = b"tensorflow"
    group.attrs["keras_version"] = b"2.2.4-tf"
    for layer in layers:
        g = group.create_group(layer.name)
        weights = layer.weights
        names = [w.name.encode() for w in weights]
        g.attrs["weight_names"] = names
        for w, value in zip(weights, K.batch_get_value(weights)):
            g.create_dataset(w.name, data=value)


def load_weights(model, filepath, by_name=False) -> None:
    """Loads weights saved by `save_weights` (ours or Keras's HDF5, by layer order or name).

    Raises:
      ValueError: a layer or weight count that does not match.
    """
    if is_h5(filepath):
        with _h5py().File(filepath, "r") as f:
            group = f["model_weights"] if "model_weights" in f else f
            _read_weights_group(group, model, by_name)
        return
    from tensorweave.training.checkpoint_utils import load_checkpoint
    from tensorweave.training.saver import Saver

    reader = load_checkpoint(os.fspath(filepath))
    if any(k.endswith(_ATTRIBUTE) for k in reader.get_variable_to_shape_map()):
        K.batch_set_value(_object_based_pairs(model, reader))
        return
    Saver(var_list=model.weights).restore(K.get_session(), os.fspath(filepath))


_ATTRIBUTE = "/.ATTRIBUTES/VARIABLE_VALUE"


def _object_based_pairs(model, reader) -> list:
    """(weight, value) pairs from an object-based checkpoint (what tf.keras's `save_weights`
    writes in the TF format): the i-th layer with weights is `layer_with_weights-i`, its
    weights children named as the weights are (`kernel`, `cell/kernel` in an RNN).

    Raises:
      ValueError: a weight the checkpoint does not hold.
    """
    keys = set(reader.get_variable_to_shape_map())
    pairs: list[tuple] = []
    for i, layer in enumerate(layer for layer in model.layers if layer.weights):
        for w in layer.weights:
            short = w.name[:-2].split("/")[-1]
            key = next((k for k in (f"layer_with_weights-{i}/{short}{_ATTRIBUTE}",
                                    f"layer_with_weights-{i}/cell/{short}{_ATTRIBUTE}")
                        if k in keys), None)
            if key is None:
                raise ValueError(f"The checkpoint has no value for {w.name} (looked for "
                                 f"layer_with_weights-{i}/{short}).")
            pairs.append((w, reader.get_tensor(key)))
    return pairs


def _read_weights_group(group, model, by_name: bool) -> None:
    names = [n.decode() if isinstance(n, bytes) else n for n in group.attrs["layer_names"]]
    saved = {n: [np.asarray(group[n][w.decode() if isinstance(w, bytes) else w])
                 for w in group[n].attrs["weight_names"]] for n in names}
    layers = [layer for layer in model.layers if layer.weights]
    pairs: list[tuple] = []
    if by_name:
        for layer in layers:
            if layer.name in saved:
                pairs.extend(zip(layer.weights, saved[layer.name]))
    else:
        filled = [saved[n] for n in names if saved[n]]
        if len(filled) != len(layers):
            raise ValueError(f"You are trying to load a weight file containing {len(filled)} "
                             f"layers into a model with {len(layers)} layers.")
        for layer, values in zip(layers, filled):
            if len(values) != len(layer.weights):
                raise ValueError(f"Layer {layer.name} expects {len(layer.weights)} weights, "
                                 f"but the saved weights have {len(values)} elements.")
            pairs.extend(zip(layer.weights, values))
    K.batch_set_value(pairs)


# -- architecture --------------------------------------------------------------------------------
def _node_ref(tensor) -> list:
    node, index = producer(tensor)
    return [node.layer.name, node.layer.inbound_nodes.index(node), index, {}]


def network_config(model) -> dict:
    """Keras's functional config of a graph network."""
    layers = []
    for layer in model.layers:
        nodes = [n for n in layer.inbound_nodes if _in_model(n, model)]
        layers.append({"name": layer.name, "class_name": type(layer).__name__,
                       "config": layer.get_config(),
                       "inbound_nodes": [[_node_ref(t) for t in n.inputs] for n in nodes
                                         if n.inputs]})
    return {"name": model.name, "layers": layers,
            "input_layers": [_node_ref(t)[:3] for t in model.inputs],
            "output_layers": [_node_ref(t)[:3] for t in model.outputs]}


def _in_model(node, model) -> bool:
    return node in model._nodes or any(t is i for t in node.outputs for i in model.inputs)


def _layer_class(name: str):
    from tensorweave.keras import layers as layers_mod
    from tensorweave.keras import models as models_mod

    cls = getattr(layers_mod, name, None) or getattr(models_mod, name, None)
    if cls is None:
        raise ValueError(f"Unknown layer: {name}")
    return cls


def _layer_from(spec: dict):
    config = dict(spec["config"])
    cls = _layer_class(spec["class_name"])
    if spec["class_name"] == "InputLayer":
        shape = config.pop("batch_input_shape")
        return cls(batch_input_shape=tuple(shape), dtype=config.get("dtype"),
                   name=config.get("name"))
    config.pop("trainable", None)
    config.pop("dtype", None)
    shape = config.pop("batch_input_shape", None)
    if shape is not None:
        config["batch_input_shape"] = tuple(shape)
    return cls(**config)


def model_from_config(config: dict, custom_objects=None):
    """A new model (fresh weights) from `{"class_name", "config"}`."""
    from tensorweave.keras.engine.sequential import Sequential
    from tensorweave.keras.engine.training import Model

    body = config["config"]
    if config["class_name"] == "Sequential":
        return Sequential([_layer_from(s) for s in body["layers"]], name=body.get("name"))
    made, outputs = {}, {}
    for spec in body["layers"]:
        made[spec["name"]] = layer = _layer_from(spec)
        if spec["class_name"] == "InputLayer":
            outputs[(spec["name"], 0)] = layer.inbound_nodes[0].outputs
        for refs in spec["inbound_nodes"]:
            args = [outputs[(r[0], r[1])][r[2]] for r in refs]
            out = layer(args if len(args) > 1 else args[0])
            outputs[(spec["name"], len(layer.inbound_nodes) - 1)] = \
                out if isinstance(out, list) else [out]
    ins = [outputs[(r[0], r[1])][r[2]] for r in body["input_layers"]]
    outs = [outputs[(r[0], r[1] if r[0] != body["input_layers"][0][0] else 0)][r[2]]
            for r in body["output_layers"]]
    return Model(ins if len(ins) > 1 else ins[0], outs if len(outs) > 1 else outs[0],
                 name=body.get("name"))


def to_json(model, **kwargs) -> str:
    return json.dumps({"class_name": type(model).__name__, "config": model.get_config(),
                       "keras_version": "2.2.4-tf", "backend": "tensorflow"}, **kwargs)


def model_from_json(json_string, custom_objects=None):
    return model_from_config(json.loads(json_string), custom_objects)


# -- whole models --------------------------------------------------------------------------------
def training_config(model) -> str | None:
    if getattr(model, "optimizer", None) is None or isinstance(model.optimizer, str):
        return None
    from tensorweave.keras import optimizers

    loss = model.loss if isinstance(model.loss, (str, list, dict)) else \
        getattr(model.loss, "__name__", str(model.loss))
    return json.dumps({"optimizer_config": optimizers.serialize(model.optimizer), "loss": loss,
                       "metrics": model._compile_metrics})


def save_model(model, filepath, overwrite=True, include_optimizer=True, save_format=None):
    """HDF5 (a path ending in .h5, or save_format="h5"): the architecture, the weights and
    the compile arguments; otherwise a SavedModel directory (see `export_saved_model`)."""
    if not is_h5(filepath, save_format):
        export_saved_model(model, filepath)
        return
    with _h5py().File(filepath, "w") as f:
        f.attrs["model_config"] = to_json(model).encode()
        f.attrs["keras_version"], f.attrs["backend"] = b"2.2.4-tf", b"tensorflow"
        training = training_config(model) if include_optimizer else None
        if training is not None:
            f.attrs["training_config"] = training.encode()
        _write_weights_group(f.create_group("model_weights"), model)


KERAS_METADATA = "keras_model.json"   # in the SavedModel's assets.extra/


def export_saved_model(model, saved_model_path, serving_only=False, **kwargs) -> None:
    """A SavedModel of the model's inference graph (tag "serve", signature "serving_default":
    the inputs and outputs by layer name, as TF 1.15's `tf.keras.experimental.
    export_saved_model`), servable by `tensorweave serve` and TF Serving; with the Keras
    config and weight names in `assets.extra/keras_model.json`, so `load_model` rebuilds it.
    """
    from tensorweave.saved_model import builder, signature_def_utils, tag_constants

    outputs = getattr(model, "_eval_outputs", None) or model.outputs
    signature = signature_def_utils.predict_signature_def(
        inputs=dict(zip(model.input_names, model.inputs)),
        outputs=dict(zip(model.output_names, outputs)))
    build = builder.SavedModelBuilder(os.fspath(saved_model_path))
    build.add_meta_graph_and_variables(K.get_session(), [tag_constants.SERVING],
                                       signature_def_map={"serving_default": signature})
    build.save()
    extra = os.path.join(os.fspath(saved_model_path), "assets.extra")
    os.makedirs(extra, exist_ok=True)
    with open(os.path.join(extra, KERAS_METADATA), "w") as f:
        json.dump({"model_config": json.loads(to_json(model)),
                   "weights": [w.op.name for w in model.weights],
                   "training_config": training_config(model)}, f)


def load_model(filepath, custom_objects=None, compile=True):  # noqa: A002 - Keras's name
    """A model saved by `save_model` (HDF5, Keras's too, or our SavedModel), compiled again
    when it was.

    Raises:
      ValueError: a SavedModel without Keras's metadata (not written by `save_model`).
    """
    if os.path.isdir(os.fspath(filepath)):
        return _load_saved_model(os.fspath(filepath), compile)
    with _h5py().File(filepath, "r") as f:
        config = f.attrs["model_config"]
        model = model_from_json(config.decode() if isinstance(config, bytes) else config)
        _read_weights_group(f["model_weights"], model, by_name=False)
        training = f.attrs.get("training_config")
    if compile and training is not None:
        compile_from(model, json.loads(training.decode() if isinstance(training, bytes)
                                        else training))
    return model


def _load_saved_model(path: str, compile: bool):  # noqa: A002
    from tensorweave.saved_model.loader import variables_path
    from tensorweave.training.checkpoint_utils import load_checkpoint

    meta_path = os.path.join(path, "assets.extra", KERAS_METADATA)
    if not os.path.exists(meta_path):
        raise ValueError(f"{path} is a SavedModel without Keras metadata ({meta_path}); load "
                         "it with tf.saved_model.loader.load instead.")
    with open(meta_path) as f:
        meta = json.load(f)
    model = model_from_config(meta["model_config"])
    reader = load_checkpoint(variables_path(path))
    K.batch_set_value([(w, reader.get_tensor(name))
                       for w, name in zip(model.weights, meta["weights"])])
    if compile and meta.get("training_config"):
        compile_from(model, json.loads(meta["training_config"]))
    return model


def compile_from(model, training: dict, **kwargs) -> None:
    """Compiles `model` with the arguments `training_config` recorded."""
    from tensorweave.keras import optimizers

    model.compile(optimizer=optimizers.get(training["optimizer_config"]),
                  loss=training["loss"], metrics=training.get("metrics"), **kwargs)
