"""`tf.saved_model.signature_def_utils`: SignatureDefs for the predict, classify and regress
APIs of TensorFlow Serving, and the checks a server makes of them."""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.proto import meta_graph_pb2
from tensorweave.saved_model import signature_constants as sc
from tensorweave.saved_model.utils import build_tensor_info


def build_signature_def(inputs=None, outputs=None, method_name=None):
    """A SignatureDef from {key: TensorInfo} maps and a method name."""
    sig = meta_graph_pb2.SignatureDef()
    for key, info in (inputs or {}).items():
        sig.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        sig.outputs[key].CopyFrom(info)
    if method_name is not None:
        sig.method_name = method_name
    return sig


def _infos(tensors: dict) -> dict:
    return {key: build_tensor_info(t) for key, t in tensors.items()}


def predict_signature_def(inputs, outputs):
    """The predict signature: {key: Tensor} inputs and outputs.

    Raises:
      ValueError: `inputs` or `outputs` is None or empty.
    """
    if not inputs:
        raise ValueError("Prediction inputs cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction outputs cannot be None or empty.")
    return build_signature_def(_infos(inputs), _infos(outputs), sc.PREDICT_METHOD_NAME)


def _check_examples(api: str, examples) -> None:
    if examples is None:
        raise ValueError(f"{api} examples cannot be None.")
    if not hasattr(examples, "dtype") or examples.dtype != dtypes.string:
        raise ValueError(f"{api} examples must be a string Tensor.")


def classification_signature_def(examples, classes, scores):
    """The classify signature: serialized tf.Examples → classes (string) and/or scores (float).

    Raises:
      ValueError: `examples` is missing or not a string tensor; both outputs are None; an
        output of the wrong dtype.
    """
    _check_examples("Classification", examples)
    if classes is None and scores is None:
        raise ValueError("Classification classes and scores cannot both be None.")
    outputs = {}
    if classes is not None:
        if classes.dtype != dtypes.string:
            raise ValueError("Classification classes must be a string Tensor.")
        outputs[sc.CLASSIFY_OUTPUT_CLASSES] = classes
    if scores is not None:
        if not scores.dtype.is_floating:
            raise ValueError("Classification scores must be a float Tensor.")
        outputs[sc.CLASSIFY_OUTPUT_SCORES] = scores
    return build_signature_def({sc.CLASSIFY_INPUTS: build_tensor_info(examples)},
                               _infos(outputs), sc.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples, predictions):
    """The regress signature: serialized tf.Examples → one float per example.

    Raises:
      ValueError: `examples` is missing or not a string tensor; `predictions` missing or not
        floating point.
    """
    _check_examples("Regression", examples)
    if predictions is None:
        raise ValueError("Regression predictions cannot be None.")
    if not predictions.dtype.is_floating:
        raise ValueError("Regression predictions must be a float Tensor.")
    return build_signature_def({sc.REGRESS_INPUTS: build_tensor_info(examples)},
                               {sc.REGRESS_OUTPUTS: build_tensor_info(predictions)},
                               sc.REGRESS_METHOD_NAME)


def is_valid_signature(signature_def) -> bool:
    """Whether a SignatureDef can be served: named method, and TF Serving's I/O rules for it."""
    if signature_def is None or not signature_def.method_name:
        return False
    method = signature_def.method_name
    if method == sc.PREDICT_METHOD_NAME:
        return bool(signature_def.inputs) and bool(signature_def.outputs)
    if method == sc.CLASSIFY_METHOD_NAME:
        return _valid_classify(signature_def)
    if method == sc.REGRESS_METHOD_NAME:
        return _valid_regress(signature_def)
    return False


def _string_input(sig, key: str) -> bool:
    return set(sig.inputs) == {key} and sig.inputs[key].dtype == dtypes.string.as_datatype_enum


def _float(info) -> bool:
    return dtypes.as_dtype(info.dtype).is_floating


def _valid_classify(sig) -> bool:
    outs = set(sig.outputs)
    if not _string_input(sig, sc.CLASSIFY_INPUTS) or not outs or \
            outs - {sc.CLASSIFY_OUTPUT_CLASSES, sc.CLASSIFY_OUTPUT_SCORES}:
        return False
    classes = sig.outputs.get(sc.CLASSIFY_OUTPUT_CLASSES)
    scores = sig.outputs.get(sc.CLASSIFY_OUTPUT_SCORES)
    return (classes is None or classes.dtype == dtypes.string.as_datatype_enum) and \
        (scores is None or _float(scores))


def _valid_regress(sig) -> bool:
    return _string_input(sig, sc.REGRESS_INPUTS) and set(sig.outputs) == {sc.REGRESS_OUTPUTS} \
        and _float(sig.outputs[sc.REGRESS_OUTPUTS])


__all__ = ["build_signature_def", "classification_signature_def", "is_valid_signature",
           "predict_signature_def", "regression_signature_def"]
