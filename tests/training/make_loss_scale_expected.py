"""Writes loss_scale_expected.json with the TensorFlow peer (loss_scale_cases.run):
    ~/.cache/tensorweave-tf-peer/bin/python tests/training/make_loss_scale_expected.py"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import loss_scale_cases  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()

if __name__ == "__main__":
    with open(os.path.join(HERE, "loss_scale_expected.json"), "w") as f:
        json.dump(loss_scale_cases.run(tf), f, indent=1)
