"""A canned estimator's checkpoint restores in TensorFlow and TF's in the estimator: TF
builds the same layers by hand under the canned names (canned_model.py; TF 2.21 has no
tf.estimator) and both sides give the same logits. Needs the TF peer (slow)."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tests.estimator import canned_model

PEER = Path.home() / ".cache" / "tensorweave-tf-peer" / "bin" / "python"
SCRIPT = Path(__file__).with_name("tf_canned_peer.py")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not PEER.exists(), reason="TensorFlow peer not installed")]
_ENV = {"TF_CPP_MIN_LOG_LEVEL": "3", "TF_USE_LEGACY_KERAS": "1"}


def _estimator(kind, model_dir):
    cols = canned_model.columns(tf.feature_column, kind)
    config = tf.estimator.RunConfig(tf_random_seed=3)
    if kind == "linear":
        return tf.estimator.LinearClassifier(cols, model_dir=model_dir, config=config)
    return tf.estimator.DNNClassifier([4, 3], cols, model_dir=model_dir, config=config)


def _our_logits(est):
    fn = tf.estimator.inputs.numpy_input_fn(canned_model.FEATURES, shuffle=False)
    return np.stack([p["logits"] for p in est.predict(fn, predict_keys="logits")])


def _peer(mode, kind, model_dir, out):
    r = subprocess.run([str(PEER), str(SCRIPT), mode, kind, model_dir, str(out)],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, **_ENV})
    assert r.returncode == 0, r.stderr[-3000:]
    return np.load(out)


@pytest.mark.parametrize("kind", ["dnn", "linear"])
def test_our_checkpoint_restores_in_tf(tmp_path, kind):
    est = _estimator(kind, str(tmp_path / "model"))
    est.train(tf.estimator.inputs.numpy_input_fn(
        canned_model.FEATURES, canned_model.LABELS, batch_size=4, num_epochs=None,
        shuffle=True), steps=20)
    ours = _our_logits(est)
    theirs = _peer("restore", kind, str(tmp_path / "model"), tmp_path / "tf.npy")
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert np.abs(ours).max() > 0


@pytest.mark.parametrize("kind", ["dnn", "linear"])
def test_tf_checkpoint_restores_in_our_estimator(tmp_path, kind):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    theirs = _peer("write", kind, str(model_dir), tmp_path / "tf.npy")
    est = _estimator(kind, str(model_dir))
    np.testing.assert_allclose(_our_logits(est), theirs, rtol=1e-5, atol=1e-6)
    assert est.get_variable_value("global_step") == 17
