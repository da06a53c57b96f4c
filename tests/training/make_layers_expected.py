"""Writes tests/data/layers_expected.npz with TensorFlow (TF1 graph mode, legacy tf.layers).

Run with the TensorFlow peer (never needed by the tests themselves):

    TF_USE_LEGACY_KERAS=1 ~/.cache/tensorweave-tf-peer/bin/python \
        tests/training/make_layers_expected.py

Keys: `<case>/<fetch>` for values, `names/...` for variable and op names.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import expected_cases as cases  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
OUT = Path(__file__).resolve().parents[1] / "data" / "layers_expected.npz"


def _run(build, feeds=None):
    """Builds `build(tf, d)` in a fresh graph and returns its fetched values."""
    with tf.Graph().as_default():
        fetches = build(tf, cases.inputs())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return sess.run(fetches, feeds)


def forward() -> dict:
    out = {f"fwd/{k}": v for k, v in _run(cases.forward_cases).items()}
    out.update({f"fwd/{k}": v for k, v in _run(cases.batch_norm_forward_cases).items()})
    return out


def moving_averages() -> dict:
    d = cases.inputs()
    with tf.Graph().as_default():
        (x4, x2, training), updates, fetches = cases.moving_average_model(tf, d)
        history = {k: [] for k in fetches}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(cases.STEPS):
                feed = {x4: d["bn4"][step], x2: d["bn2"][step],
                        training: cases.TRAIN_PATTERN[step]}
                values, _ = sess.run([fetches, updates], feed)
                for k, v in sess.run(fetches, feed).items():
                    history[k].append(v if "moving" in k else values[k])
    return {k: np.stack(v) for k, v in history.items()}


def losses() -> dict:
    return {f"loss/{k}": v for k, v in _run(cases.loss_cases).items()}


def metrics() -> dict:
    out = {}
    with tf.Graph().as_default():
        labels = tf.placeholder(tf.int64, [None])
        predictions = tf.placeholder(tf.int64, [None])
        weights = tf.placeholder(tf.float32, [None])
        pairs = cases.metric_cases(tf, labels, predictions, weights)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            for i, (lab, pred, w) in enumerate(cases.metric_batches()):
                feed = {labels: lab, predictions: pred, weights: w}
                updated = sess.run({k: u for k, (_, u) in pairs.items()}, feed)
                values = sess.run({k: v for k, (v, _) in pairs.items()})
                for k in pairs:
                    out[f"metric/{k}/update_{i}"] = updated[k]
                    out[f"metric/{k}/value_{i}"] = values[k]
    return out


def parity() -> dict:
    d = cases.inputs()
    out = {}
    with tf.Graph().as_default():
        x, y, loss, train_op = cases.parity_model(tf, d, lambda w: 0.01 * tf.nn.l2_loss(w))
        out["names/parity_global"] = np.array([v.name for v in tf.global_variables()])
        out["names/parity_shapes"] = np.array(
            [",".join(map(str, v.shape.as_list())) for v in tf.global_variables()])
        out["names/parity_trainable"] = np.array([v.name for v in tf.trainable_variables()])
        out["names/parity_updates"] = np.array(
            [u.name for u in tf.get_collection(tf.GraphKeys.UPDATE_OPS)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train_op], {x: d["train_x"][i], y: d["train_y"][i]})[0]
                      for i in range(len(d["train_x"]))]
            out["parity/losses"] = np.array(losses)
            for v in tf.global_variables():
                out[f"parity/var/{v.op.name}"] = sess.run(v)
    return out


def main() -> None:
    data = {}
    for part in (forward, moving_averages, losses, metrics, parity):
        data.update(part())
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **data)
    print(f"wrote {len(data)} arrays to {OUT}")


if __name__ == "__main__":
    main()
