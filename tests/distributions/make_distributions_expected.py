"""Writes tests/data/distributions_expected.npz: TF 2.21's tf.compat.v1.distributions values
for tests/distributions/dist_scenario.py (graph mode).

Run from the repository root:
    PYTHONPATH=. ~/.cache/tensorweave-tf-peer/bin/python \
        tests/distributions/make_distributions_expected.py
"""

from pathlib import Path

import numpy as np
import tensorflow.compat.v1 as tf

from tests.distributions.dist_scenario import build

tf.disable_eager_execution()
graph, missing = build(tf, tf.distributions)
with tf.Session() as sess:
    values = sess.run(graph)
np.savez(Path(__file__).resolve().parents[1] / "data" / "distributions_expected.npz",
         missing=np.array(sorted(missing)), **{k.replace("/", "__"): v for k, v in values.items()})
print("wrote", len(values))
