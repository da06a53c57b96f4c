"""Writes tests/data/monitored_expected.json with real TensorFlow (TF1 graph mode, the peer):
the result of every case of monitored_cases.py. Run:

  TF_CPP_MIN_LOG_LEVEL=3 /root/.cache/tensorweave-tf-peer/bin/python \
      tests/training/make_monitored_expected.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import monitored_cases  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_eager_execution()
out = {}
for name, case in monitored_cases.CASES.items():
    with tempfile.TemporaryDirectory() as d:
        out[name] = case(tf, d)
        tf.summary.FileWriterCache.clear()
        print(name, "ok")
(HERE.parent / "data" / "monitored_expected.json").write_text(
    json.dumps(out, indent=1, sort_keys=True) + "\n")
