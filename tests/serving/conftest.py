"""A model base path with TF's SavedModel as version 1, and a started in-process server."""

import json
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.serving.server import ModelServer

HERE = Path(__file__).resolve().parent
TF_MODEL = HERE.parent / "saved_model" / "tf_saved_model"
EXPECTED = np.load(HERE.parent / "saved_model" / "tf_saved_model.expected.npz")


def export_scaled(export_dir, scale: float) -> None:
    """A tensorweave SavedModel: y = x @ (scale * ones(3, 2)) (predict signature)."""
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.get_variable("w", initializer=np.full((3, 2), scale, np.float32))
        y = tf.matmul(x, w, name="y")
        sess.run(tf.global_variables_initializer())
        tf.saved_model.simple_save(sess, str(export_dir), {"x": x}, {"y": y})


class Rest:
    def __init__(self, port: int):
        self.base = f"http://127.0.0.1:{port}"

    def call(self, path: str, body=None, raw: bytes | None = None, headers=None):
        """(HTTP status, parsed JSON body)."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None
                                            else None)
        req = urllib.request.Request(self.base + path, data=data, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())


@pytest.fixture
def base_path(tmp_path):
    shutil.copytree(TF_MODEL, tmp_path / "models" / "1")
    return tmp_path / "models"


@pytest.fixture
def server(base_path):
    s = ModelServer("m", str(base_path), port=0, rest_api_port=0, poll_seconds=3600,
                    max_request_bytes=1 << 20)
    s.start()
    yield s
    s.stop()


@pytest.fixture
def rest(server):
    return Rest(server.rest_api_port)
