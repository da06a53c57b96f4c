"""Writes tests/data/sparse_expected.json: TensorFlow's outputs (and gradients) for
tests/ops/sparse_cases.py.

    ~/.cache/tensorweave-tf-peer/bin/python tests/ops/make_sparse_expected.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tensorflow.compat.v1 as tf  # noqa: E402
from sparse_cases import CASES  # noqa: E402
from string_cases import to_jsonable  # noqa: E402

tf.disable_v2_behavior()
OUT = Path(__file__).resolve().parents[1] / "data" / "sparse_expected.json"


def _fetch(sess, built):
    if isinstance(built, (list, tuple)):
        return [to_jsonable(v) for v in sess.run(list(built))]
    return to_jsonable(sess.run(built))


def main() -> None:
    out = {}
    for name, build in CASES.items():
        with tf.Graph().as_default(), tf.Session() as sess:
            out[name] = _fetch(sess, build(tf))
    OUT.write_text(json.dumps(out, indent=1, sort_keys=True))
    print(f"wrote {OUT} ({len(out)} cases)")


if __name__ == "__main__":
    main()
