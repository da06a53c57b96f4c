"""Writes tests/data/symbol_expected.json with real TensorFlow 2.21 from symbol_cases.py:
tf.profiler.profile's parameter and float-op counts and option dicts, and the steps of a
dynamically loss-scaled optimizer. Run:

  TF_CPP_MIN_LOG_LEVEL=3 /root/.cache/tensorweave-tf-peer/bin/python \
      tests/compat/make_symbol_expected.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import symbol_cases  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
out = {"profile": symbol_cases.profile_numbers(tf),
       "loss_scale_steps": symbol_cases.loss_scale_steps(tf)}
(HERE.parent / "data" / "symbol_expected.json").write_text(json.dumps(out, indent=1) + "\n")
print(json.dumps(out)[:600])
