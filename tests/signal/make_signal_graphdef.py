"""Writes tests/data/signal_graph.pb (a GraphDef TensorFlow 2.21 built: stft, log-mel, MFCCs,
inverse_stft and an RFFT gradient on a placeholder `audio`) and signal_graph_expected.npz (its
outputs on a fixed input).

Run: ~/.cache/tensorweave-tf-peer/bin/python tests/signal/make_signal_graphdef.py
"""

from pathlib import Path

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()
DATA = Path(__file__).resolve().parents[1] / "data"
audio_value = np.random.RandomState(11).randn(2, 300).astype(np.float32)
with tf.Graph().as_default() as g:
    audio = tf.placeholder(tf.float32, [None, 300], name="audio")
    stfts = tf.signal.stft(audio, 64, 32)
    mel = tf.signal.linear_to_mel_weight_matrix(16, 33, 8000.0, 50.0, 3500.0)
    logmel = tf.math.log(tf.tensordot(tf.abs(stfts), mel, 1) + 1e-6)
    tf.identity(tf.signal.mfccs_from_log_mel_spectrograms(logmel), name="mfccs")
    tf.identity(tf.signal.inverse_stft(stfts, 64, 32), name="istft")
    tf.identity(tf.gradients(tf.reduce_sum(tf.abs(stfts)), audio)[0], name="grad")
    with tf.Session() as sess:
        out = sess.run({"mfccs": "mfccs:0", "istft": "istft:0", "grad": "grad:0"},
                       {audio: audio_value})
    (DATA / "signal_graph.pb").write_bytes(g.as_graph_def().SerializeToString())
np.savez(DATA / "signal_graph_expected.npz", audio=audio_value, **out)
print("wrote", sorted(out))
