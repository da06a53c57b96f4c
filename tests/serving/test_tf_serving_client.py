"""Acceptance: `tensorweave serve` as a process, queried by TF Serving's own Python client
(`tensorflow-serving-api`, in the TF peer) and by plain HTTP, for TensorFlow's SavedModel and
for one tensorweave exported; outputs equal TensorFlow's to 1e-5."""

import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from tests.serving.conftest import EXPECTED, TF_MODEL, Rest, export_scaled

HERE = os.path.dirname(os.path.abspath(__file__))
pytestmark = [pytest.mark.slow, pytest.mark.multiprocess]


@pytest.fixture
def tf_serving_peer(tf_peer):
    """The TF peer's Python, with TF Serving's client (`tensorflow-serving-api`)."""
    done = subprocess.run([tf_peer, "-c", "import tensorflow_serving.apis.predict_pb2"],
                          capture_output=True, timeout=300)
    if done.returncode != 0:
        pytest.skip("tensorflow-serving-api is not installed in the TF peer "
                    "(~/.cache/tensorweave-tf-peer/bin/pip install tensorflow-serving-api)")
    return tf_peer


@pytest.fixture
def served(tmp_path):
    """A `tensorweave serve` process over tmp_path/models (TF's model as version 1)."""
    base = tmp_path / "models"
    shutil.copytree(TF_MODEL, base / "1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tensorweave.cli.main", "serve", "--model_name", "m",
         "--model_base_path", str(base), "--port", "0", "--rest_api_port", "0",
         "--file_system_poll_wait_seconds", "0.2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().split()
        assert line[:2] == ["serving", "m"], proc.stderr.read()
        yield base, line[3], int(line[5].rsplit(":", 1)[1])
    finally:
        proc.terminate()
        proc.wait(30)


def _tf_client(tf_peer, target, inputs_path):
    done = subprocess.run([tf_peer, os.path.join(HERE, "tf_serving_client.py"), target, "m",
                           str(inputs_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_tf_serving_client_and_http_get_tensorflow_numbers(served, tf_serving_peer, tmp_path):
    tf_peer = tf_serving_peer
    base, target, rest_port = served
    np.savez(tmp_path / "in.npz", x=EXPECTED["x"])
    got = _tf_client(tf_peer, target, tmp_path / "in.npz")
    np.testing.assert_allclose(got["predict"]["probs"], EXPECTED["probs"], atol=1e-5)
    np.testing.assert_allclose(got["classify"], EXPECTED["scores"], atol=1e-5)
    np.testing.assert_allclose(got["multi_regress"], EXPECTED["regress"][:, 0], atol=1e-5)
    assert got["version"] == 1 and got["status"] == [[1, 30]]
    assert got["signatures"] == ["asset", "classify", "regress", "serving_default"]
    assert got["unknown_model"][0] == "NOT_FOUND"
    status, body = Rest(rest_port).call("/v1/models/m:predict",
                                        {"instances": EXPECTED["x"].tolist()})
    assert status == 200
    np.testing.assert_allclose([r["probs"] for r in body["predictions"]], EXPECTED["probs"],
                               atol=1e-5)


def test_our_export_served_to_the_tf_client_equals_tensorflow(served, tf_serving_peer, tmp_path):
    tf_peer = tf_serving_peer
    base, target, rest_port = served
    export_scaled(tmp_path / "staging", 0.5)
    np.savez(tmp_path / "in.npz", x=EXPECTED["x"])
    tf_run = subprocess.run(
        [tf_peer, os.path.join(HERE, "..", "saved_model", "tf_run_saved_model.py"),
         str(tmp_path / "staging"), "serving_default", str(tmp_path / "in.npz"),
         str(tmp_path / "tf_out.npz")], capture_output=True, text=True, timeout=300)
    assert tf_run.returncode == 0, tf_run.stderr[-3000:]
    want = np.load(tmp_path / "tf_out.npz")["y"]
    os.rename(tmp_path / "staging", base / "2")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        body = Rest(rest_port).call("/v1/models/m")[1]
        if any(s["version"] == "2" and s["state"] == "AVAILABLE"
               for s in body["model_version_status"]):
            break
        time.sleep(0.2)
    got = _tf_client(tf_peer, target, tmp_path / "in.npz")
    assert got["version"] == 2 and [1, 50] in got["status"]
    np.testing.assert_allclose(got["predict"]["y"], want, atol=1e-5)


def test_our_messages_have_tf_servings_field_numbers(tf_serving_peer):
    from tensorweave.proto import serving_apis_pb2

    done = subprocess.run([tf_serving_peer, os.path.join(HERE, "tf_serving_descriptors.py")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    ours = serving_apis_pb2.DESCRIPTOR.message_types_by_name
    compared = 0
    for name, d in ours.items():
        if name == "StatusProto":
            continue   # ours declares error_code as int32 (same varint as TF's enum)
        mine = {f.name: [f.number, f.type, f.is_repeated] for f in d.fields}
        for field, number, kind, repeated in theirs[name]:
            if field in mine:
                assert mine[field] == [number, kind, repeated], (name, field)
                compared += 1
            else:   # fields of TF Serving's we leave out: newer, LLM-serving options
                assert name == "PredictRequest" and number >= 5, (name, field)
    assert compared >= 40
