"""`tensorweave serve` under load, on the demo-sized CNN (benchmarks/models.py's inference
graph) exported as a SavedModel: gRPC Predict latency p50/p99 at batch 1, throughput of 32
concurrent gRPC clients with server-side batching off and on, and the server's peak RSS. With
`--tensorflow` (the peer's Python) it measures the comparator where no TF Serving binary can be
installed: TF's Session.run of the same SavedModel at batch 1, in process. Prints JSON.
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

TF = "--tensorflow" in sys.argv
if TF:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
else:
    import tensorweave as tf

SECONDS = float(os.environ.get("SERVING_BENCH_SECONDS", "5"))


def export(directory: str) -> None:
    """The CNN (2 conv + 2 pool + dense, softmax) as <directory>/1, the same graph for both."""
    x = tf.placeholder(tf.float32, [None, 28, 28, 1], name="x")
    h = tf.layers.conv2d(x, 32, 3, activation=tf.nn.relu, padding="same")
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(h, 64, 3, activation=tf.nn.relu, padding="same")
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.dense(tf.layers.flatten(h), 128, tf.nn.relu)
    probs = tf.nn.softmax(tf.layers.dense(h, 10), name="probs")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.saved_model.simple_save(sess, os.path.join(directory, "1"), {"x": x},
                                   {"probs": probs})


def percentiles(times) -> tuple:
    ms = np.asarray(times) * 1e3
    return round(float(np.percentile(ms, 50)), 3), round(float(np.percentile(ms, 99)), 3)


def tf_session_latency(directory: str) -> dict:
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], os.path.join(directory, "1"))
        sig = meta.signature_def["serving_default"]
        x, y = sig.inputs["x"].name, sig.outputs["probs"].name
        one = np.random.default_rng(0).random((1, 28, 28, 1), dtype=np.float32)
        for _ in range(50):
            sess.run(y, {x: one})
        times = []
        for _ in range(500):
            t = time.perf_counter()
            sess.run(y, {x: one})
            times.append(time.perf_counter() - t)
    p50, p99 = percentiles(times)
    return {"session_b1_p50_ms": p50, "session_b1_p99_ms": p99}


def start_server(directory: str, batching: bool):
    args = [sys.executable, "-m", "tensorweave.cli.main", "serve", "--model_name", "cnn",
            "--model_base_path", directory, "--port", "0", "--rest_api_port", "-1"]
    if batching:
        args += ["--enable_batching", "--max_batch_size", "32", "--batch_timeout_micros", "2000"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    return proc, line.split(" grpc ")[1].split()[0]


def predictor(target: str):
    import grpc

    from tensorweave.proto import serving_apis_pb2 as apis
    from tensorweave.proto.convert import tensor_to_proto
    from tensorweave.serving.wire import PredictionStub

    stub = PredictionStub(grpc.insecure_channel(target))
    request = apis.PredictRequest()
    request.model_spec.name = "cnn"
    one = np.random.default_rng(0).random((1, 28, 28, 1), dtype=np.float32)
    request.inputs["x"].CopyFrom(tensor_to_proto(one))
    return lambda: stub.Predict(request, timeout=30)


def throughput(target: str, clients: int = 32) -> float:
    done = [0] * clients
    stop = time.perf_counter() + SECONDS

    def client(k):
        call = predictor(target)
        while time.perf_counter() < stop:
            call()
            done[k] += 1

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return round(sum(done) / SECONDS, 1)


def served(directory: str) -> dict:
    import psutil

    out = {}
    for batching in (False, True):
        proc, target = start_server(directory, batching)
        try:
            call = predictor(target)
            for _ in range(50):
                call()
            if not batching:
                times = []
                for _ in range(500):
                    t = time.perf_counter()
                    call()
                    times.append(time.perf_counter() - t)
                out["grpc_b1_p50_ms"], out["grpc_b1_p99_ms"] = percentiles(times)
            key = "batching" if batching else "no_batching"
            out[f"grpc_32_clients_{key}_req_per_s"] = throughput(target)
            out[f"server_rss_{key}_MB"] = round(psutil.Process(proc.pid).memory_info().rss
                                                / 2**20, 1)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        export(directory)
        result = tf_session_latency(directory)
        if not TF:
            result.update(served(directory))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
