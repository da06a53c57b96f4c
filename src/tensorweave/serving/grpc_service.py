"""The gRPC side of `tensorweave serve`: TF Serving's PredictionService and ModelService
over `api.Models`, errors returned as gRPC statuses with TF Serving's codes."""

from __future__ import annotations

import functools
import logging

import grpc
import numpy as np

from tensorweave import errors
from tensorweave.proto import convert
from tensorweave.proto import serving_apis_pb2 as apis
from tensorweave.saved_model.signature_constants import (
    CLASSIFY_METHOD_NAME,
    REGRESS_METHOD_NAME,
)
from tensorweave.serving.api import SIGNATURE_DEF_MAP_URL, Models, Spec, serialized_examples
from tensorweave.serving.servable import invalid

_LOG = logging.getLogger("tensorweave")
_STATUS = {c.value[0]: c for c in grpc.StatusCode}


def _rpc(method):
    """Turns an OpError (and a bad tensor) into the call's status; the server keeps going."""

    @functools.wraps(method)
    def call(self, request, context):
        try:
            return method(self, request)
        except errors.OpError as e:
            context.abort(_STATUS.get(e.error_code, grpc.StatusCode.UNKNOWN), e.message)
        except (TypeError, ValueError) as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))

    return call


def _arrays(protos) -> dict[str, np.ndarray]:
    out = {}
    for key, proto in protos.items():
        try:
            out[key] = convert.tensor_from_proto(proto)
        except (TypeError, ValueError) as e:
            raise invalid(f"input {key!r} is not a valid TensorProto: {e}") from None
    return out


class ServingServicer:
    """Predict, Classify, Regress, MultiInference, GetModelMetadata, GetModelStatus (see
    serving/wire.py)."""

    def __init__(self, models: Models):
        self.models = models

    @_rpc
    def Predict(self, request):  # noqa: N802 - gRPC method names
        spec = Spec.from_proto(request.model_spec)
        version, sig, outputs = self.models.predict(spec, _arrays(request.inputs),
                                                    list(request.output_filter))
        response = apis.PredictResponse(model_spec=spec.to_proto(version, sig))
        for key, value in outputs.items():
            response.outputs[key].CopyFrom(convert.tensor_to_proto(value))
        return response

    @_rpc
    def Classify(self, request):  # noqa: N802
        spec = Spec.from_proto(request.model_spec)
        version, sig, rows = self.models.classify(spec, serialized_examples(request.input))
        response = apis.ClassificationResponse(model_spec=spec.to_proto(version, sig))
        for row in rows:
            item = response.result.classifications.add()
            for label, score in row:
                item.classes.add(label=label, score=score)
        return response

    @_rpc
    def Regress(self, request):  # noqa: N802
        spec = Spec.from_proto(request.model_spec)
        version, sig, values = self.models.regress(spec, serialized_examples(request.input))
        response = apis.RegressionResponse(model_spec=spec.to_proto(version, sig))
        for v in values:
            response.result.regressions.add(value=v)
        return response

    @_rpc
    def MultiInference(self, request):  # noqa: N802
        """Each task (classify or regress, one model, distinct signatures) over one input."""
        examples = serialized_examples(request.input)
        specs = [Spec.from_proto(t.model_spec) for t in request.tasks]
        if not specs:
            raise invalid("MultiInferenceRequest has no tasks")
        if len({s.name for s in specs}) != 1:
            raise invalid("All ModelSpecs in a MultiInferenceRequest must access the same "
                          "model name.")
        signatures = [s.signature_name or "serving_default" for s in specs]
        for name in signatures:
            if signatures.count(name) > 1:
                raise invalid(f"Duplicate evaluation of signature: {name}")
        response = apis.MultiInferenceResponse()
        for task, spec in zip(request.tasks, specs):
            response.results.append(self._inference(task.method_name, spec, examples))
        return response

    def _inference(self, method: str, spec: Spec, examples) -> apis.InferenceResult:
        if method == CLASSIFY_METHOD_NAME:
            version, sig, rows = self.models.classify(spec, examples)
            out = apis.InferenceResult(model_spec=spec.to_proto(version, sig))
            for row in rows:
                item = out.classification_result.classifications.add()
                for label, score in row:
                    item.classes.add(label=label, score=score)
            return out
        if method == REGRESS_METHOD_NAME:
            version, sig, values = self.models.regress(spec, examples)
            out = apis.InferenceResult(model_spec=spec.to_proto(version, sig))
            for v in values:
                out.regression_result.regressions.add(value=v)
            return out
        raise invalid(f"Unsupported signature method_name: {method}")

    @_rpc
    def GetModelMetadata(self, request):  # noqa: N802
        spec = Spec.from_proto(request.model_spec)
        if not request.metadata_field:
            raise invalid("GetModelMetadataRequest must specify at least one metadata_field")
        version, signatures = self.models.metadata(spec, list(request.metadata_field))
        sig_map = apis.SignatureDefMap()
        for key, sig in signatures.items():
            sig_map.signature_def[key].CopyFrom(sig)
        response = apis.GetModelMetadataResponse(model_spec=spec.to_proto(version))
        packed = response.metadata["signature_def"]
        packed.type_url = SIGNATURE_DEF_MAP_URL
        packed.value = sig_map.SerializeToString()
        return response

    @_rpc
    def GetModelStatus(self, request):  # noqa: N802
        response = apis.GetModelStatusResponse()
        for st in self.models.status(Spec.from_proto(request.model_spec)):
            item = response.model_version_status.add(version=st.version, state=st.state)
            item.status.error_code = st.error_code
            item.status.error_message = st.error_message
        return response
