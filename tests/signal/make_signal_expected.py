"""Writes tests/data/signal_expected.npz with TensorFlow (the 2.21 peer, tf.compat.v1 graph
mode): the FFT ops' outputs and gradients and the tf.signal functions' values.

Run from the repository root:
    PYTHONPATH=. ~/.cache/tensorweave-tf-peer/bin/python tests/signal/make_signal_expected.py
"""

from pathlib import Path

import numpy as np
import tensorflow.compat.v1 as tf

from tests.signal.signal_graph import build

tf.disable_eager_execution()
rng = np.random.RandomState(7)
OUT = {}
x = rng.randn(3, 12).astype(np.float32)
x64 = rng.randn(2, 5, 6)
c = (rng.randn(3, 8) + 1j * rng.randn(3, 8)).astype(np.complex64)
c2 = rng.randn(2, 4, 6) + 1j * rng.randn(2, 4, 6)
audio = rng.randn(2, 400).astype(np.float32)
logmel = rng.randn(3, 4, 10).astype(np.float32)
OUT.update(x=x, x64=x64, c=c, c2=c2, audio=audio, logmel=logmel,
           w=rng.randn(2, 5, 5) + 1j * rng.randn(2, 5, 5), grad_w=rng.randn(2, 5, 5))
graph = build(tf, OUT)
with tf.Session() as sess:
    OUT.update(sess.run(graph))
np.savez(Path(__file__).resolve().parents[1] / "data" / "signal_expected.npz", **OUT)
print("wrote", len(OUT), "arrays")
