"""`tensorweave serve`: SavedModels behind TensorFlow Serving's gRPC and REST APIs.

`server.ModelServer` ties together `versions` (numbered version directories, hot swaps),
`servable` (one loaded version), `api` (the requests), `batching`, `grpc_service` + `wire`
(PredictionService/ModelService under TF Serving's names) and `rest` + `rest_json`.
"""
