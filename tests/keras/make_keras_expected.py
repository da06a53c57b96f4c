"""Writes tests/keras/keras_expected.npz with TensorFlow's tf.keras (tf-keras, graph mode):
a small functional model with numpy weights set through `set_weights`, trained with
`train_on_batch` by several optimizers; the losses, metrics, predictions and final weights.

    TF_USE_LEGACY_KERAS=1 ~/.cache/tensorweave-tf-peer/bin/python tests/keras/make_keras_expected.py
"""

import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import tensorflow.compat.v1 as tf  # noqa: E402
from keras_cases import CASES, run_case  # noqa: E402

tf.disable_v2_behavior()
out = {}
for name in CASES:
    tf.keras.backend.clear_session()
    for k, v in run_case(tf, name).items():
        out[f"{name}/{k}"] = v
np.savez(Path(__file__).resolve().parent / "keras_expected.npz", **out)
print(f"wrote {len(out)} arrays")
