"""Run with the TensorFlow peer (which has `tensorflow-serving-api`): queries a model server
as TF Serving's own Python client does and prints the answers as JSON.

    python tf_serving_client.py HOST:PORT MODEL INPUTS.npz [SIGNATURE]

Prints {"predict": {output: list}, "version": N, "signatures": [...], "status": [[v, state]],
"classify": [[score, ...], ...] and "multi_regress" (MultiInference) when the model has
"classify" and "regress" signatures}.
"""

import json
import sys

import grpc
import numpy as np
import tensorflow as tf
from tensorflow_serving.apis import (
    classification_pb2,
    get_model_metadata_pb2,
    get_model_status_pb2,
    inference_pb2,
    model_service_pb2_grpc,
    predict_pb2,
    prediction_service_pb2_grpc,
)


def main(target, model, inputs_path, signature="serving_default"):
    channel = grpc.insecure_channel(target)
    stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
    inputs = dict(np.load(inputs_path))
    req = predict_pb2.PredictRequest()
    req.model_spec.name, req.model_spec.signature_name = model, signature
    for key, value in inputs.items():
        req.inputs[key].CopyFrom(tf.make_tensor_proto(value))
    resp = stub.Predict(req, timeout=60)
    out = {"predict": {k: tf.make_ndarray(v).tolist() for k, v in resp.outputs.items()},
           "version": resp.model_spec.version.value}
    meta_req = get_model_metadata_pb2.GetModelMetadataRequest(metadata_field=["signature_def"])
    meta_req.model_spec.name = model
    meta = stub.GetModelMetadata(meta_req, timeout=60)
    sigs = get_model_metadata_pb2.SignatureDefMap()
    meta.metadata["signature_def"].Unpack(sigs)
    out["signatures"] = sorted(sigs.signature_def)
    status_req = get_model_status_pb2.GetModelStatusRequest()
    status_req.model_spec.name = model
    status = model_service_pb2_grpc.ModelServiceStub(channel).GetModelStatus(status_req,
                                                                               timeout=60)
    out["status"] = [[s.version, s.state] for s in status.model_version_status]
    if "classify" in sigs.signature_def:
        creq = classification_pb2.ClassificationRequest()
        creq.model_spec.name, creq.model_spec.signature_name = model, "classify"
        for row in inputs["x"]:
            ex = creq.input.example_list.examples.add()
            ex.features.feature["x"].float_list.value.extend(row.tolist())
        cresp = stub.Classify(creq, timeout=60)
        out["classify"] = [[c.score for c in cl.classes]
                           for cl in cresp.result.classifications]
        mreq = inference_pb2.MultiInferenceRequest()
        mreq.input.CopyFrom(creq.input)
        for sig in ("classify", "regress"):
            task = mreq.tasks.add(method_name=f"tensorflow/serving/{sig}")
            task.model_spec.name, task.model_spec.signature_name = model, sig
        mresp = stub.MultiInference(mreq, timeout=60)
        out["multi_regress"] = [r.value for r in mresp.results[1].regression_result.regressions]
    try:
        bad = predict_pb2.PredictRequest()
        bad.model_spec.name = "no_such_model"
        stub.Predict(bad, timeout=60)
    except grpc.RpcError as e:
        out["unknown_model"] = [e.code().name, e.details()]
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:])
