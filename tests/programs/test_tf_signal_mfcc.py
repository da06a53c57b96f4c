"""TensorFlow's documented MFCC pipeline (tests/programs/tf_signal_mfcc.py, unchanged) with
tensorweave as `tensorflow`: the MFCCs of its PCM equal TensorFlow's MFCCs of the same PCM
(computed here by the peer at run time, so the test is `slow` and skips without it)."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorweave

HERE = Path(__file__).resolve().parent
PEER = Path.home() / ".cache" / "tensorweave-tf-peer" / "bin" / "python"

_TF_RUN = """
import sys, numpy as np
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
pcm = np.load(sys.argv[1])
x = tf.constant(pcm)
stfts = tf.signal.stft(x, frame_length=1024, frame_step=256, fft_length=1024)
mel = tf.signal.linear_to_mel_weight_matrix(80, 513, 16000.0, 80.0, 7600.0)
logmel = tf.math.log(tf.tensordot(tf.abs(stfts), mel, 1) + 1e-6)
m = tf.signal.mfccs_from_log_mel_spectrograms(logmel)[..., :13]
with tf.Session() as s:
    np.save(sys.argv[2], s.run(m))
"""


def _run_program():
    sys.modules["tensorflow"] = tensorweave
    try:
        with tensorweave.Graph().as_default():
            return runpy.run_path(str(HERE / "tf_signal_mfcc.py"))
    finally:
        del sys.modules["tensorflow"]


def test_program_runs_unchanged():
    out = _run_program()
    assert out["mfcc_value"].shape == (32, 122, 13)
    assert np.isfinite(out["mfcc_value"]).all()


@pytest.mark.slow
@pytest.mark.skipif(not PEER.exists(), reason="the TensorFlow peer is not installed")
def test_mfccs_equal_tensorflows(tmp_path):
    out = _run_program()
    np.save(tmp_path / "pcm.npy", out["pcm_value"])
    subprocess.run([str(PEER), "-c", _TF_RUN, str(tmp_path / "pcm.npy"),
                    str(tmp_path / "tf.npy")], check=True, capture_output=True,
                   env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}, timeout=300)
    want = np.load(tmp_path / "tf.npy")
    np.testing.assert_allclose(out["mfcc_value"], want, rtol=1e-3, atol=1e-3)
