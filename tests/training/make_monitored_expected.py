"""Writes tests/data/monitored_expected.json with real TensorFlow (TF1 graph mode, the peer):
the result of every case of monitored_cases.py. Run:

  TF_CPP_MIN_LOG_LEVEL=3 /root/.cache/tensorweave-tf-peer/bin/python \
      tests/training/make_monitored_expected.py [case ...]
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
PATH = HERE.parent / "data" / "monitored_expected.json"
only = sys.argv[1:]  # case names: rewrite just these
out = json.loads(PATH.read_text()) if only else {}
for name, case in monitored_cases.CASES.items():
    if only and name not in only:
        continue
    with tempfile.TemporaryDirectory() as d:
        out[name] = case(tf, d)
        tf.summary.FileWriterCache.clear()
        print(name, "ok")
PATH.write_text(
    json.dumps(out, indent=1, sort_keys=True) + "\n")
