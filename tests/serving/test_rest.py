"""TF Serving's REST API from `ModelServer` on TensorFlow's SavedModel: row and columnar
predict, classify, regress, status and metadata, and TF Serving's error bodies and codes."""

import base64

import numpy as np
import pytest

from tests.serving.conftest import EXPECTED

X = EXPECTED["x"].tolist()


def test_predict_row_format_matches_tensorflow(rest):
    status, body = rest.call("/v1/models/m:predict", {"instances": X})
    assert status == 200
    probs = np.array([row["probs"] for row in body["predictions"]])
    np.testing.assert_allclose(probs, EXPECTED["probs"], atol=1e-5)
    logits = np.array([row["logits"] for row in body["predictions"]])
    np.testing.assert_allclose(logits, EXPECTED["logits"], atol=1e-5)


def test_predict_columnar_format_and_version_path(rest):
    status, body = rest.call("/v1/models/m/versions/1:predict", {"inputs": {"x": X}})
    assert status == 200
    np.testing.assert_allclose(body["outputs"]["probs"], EXPECTED["probs"], atol=1e-5)
    status, body = rest.call("/v1/models/m:predict", {"inputs": X})   # one input: bare value
    assert status == 200 and set(body["outputs"]) == {"probs", "logits"}


def test_classify_and_regress(rest):
    examples = [{"x": row} for row in X]
    status, body = rest.call("/v1/models/m:classify",
                             {"signature_name": "classify", "examples": examples})
    assert status == 200
    assert [label for label, _ in body["results"][0]] == ["a", "b", "c", "d"]
    np.testing.assert_allclose([[s for _, s in r] for r in body["results"]], EXPECTED["scores"],
                               atol=1e-5)
    status, body = rest.call("/v1/models/m:regress",
                             {"signature_name": "regress", "examples": examples})
    assert status == 200
    np.testing.assert_allclose(body["results"], EXPECTED["regress"][:, 0], atol=1e-5)


def test_status_and_metadata(rest):
    assert rest.call("/v1/models/m") == (200, {"model_version_status": [
        {"version": "1", "state": "AVAILABLE",
         "status": {"error_code": "OK", "error_message": ""}}]})
    status, body = rest.call("/v1/models/m/versions/1/metadata")
    assert status == 200 and body["model_spec"] == {"name": "m", "signature_name": "",
                                                    "version": "1"}
    sig = body["metadata"]["signature_def"]["signature_def"]["serving_default"]
    assert sig["method_name"] == "tensorflow/serving/predict"
    assert sig["inputs"]["x"] == {"name": "x:0", "dtype": "DT_FLOAT", "tensor_shape": {
        "dim": [{"size": "-1"}, {"size": "3"}]}}


def test_b64_inputs_and_string_outputs(rest):
    from tensorweave.proto import example_pb2

    examples = []
    for row in EXPECTED["x"]:
        ex = example_pb2.Example()
        ex.features.feature["x"].float_list.value.extend(row)
        examples.append({"b64": base64.b64encode(ex.SerializeToString()).decode()})
    status, body = rest.call("/v1/models/m:predict",
                             {"signature_name": "classify", "instances": examples})
    assert status == 200, body
    assert body["predictions"][1]["classes"] == ["a", "b", "c", "d"]
    np.testing.assert_allclose([p["scores"] for p in body["predictions"]], EXPECTED["scores"],
                               atol=1e-5)
    status, body = rest.call("/v1/models/m:predict",
                             {"signature_name": "classify",
                              "instances": [{"b64": base64.b64encode(b"\x00bad").decode()}]})
    # a malformed serialized Example is the model's INVALID_ARGUMENT, not a crash
    assert status == 400 and "error" in body


@pytest.mark.parametrize("path, body, code, words", [
    ("/v1/models/nope:predict", {"instances": X}, 404, "Servable not found for request: "
                                                       "Latest(nope)"),
    ("/v1/models/m/versions/7:predict", {"instances": X}, 404, "Specific(m, 7)"),
    ("/v1/models/m:predict", {"signature_name": "zzz", "instances": X}, 400,
     'Serving signature key "zzz" not found.'),
    ("/v1/models/m:predict", {"inputs": {"x": X, "y": X}}, 400, "Sent extra: {y}"),
    ("/v1/models/m:predict", {"inputs": {}}, 400, "Missing but required: {x}"),
    ("/v1/models/m:predict", {"instances": [["a", "b", "c"]]}, 400,
     "is not of expected type: float"),
    ("/v1/models/m:predict", {"instances": [[1.0, 2.0]]}, 400, "shape [1, 2]"),
    ("/v1/models/m:predict", {"instances": [[1.0, 2.0, 3.0], [1.0]]}, 400, "Failed to process"),
    ("/v1/models/m:predict", {"instances": X, "inputs": X}, 400, "exactly one of"),
    ("/v1/models/m:regress", {"signature_name": "serving_default",
                              "examples": [{"x": X[0]}]}, 400,
     "Expected regression signature method_name"),
    ("/v1/models/m:frobnicate", {}, 400, "Malformed request"),
])
def test_errors_have_tf_serving_codes_and_the_server_keeps_serving(rest, path, body, code,
                                                                   words):
    status, got = rest.call(path, body)
    assert status == code and words in got["error"], got
    assert rest.call("/v1/models/m:predict", {"instances": X})[0] == 200


def test_malformed_json_and_oversized_bodies(rest):
    status, got = rest.call("/v1/models/m:predict", raw=b"{not json")
    assert status == 400 and got["error"].startswith("JSON Parse error")
    status, got = rest.call("/v1/models/m:predict", raw=b" " * (2 << 20))
    assert status == 413 and "limit" in got["error"]
    assert rest.call("/v1/models/nope")[0] == 404
    assert rest.call("/v1/models/m:predict", {"instances": X})[0] == 200


def test_a_chunked_body_is_read(server):
    import http.client
    import json

    conn = http.client.HTTPConnection("127.0.0.1", server.rest_api_port, timeout=30)
    body = json.dumps({"instances": X}).encode()
    conn.request("POST", "/v1/models/m:predict", body=iter([body[:10], body[10:]]),
                 encode_chunked=True, headers={"Transfer-Encoding": "chunked"})
    resp = conn.getresponse()
    assert resp.status == 200
    probs = [row["probs"] for row in json.loads(resp.read())["predictions"]]
    np.testing.assert_allclose(probs, EXPECTED["probs"], atol=1e-5)
    conn.close()
