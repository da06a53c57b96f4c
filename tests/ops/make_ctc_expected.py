"""Writes tests/data/ctc_expected.npz with TensorFlow 2.21 from ctc_cases.py: CTC losses and
their logits gradients, greedy and beam-search decodings with their log-probabilities.

    ~/.cache/tensorweave-tf-peer/bin/python tests/ops/make_ctc_expected.py

Key `<case>/<i>`: the i-th fetched array (a SparseTensor as indices, values, shape).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402
from ctc_cases import CASES, flatten  # noqa: E402

tf.disable_v2_behavior()
OUT = Path(__file__).resolve().parents[1] / "data" / "ctc_expected.npz"


def main() -> None:
    out = {}
    for name, build in CASES.items():
        with tf.Graph().as_default(), tf.Session() as sess:
            for i, v in enumerate(flatten(sess.run(build(tf)))):
                out[f"{name}/{i}"] = v
    np.savez(OUT, **out)
    print(f"wrote {OUT} ({len(CASES)} cases)")


if __name__ == "__main__":
    main()
