"""TF Serving's gRPC services from `ModelServer` (called under TF Serving's method names):
Predict, Classify, Regress, GetModelMetadata, GetModelStatus, and their error statuses."""

import grpc
import numpy as np
import pytest

from tensorweave.proto import convert, example_pb2, feature_pb2
from tensorweave.proto import serving_apis_pb2 as apis
from tensorweave.serving import wire
from tests.serving.conftest import EXPECTED


@pytest.fixture
def stubs(server):
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    yield wire.PredictionStub(channel), wire.ModelStub(channel)
    channel.close()


def _predict_request(name="m", signature="", **inputs):
    req = apis.PredictRequest()
    req.model_spec.name, req.model_spec.signature_name = name, signature
    for key, value in inputs.items():
        req.inputs[key].CopyFrom(convert.tensor_to_proto(value))
    return req


def _examples(spec_signature: str, kind):
    req = kind()
    req.model_spec.name, req.model_spec.signature_name = "m", spec_signature
    for row in EXPECTED["x"]:
        ex = req.input.example_list.examples.add()
        ex.features.feature["x"].CopyFrom(feature_pb2.Feature(
            float_list=feature_pb2.FloatList(value=row)))
    return req


def test_predict_matches_tensorflow(stubs):
    predict, _ = stubs
    resp = predict.Predict(_predict_request(x=EXPECTED["x"]), timeout=30)
    np.testing.assert_allclose(convert.tensor_from_proto(resp.outputs["probs"]),
                               EXPECTED["probs"], atol=1e-5)
    assert resp.model_spec.version.value == 1
    assert resp.model_spec.signature_name == "serving_default"
    req = _predict_request(x=EXPECTED["x"])
    req.output_filter.append("logits")
    assert list(predict.Predict(req, timeout=30).outputs) == ["logits"]


def test_classify_and_regress(stubs):
    predict, _ = stubs
    resp = predict.Classify(_examples("classify", apis.ClassificationRequest), timeout=30)
    got = [[c.score for c in cl.classes] for cl in resp.result.classifications]
    np.testing.assert_allclose(got, EXPECTED["scores"], atol=1e-5)
    assert [c.label for c in resp.result.classifications[0].classes] == ["a", "b", "c", "d"]
    resp = predict.Regress(_examples("regress", apis.RegressionRequest), timeout=30)
    np.testing.assert_allclose([r.value for r in resp.result.regressions],
                               EXPECTED["regress"][:, 0], atol=1e-5)


def test_context_is_merged_into_each_example(stubs):
    predict, _ = stubs
    req = apis.RegressionRequest()
    req.model_spec.name, req.model_spec.signature_name = "m", "regress"
    lst = req.input.example_list_with_context
    lst.context.features.feature["x"].float_list.value.extend(EXPECTED["x"][0])
    lst.examples.add().CopyFrom(example_pb2.Example())
    resp = predict.Regress(req, timeout=30)
    np.testing.assert_allclose(resp.result.regressions[0].value, EXPECTED["regress"][0, 0],
                               atol=1e-5)


def test_metadata_and_status(stubs):
    predict, model = stubs
    req = apis.GetModelMetadataRequest(metadata_field=["signature_def"])
    req.model_spec.name = "m"
    resp = predict.GetModelMetadata(req, timeout=30)
    packed = resp.metadata["signature_def"]
    assert packed.type_url == "type.googleapis.com/tensorflow.serving.SignatureDefMap"
    sigs = apis.SignatureDefMap.FromString(packed.value).signature_def
    assert set(sigs) == {"serving_default", "classify", "regress", "asset"}
    status = model.GetModelStatus(apis.GetModelStatusRequest(
        model_spec=apis.ModelSpec(name="m")), timeout=30)
    assert [(s.version, s.state) for s in status.model_version_status] == [(1, 30)]


@pytest.mark.parametrize("request_, code, words", [
    (_predict_request("nope", x=EXPECTED["x"]), grpc.StatusCode.NOT_FOUND,
     "Servable not found for request: Latest(nope)"),
    (_predict_request(signature="zzz", x=EXPECTED["x"]), grpc.StatusCode.INVALID_ARGUMENT,
     'signature key "zzz" not found'),
    (_predict_request(y=EXPECTED["x"]), grpc.StatusCode.INVALID_ARGUMENT, "Sent extra: {y}"),
    (_predict_request(x=EXPECTED["x"].astype(np.float64)), grpc.StatusCode.INVALID_ARGUMENT,
     "to be float32 but float64 is provided"),
    (_predict_request(x=EXPECTED["x"][:, :2]), grpc.StatusCode.INVALID_ARGUMENT, "shape [2, 2]"),
])
def test_predict_errors(stubs, request_, code, words):
    predict, _ = stubs
    with pytest.raises(grpc.RpcError) as info:
        predict.Predict(request_, timeout=30)
    assert info.value.code() == code and words in info.value.details()
    predict.Predict(_predict_request(x=EXPECTED["x"]), timeout=30)   # still serving


def test_version_that_is_not_served_and_oversized_messages(stubs):
    predict, model = stubs
    req = _predict_request(x=EXPECTED["x"])
    req.model_spec.version.value = 9
    with pytest.raises(grpc.RpcError) as info:
        predict.Predict(req, timeout=30)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as info:
        model.GetModelStatus(apis.GetModelStatusRequest(model_spec=apis.ModelSpec(name="m",
                             version={"value": 9})), timeout=30)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    big = _predict_request(x=np.zeros((100000, 3), np.float32))   # 1.2 MB > the 1 MiB limit
    with pytest.raises(grpc.RpcError) as info:
        predict.Predict(big, timeout=30)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_multi_inference_runs_each_task_over_one_input(stubs):
    predict, _ = stubs
    req = apis.MultiInferenceRequest()
    req.input.CopyFrom(_examples("classify", apis.ClassificationRequest).input)
    for sig, method in (("classify", "tensorflow/serving/classify"),
                        ("regress", "tensorflow/serving/regress")):
        task = req.tasks.add(method_name=method)
        task.model_spec.name, task.model_spec.signature_name = "m", sig
    resp = predict.MultiInference(req, timeout=30)
    scores = [[c.score for c in cl.classes]
              for cl in resp.results[0].classification_result.classifications]
    np.testing.assert_allclose(scores, EXPECTED["scores"], atol=1e-5)
    np.testing.assert_allclose([r.value for r in resp.results[1].regression_result.regressions],
                               EXPECTED["regress"][:, 0], atol=1e-5)
    req.tasks[1].model_spec.signature_name = "classify"
    with pytest.raises(grpc.RpcError, match="Duplicate evaluation of signature: classify"):
        predict.MultiInference(req, timeout=30)
