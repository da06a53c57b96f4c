"""ModelServer options: a token on both APIs, batching of concurrent REST requests, and the
bound on requests in flight."""

import threading

import grpc
import numpy as np
import pytest

from tensorweave import errors
from tensorweave.proto import convert
from tensorweave.proto import serving_apis_pb2 as apis
from tensorweave.serving import wire
from tensorweave.serving.batching import BatchingOptions
from tensorweave.serving.server import BoundedRunner, ModelServer
from tests.distributed.test_security import certs  # noqa: F401, F811  (the certificates fixture)
from tests.serving.conftest import EXPECTED, Rest

X = EXPECTED["x"].tolist()


def test_a_token_guards_rest_and_grpc(base_path):
    server = ModelServer("m", str(base_path), port=0, rest_api_port=0, token="s3cret")
    server.start()
    try:
        rest = Rest(server.rest_api_port)
        status, body = rest.call("/v1/models/m:predict", {"instances": X})
        assert status == 401 and body == {"error": "missing or wrong token"}
        status, _ = rest.call("/v1/models/m:predict", {"instances": X},
                              headers={"Authorization": "Bearer s3cret"})
        assert status == 200
        channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
        req = apis.PredictRequest(model_spec=apis.ModelSpec(name="m"))
        req.inputs["x"].CopyFrom(convert.tensor_to_proto(EXPECTED["x"]))
        with pytest.raises(grpc.RpcError) as info:
            wire.PredictionStub(channel).Predict(req, timeout=30)
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        resp = wire.PredictionStub(channel).Predict(
            req, timeout=30, metadata=[("authorization", "Bearer s3cret")])
        np.testing.assert_allclose(convert.tensor_from_proto(resp.outputs["probs"]),
                                   EXPECTED["probs"], atol=1e-5)
        channel.close()
    finally:
        server.stop()


def test_concurrent_rest_requests_are_batched(base_path):
    server = ModelServer("m", str(base_path), port=None, rest_api_port=0,
                         batching=BatchingOptions(max_batch_size=16,
                                                  batch_timeout_micros=300_000))
    server.start()
    try:
        rest, results = Rest(server.rest_api_port), {}

        def one(i):
            results[i] = rest.call("/v1/models/m:predict", {"instances": [X[i % 2]]})

        threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        for i, (status, body) in results.items():
            assert status == 200
            np.testing.assert_allclose(body["predictions"][0]["probs"],
                                       EXPECTED["probs"][i % 2], atol=1e-5)
        assert len(results) == 6 and server.batcher.batches_run < 6
    finally:
        server.stop()


def test_requests_beyond_max_inflight_are_unavailable():
    gate, entered = threading.Event(), threading.Event()

    def slow(*_):
        entered.set()
        gate.wait(30)
        return {}

    bounded = BoundedRunner(slow, limit=1)
    t = threading.Thread(target=bounded, args=(None, None, {}, ()))
    t.start()
    assert entered.wait(30)
    with pytest.raises(errors.UnavailableError, match="busy"):
        bounded(None, None, {}, ())
    gate.set()
    t.join(30)
    assert bounded(None, None, {}, ()) == {}


def test_tls_on_both_apis(base_path, certs):  # noqa: F811
    import json
    import ssl
    import urllib.request

    server = ModelServer("m", str(base_path), port=0, rest_api_port=0,
                         tls={"cert": certs["server_pem"], "key": certs["server_key"]})
    server.start()
    try:
        ctx = ssl.create_default_context(cafile=certs["ca_pem"])
        req = urllib.request.Request(f"https://127.0.0.1:{server.rest_api_port}/v1/models/m")
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            assert json.loads(r.read())["model_version_status"][0]["state"] == "AVAILABLE"
        with open(certs["ca_pem"], "rb") as f:
            creds = grpc.ssl_channel_credentials(root_certificates=f.read())
        channel = grpc.secure_channel(f"127.0.0.1:{server.port}", creds)
        status = wire.ModelStub(channel).GetModelStatus(
            apis.GetModelStatusRequest(model_spec=apis.ModelSpec(name="m")), timeout=30)
        assert status.model_version_status[0].state == 30
        channel.close()
        with pytest.raises(grpc.RpcError):   # plain text is refused
            plain = grpc.insecure_channel(f"127.0.0.1:{server.port}")
            wire.ModelStub(plain).GetModelStatus(apis.GetModelStatusRequest(
                model_spec=apis.ModelSpec(name="m")), timeout=5)
    finally:
        server.stop()
