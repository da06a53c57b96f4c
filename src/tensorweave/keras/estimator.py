"""`tf.keras.estimator.model_to_estimator`: a Keras model as a `tf.estimator.Estimator`.

The Estimator's model_fn rebuilds the model from its config on the input_fn's features (a
tensor, or a dict by input layer name), compiles the copy as the original was compiled, with
the labels as its targets, and returns the loss, a train op that also counts the global step,
and the outputs as predictions (by output layer name). The Keras model's weights at
conversion are saved to `<model_dir>/keras/keras_model.ckpt` and warm-start the Estimator
(`init_from_checkpoint`), unless model_dir already has a checkpoint to resume, as TF does.
"""

from __future__ import annotations

import json
import os
import tempfile

from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorweave.keras import backend as K
from tensorweave.keras import saving
from tensorweave.keras.engine.input_layer import Input
from tensorweave.keras.engine.training import Model
from tensorweave.ops import math_ops, state_ops
from tensorweave.ops.control_flow_ops import group
from tensorweave.ops.variable_scope import get_or_create_global_step
from tensorweave.training.checkpoint_utils import init_from_checkpoint
from tensorweave.training.saver import Saver


def _by_name(value, names: list, what: str) -> list:
    if isinstance(value, dict):
        missing = [n for n in names if n not in value]
        if missing:
            raise KeyError(f"The {what} of the input_fn have no key {missing[0]!r}; the Keras "
                           f"model's {what} are named {names}")
        return [value[n] for n in names]
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _model_fn(config: dict, training: dict | None, warm_start: str):
    def model_fn(features, labels, mode):
        template = saving.model_from_config(config)
        tensors = _by_name(features, template.input_names, "features")
        inputs = [Input(tensor=math_ops.cast(t, p.dtype.base_dtype))
                  for t, p in zip(tensors, template.inputs)]
        outputs = template(inputs if len(inputs) > 1 else inputs[0])
        model = Model(inputs if len(inputs) > 1 else inputs[0], outputs)
        model.output_names = template.output_names
        init_from_checkpoint(warm_start, {w.op.name: w.op.name for w in model.weights})
        if mode == ModeKeys.PREDICT or training is None:
            return EstimatorSpec(mode, predictions=_predictions(model, model.outputs))
        targets = [math_ops.cast(t, o.dtype.base_dtype) for t, o in
                   zip(_by_name(labels, model.output_names, "labels"), model.outputs)]
        saving.compile_from(model, training, target_tensors=targets)
        predictions = _predictions(model, model._eval_outputs)
        if mode == ModeKeys.EVAL:
            return EstimatorSpec(mode, loss=model._eval_fetches[0], predictions=predictions)
        step = get_or_create_global_step()
        train_op = group(model.train_op, state_ops.assign_add(step, 1))
        return EstimatorSpec(mode, loss=model.total_loss, train_op=train_op,
                             predictions=predictions)

    return model_fn


def _predictions(model, outputs) -> dict:
    return dict(zip(model.output_names, outputs))


def model_to_estimator(keras_model=None, keras_model_path=None, custom_objects=None,
                       model_dir=None, config=None, checkpoint_format=None):
    """An Estimator training, evaluating and predicting with `keras_model`'s architecture,
    compile arguments and (warm-started) weights.

    Raises:
      ValueError: neither or both of keras_model / keras_model_path; a subclassed model.
    """
    if (keras_model is None) == (keras_model_path is None):
        raise ValueError("Either `keras_model` or `keras_model_path` needs to be provided, "
                         "and not both.")
    if keras_model is None:
        keras_model = saving.load_model(keras_model_path)
    if not keras_model._is_graph_network:
        raise ValueError("model_to_estimator needs a functional or Sequential model: a "
                         "subclassed model has no config to rebuild it from.")
    model_dir = model_dir or getattr(config, "model_dir", None) or tempfile.mkdtemp()
    warm_start = os.path.join(model_dir, "keras", "keras_model.ckpt")
    os.makedirs(os.path.dirname(warm_start), exist_ok=True)
    Saver(var_list={w.op.name: w for w in keras_model.weights}).save(
        K.get_session(), warm_start, write_meta_graph=False, write_state=False)
    config_dict = {"class_name": type(keras_model).__name__,
                   "config": keras_model.get_config()}
    training = saving.training_config(keras_model)
    return Estimator(_model_fn(config_dict, json.loads(training) if training else None,
                               warm_start), model_dir=model_dir, config=config)


__all__ = ["model_to_estimator"]
