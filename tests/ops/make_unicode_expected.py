"""Writes tests/data/unicode_expected.json with TensorFlow 2.21 from unicode_cases.py:
unicode decode/encode/split/transcode results (with offsets, error modes, encodings),
UTF8_CHAR lengths and substrings, and RaggedTensor factories and conversions. A case that
fails in TF records its error class.

    ~/.cache/tensorweave-tf-peer/bin/python tests/ops/make_unicode_expected.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tensorflow.compat.v1 as tf  # noqa: E402
from unicode_cases import CASES, to_jsonable  # noqa: E402

tf.disable_v2_behavior()
OUT = Path(__file__).resolve().parents[1] / "data" / "unicode_expected.json"


def main() -> None:
    out = {}
    for name, build in CASES.items():
        with tf.Graph().as_default(), tf.Session() as sess:
            try:
                out[name] = [to_jsonable(v) for v in sess.run(build(tf))]
            except tf.errors.OpError as e:
                out[name] = {"error": type(e).__name__}
    OUT.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(out)} cases)")


if __name__ == "__main__":
    main()
