"""Writes tests/data/rnn_expected.npz with TensorFlow (TF1 graph mode, control flow v1).

Run with the TensorFlow peer (never needed by the tests themselves):

    ~/.cache/tensorweave-tf-peer/bin/python tests/training/make_rnn_expected.py

For each case of `rnn_cases.CASES`: outputs and final states of the RNN, gradients of a
weighted sum of them w.r.t. every trainable variable and the inputs, and the variables'
names (`<case>/fetch/...`, `<case>/grad/...`, `<case>/names`); and for the sequence
classifier trained 5 Adam steps: losses, logits, trained weights, names (`train/...`), and
its TF checkpoint (tests/data/rnn_ckpt/classifier.*) holding the trained weights.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import rnn_cases as cases  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
tf.disable_control_flow_v2()
tf.logging.set_verbosity(tf.logging.ERROR)
DATA = Path(__file__).resolve().parents[1] / "data"
OUT = DATA / "rnn_expected.npz"
CKPT = DATA / "rnn_ckpt" / "classifier"


def main() -> None:
    out = {}
    for name in cases.CASES:
        for key, value in cases.run_case(tf, name).items():
            out[f"{name}/{key}"] = value
    CKPT.parent.mkdir(exist_ok=True)
    for key, value in cases.train_classifier(tf, str(CKPT)).items():
        out[f"train/{key}"] = value
    (CKPT.parent / "checkpoint").unlink()  # NOTE: holds absolute paths; restore by prefix
    np.savez_compressed(OUT, **out)
    print(f"wrote {len(out)} arrays to {OUT}")


if __name__ == "__main__":
    main()
