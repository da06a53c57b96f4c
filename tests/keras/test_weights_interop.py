"""Keras weights cross between tensorweave and TensorFlow's tf-keras (TF 2.21, graph mode),
both ways, in HDF5 and in the TensorFlow checkpoint format (slow: runs the peer)."""

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tests.keras.keras_cases import interop_model

SCRIPT = Path(__file__).resolve().parent / "tf_keras_weights.py"
X = np.linspace(-1, 1, 4 * 6, dtype=np.float32).reshape(4, 6)


def _peer(tf_peer, *args) -> np.ndarray:
    out = subprocess.run([tf_peer, str(SCRIPT), *map(str, args)], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return np.asarray(json.loads(out.stdout.strip().splitlines()[-1])["predict"])


@pytest.fixture
def ours():
    tf.keras.backend.clear_session()
    yield interop_model(tf)
    tf.keras.backend.clear_session()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tf.h5", "tf_ckpt"])
def test_weights_saved_by_tf_keras_load_here(tmp_path, tf_peer, ours, name):
    want = _peer(tf_peer, "save", tmp_path)
    ours.load_weights(str(tmp_path / name))
    np.testing.assert_allclose(ours.predict(X), want, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ours.h5", "ours_ckpt"])
def test_weights_saved_here_load_in_tf_keras(tmp_path, tf_peer, ours, name):
    rng = np.random.default_rng(4)
    ours.set_weights([rng.standard_normal(w.shape).astype(np.float32)
                      for w in ours.get_weights()])
    ours.save_weights(str(tmp_path / name))
    np.testing.assert_allclose(_peer(tf_peer, "load", tmp_path, name), ours.predict(X),
                               rtol=1e-5, atol=1e-6)
