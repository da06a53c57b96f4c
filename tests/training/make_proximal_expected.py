"""Writes tests/data/proximal_expected.npz: TensorFlow's variables after each step of
tests/training/proximal_cases.py.

    ~/.cache/tensorweave-tf-peer/bin/python tests/training/make_proximal_expected.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402
from proximal_cases import OPTIMIZERS, run  # noqa: E402

tf.disable_v2_behavior()
OUT = Path(__file__).resolve().parents[1] / "data" / "proximal_expected.npz"


def main() -> None:
    out = {}
    for name, make in OPTIMIZERS.items():
        for step, (w, e) in enumerate(run(tf, make)):
            out[f"{name}_w{step}"], out[f"{name}_e{step}"] = w, e
    np.savez(OUT, **out)
    print(f"wrote {OUT} ({len(out)} arrays)")


if __name__ == "__main__":
    main()
