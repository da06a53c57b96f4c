"""Exporting a trained model for serving (TF's `estimator/export`): receivers, export outputs,
and `export_saved_model`, the hook an Estimator's `export_saved_model` calls.

    def serving_graph():                     # run in a fresh graph
        receiver = build_raw_serving_input_receiver_fn({"x": x_spec})()
        predictions = model(receiver.features)
        return receiver.receiver_tensors, {"serving_default": PredictOutput(predictions)}

    path = export_saved_model("export", serving_graph, tf.train.latest_checkpoint(ckpt_dir))
    # → export/<timestamp>/ : written under export/temp-<timestamp>, then renamed, so a
    #   server watching export/ never sees it half-written

An Estimator calls it with a `build_serving_graph` that runs its `serving_input_receiver_fn`
and its `model_fn` in PREDICT mode and returns the receiver tensors and the spec's
`export_outputs` (or {DEFAULT: PredictOutput(predictions)}).
"""

from __future__ import annotations

import os
import shutil
import time

from tensorweave import dtypes
from tensorweave.client.session import Session
from tensorweave.framework.graph import Graph, GraphKeys
from tensorweave.ops.array_ops import placeholder
from tensorweave.saved_model import signature_constants as sc
from tensorweave.saved_model import signature_def_utils, tag_constants
from tensorweave.saved_model.builder import SavedModelBuilder
from tensorweave.saved_model.main_op import main_op as default_main_op
from tensorweave.training.saver import Saver


# -- receivers ---------------------------------------------------------------------------------
class ServingInputReceiver:
    """What a serving input function returns: the `features` the model reads and the
    `receiver_tensors` a request feeds (a Tensor is wrapped as {"input": tensor})."""

    def __init__(self, features, receiver_tensors, receiver_tensors_alternatives=None):
        self.features = features if isinstance(features, dict) else {"feature": features}
        self.receiver_tensors = receiver_tensors if isinstance(receiver_tensors, dict) \
            else {"input": receiver_tensors}
        if not self.receiver_tensors:
            raise ValueError("receiver_tensors must be defined.")
        self.receiver_tensors_alternatives = receiver_tensors_alternatives


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A receiver fn feeding each feature through a placeholder of its dtype and shape
    (the batch dimension `default_batch_size`)."""

    def fn():
        received = {}
        for name, t in features.items():
            shape = [default_batch_size] + t.shape.as_list()[1:]
            received[name] = placeholder(t.dtype, shape, name=name)
        return ServingInputReceiver(received, received)

    return fn


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A receiver fn taking serialized tf.Examples (`input_example_tensor`) parsed with
    `feature_spec`."""
    from tensorweave.ops.parsing_ops import parse_example

    def fn():
        serialized = placeholder(dtypes.string, [default_batch_size],
                                 name="input_example_tensor")
        features = parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {"examples": serialized})

    return fn


# -- export outputs ----------------------------------------------------------------------------
def _single_string_input(receiver_tensors: dict, what: str):
    if len(receiver_tensors) != 1:
        raise ValueError(f"{what} input must be a single string Tensor; got "
                         f"{receiver_tensors}")
    examples = next(iter(receiver_tensors.values()))
    if examples.dtype != dtypes.string:
        raise ValueError(f"{what} input must be a single string Tensor; got "
                         f"{receiver_tensors}")
    return examples


class PredictOutput:
    """The predict signature over `outputs` (a Tensor or {key: Tensor})."""

    def __init__(self, outputs):
        self.outputs = outputs if isinstance(outputs, dict) else {sc.PREDICT_OUTPUTS: outputs}

    def as_signature_def(self, receiver_tensors: dict):
        return signature_def_utils.predict_signature_def(receiver_tensors, self.outputs)


class ClassificationOutput:
    """The classify signature: float `scores` and/or string `classes`."""

    def __init__(self, scores=None, classes=None):
        if scores is None and classes is None:
            raise ValueError("At least one of scores and classes must be set.")
        self.scores, self.classes = scores, classes

    def as_signature_def(self, receiver_tensors: dict):
        examples = _single_string_input(receiver_tensors, "Classification")
        return signature_def_utils.classification_signature_def(examples, self.classes,
                                                                self.scores)


