"""Writes tests/data/tape_expected.json: TensorFlow 2.21's answers (tf.compat.v1 graph mode,
resource variables) to tests/autodiff/tape_scenario.py.

Run from the repository root:
    PYTHONPATH=. ~/.cache/tensorweave-tf-peer/bin/python tests/autodiff/make_tape_expected.py
"""

import json
from pathlib import Path

import tensorflow.compat.v1 as tf

from tests.autodiff.tape_scenario import run

tf.disable_eager_execution()
out = run(tf)
path = Path(__file__).resolve().parents[1] / "data" / "tape_expected.json"
path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
print("wrote", path)
