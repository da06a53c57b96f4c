"""TF Serving's gRPC services as clients call them: `/tensorflow.serving.PredictionService/...`
and `/tensorflow.serving.ModelService/GetModelStatus`, carrying the messages of
proto/serving_apis.proto (TF Serving's field numbers, so their bytes are TF Serving's).

`generic_handlers(impl)` registers `impl`'s methods under those names; `PredictionStub` and
`ModelStub` call them from Python.
"""

from __future__ import annotations

import grpc

from tensorweave.proto import serving_apis_pb2 as apis

PREDICTION_SERVICE = "tensorflow.serving.PredictionService"
MODEL_SERVICE = "tensorflow.serving.ModelService"

METHODS: dict[str, dict[str, tuple]] = {
    PREDICTION_SERVICE: {
        "Classify": (apis.ClassificationRequest, apis.ClassificationResponse),
        "Regress": (apis.RegressionRequest, apis.RegressionResponse),
        "Predict": (apis.PredictRequest, apis.PredictResponse),
        "MultiInference": (apis.MultiInferenceRequest, apis.MultiInferenceResponse),
        "GetModelMetadata": (apis.GetModelMetadataRequest, apis.GetModelMetadataResponse),
    },
    MODEL_SERVICE: {
        "GetModelStatus": (apis.GetModelStatusRequest, apis.GetModelStatusResponse),
    },
}


def generic_handlers(impl) -> list[grpc.GenericRpcHandler]:
    """One handler per service; method `M` calls `impl.M(request, context)`."""
    out = []
    for service, methods in METHODS.items():
        table = {name: grpc.unary_unary_rpc_method_handler(
            getattr(impl, name), request_deserializer=req.FromString,
            response_serializer=resp.SerializeToString)
            for name, (req, resp) in methods.items()}
        out.append(grpc.method_handlers_generic_handler(service, table))
    return out


class _Stub:
    SERVICE = ""

    def __init__(self, channel: grpc.Channel):
        for name, (req, resp) in METHODS[self.SERVICE].items():
            setattr(self, name, channel.unary_unary(
                f"/{self.SERVICE}/{name}", request_serializer=req.SerializeToString,
                response_deserializer=resp.FromString))


class PredictionStub(_Stub):
    """`Predict`, `Classify`, `Regress`, `MultiInference`, `GetModelMetadata` on a channel."""

    SERVICE = PREDICTION_SERVICE


class ModelStub(_Stub):
    """`GetModelStatus` on a channel."""

    SERVICE = MODEL_SERVICE
