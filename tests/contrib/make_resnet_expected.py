"""Writes tests/data/resnet_expected.npz with TensorFlow 2.21 (tf.compat.v1 graph mode) and
`tf_slim`'s nets.resnet_v1 (TF 1.15's contrib.slim.nets.resnet_v1 ported to TF 2; install it
into the peer with `pip install tf_slim`):

    ~/.cache/tensorweave-tf-peer/bin/python tests/contrib/make_resnet_expected.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import resnet_cases  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402
import tf_slim as slim  # noqa: E402
from tf_slim.nets import resnet_v1  # noqa: E402

tf.disable_v2_behavior()
# NOTE: as make_slim_expected.py: TF 2.21's compat.v1 layers look for tf_keras' legacy layers
from tf_keras.src import legacy_tf_layers  # noqa: E402
from tf_keras.src.legacy_tf_layers import normalization  # noqa: E402

sys.modules["tf_keras.legacy_tf_layers"] = legacy_tf_layers
sys.modules["tf_keras.legacy_tf_layers.normalization"] = normalization
OUT = Path(__file__).resolve().parents[1] / "data" / "resnet_expected.npz"

if __name__ == "__main__":
    out = resnet_cases.run(tf, resnet_v1, slim)
    np.savez(OUT, **out)
    print(f"wrote {OUT} ({len(out)} arrays)")