class RegressionOutput:
    """The regress signature: one float `value` per example."""

    def __init__(self, value):
        self.value = value

    def as_signature_def(self, receiver_tensors: dict):
        examples = _single_string_input(receiver_tensors, "Regression")
        return signature_def_utils.regression_signature_def(examples, self.value)


def build_all_signature_defs(receiver_tensors: dict, export_outputs: dict) -> dict:
    """{key: SignatureDef} of every export output (SignatureDefs are taken as they are)."""
    out = {}
    for key, output in export_outputs.items():
        out[key] = output if hasattr(output, "method_name") else \
            output.as_signature_def(receiver_tensors)
    return out


# -- the export --------------------------------------------------------------------------------
def timestamped_export_dir(export_dir_base) -> str:
    """`export_dir_base/<seconds since epoch>`, a name not taken yet (waits up to 10 s)."""
    base = os.fsdecode(export_dir_base)
    for _ in range(10):
        path = os.path.join(base, str(int(time.time())))
        if not os.path.exists(path):
            return path
        time.sleep(1)
    raise RuntimeError(f"Failed to obtain a unique export directory name under {base}")


def export_saved_model(export_dir_base, build_serving_graph, checkpoint_path, *,
                       tags=(tag_constants.SERVING,), assets_extra=None, as_text=False,
                       strip_default_attrs=False) -> bytes:
    """Exports the graph `build_serving_graph()` builds, with its variables restored from
    `checkpoint_path`, as a SavedModel in a new timestamped directory; returns its path (bytes).

    Args:
      build_serving_graph: called in a fresh graph; returns (receiver_tensors: {key: Tensor},
        export_outputs: {signature key: PredictOutput | ClassificationOutput |
        RegressionOutput | SignatureDef}).
      checkpoint_path: a checkpoint prefix holding the graph's variables.
      assets_extra: {destination under assets.extra/: source file} copied as they are.

    Raises:
      ValueError: no checkpoint at `checkpoint_path`, or a bad export output.
    """
    if not checkpoint_path:
        raise ValueError("Couldn't find trained model at "
                         f"{os.fsdecode(export_dir_base)}.")
    export_dir = timestamped_export_dir(export_dir_base)
    temp_dir = os.path.join(os.path.dirname(export_dir), "temp-" + os.path.basename(export_dir))
    graph = Graph()
    with graph.as_default():
        receiver_tensors, export_outputs = build_serving_graph()
        signatures = build_all_signature_defs(receiver_tensors, export_outputs)
        saver = Saver(graph.get_collection(GraphKeys.GLOBAL_VARIABLES) +
                      graph.get_collection(GraphKeys.SAVEABLE_OBJECTS), sharded=True,
                      allow_empty=True)
        init = default_main_op()
        with Session(graph=graph) as sess:
            saver.restore(sess, checkpoint_path)
            builder = SavedModelBuilder(temp_dir)
            builder.add_meta_graph_and_variables(
                sess, list(tags), signature_def_map=signatures,
                assets_collection=graph.get_collection(GraphKeys.ASSET_FILEPATHS),
                main_op=init, strip_default_attrs=strip_default_attrs, saver=saver)
            builder.save(as_text)
    _copy_assets_extra(temp_dir, assets_extra)
    os.rename(temp_dir, export_dir)
    return os.fsencode(export_dir)


def _copy_assets_extra(export_dir: str, assets_extra) -> None:
    for dest, source in (assets_extra or {}).items():
        target = os.path.join(export_dir, "assets.extra", dest)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(source, target)


__all__ = ["ClassificationOutput", "PredictOutput", "RegressionOutput",
           "ServingInputReceiver", "build_all_signature_defs",
           "build_parsing_serving_input_receiver_fn", "build_raw_serving_input_receiver_fn",
           "export_saved_model"]
