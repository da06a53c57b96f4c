"""Writes tests/data/v1_symbols_in_tf.json with real TensorFlow 2.21: for every symbol of
../shared/reference/tf_v1_symbol_usage.tsv (all families), whether `tf.compat.v1` still has
it. Run:

  TF_CPP_MIN_LOG_LEVEL=3 /root/.cache/tensorweave-tf-peer/bin/python \
      tests/compat/make_v1_symbols.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import tensorflow as tf  # noqa: E402
import v1_families  # noqa: E402

out = {name: v1_families.resolve(tf.compat.v1, name) is not None
       for name in v1_families.all_symbols()}
(HERE.parent / "data" / "v1_symbols_in_tf.json").write_text(
    json.dumps(out, indent=1, sort_keys=True) + "\n")
print(sum(out.values()), "of", len(out), "present in TF", tf.__version__)
