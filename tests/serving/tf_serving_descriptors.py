"""Run with the TF peer: prints {message name: [[field, number, type, repeated], ...]} of TF
Serving's API messages (tensorflow_serving.apis), for comparing field numbers with ours."""

import json

from tensorflow_serving.apis import (
    classification_pb2,
    get_model_metadata_pb2,
    get_model_status_pb2,
    inference_pb2,
    input_pb2,
    model_pb2,
    predict_pb2,
    regression_pb2,
)


def fields(d):
    return [[f.name, f.number, f.type, f.is_repeated] for f in d.fields]


out = {}
for module in (model_pb2, predict_pb2, input_pb2, classification_pb2, regression_pb2,
               inference_pb2, get_model_metadata_pb2, get_model_status_pb2):
    for name, d in module.DESCRIPTOR.message_types_by_name.items():
        out[name] = fields(d)
print(json.dumps(out))
