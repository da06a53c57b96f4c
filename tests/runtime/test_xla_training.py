"""The demo's CNN (examples/cnn_digits.py: conv - batch norm - ReLU - max pool twice, dense,
Adam with the batch-norm updates) trains on /device:XLA_CPU:0 as on the CPU: from the
same initial weights (a checkpoint the CPU graph wrote, restored into the XLA graph) the losses
and the test accuracy follow the CPU run's."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax", reason="the XLA device needs jax (pip install tensorweave[xla])")
pytest.importorskip("sklearn", reason="the examples extra (scikit-learn)")

import tensorweave as tf  # noqa: E402
from tensorweave.runtime import xla_executable  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import cnn_digits  # noqa: E402

XLA = "/device:XLA_CPU:0"
ARGS = types.SimpleNamespace(l2=1e-4, dropout=0.0, learning_rate=3e-3, lr_decay=0.85)


def _train(device, ckpt, steps, batch=64):
    """(losses, test accuracy) after `steps` Adam steps of the demo's CNN under `device`,
    starting from checkpoint `ckpt` (written first when absent)."""
    x_tr, y_tr, x_te, y_te = cnn_digits.load_data(0.2, 0)
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, 8, 8, 1])
        y = tf.placeholder(tf.int32, [None])
        with tf.device(device):
            model = cnn_digits.build_model(x, y, True, ARGS, steps_per_epoch=22)
        saver = tf.train.Saver()
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            if Path(ckpt + ".index").exists():
                saver.restore(sess, ckpt)
            else:
                sess.run(tf.global_variables_initializer())
                saver.save(sess, ckpt)
            order = np.random.default_rng(0).permutation(len(x_tr))
            losses = []
            for s in range(steps):
                idx = order[(s * batch) % len(order):][:batch]
                losses.append(sess.run([model["loss"], model["train_op"]],
                                       {x: x_tr[idx], y: y_tr[idx]})[0])
            accuracy = sess.run(model["accuracy"], {x: x_te, y: y_te})
    return np.array(losses), float(accuracy)


@pytest.mark.slow
def test_demo_cnn_trains_on_xla_cpu_as_on_cpu(tmp_path, monkeypatch):
    made = []
    init = xla_executable.XlaExecutable.__init__

    def record(self, *a, **k):
        init(self, *a, **k)
        made.append(self)

    monkeypatch.setattr(xla_executable.XlaExecutable, "__init__", record)
    ckpt = str(tmp_path / "init")
    want, acc_want = _train("/cpu:0", ckpt, 60)
    got, acc_got = _train(XLA, ckpt, 60)
    train = [ex for ex in made if any(it.op == "ApplyAdam" for it in ex._body)]
    assert len(train) == 1
    body = {it.op for it in train[0]._body}
    assert {"Conv2D", "Conv2DBackpropFilter", "FusedBatchNormV3", "MaxPoolGrad"} <= body
    # float32 convolutions summed in another order: the first steps agree to a few ulps;
    # Adam amplifies the differences, so later steps are compared loosely
    np.testing.assert_allclose(got[:5], want[:5], rtol=1e-4)
    np.testing.assert_allclose(got, want, rtol=0.05, atol=0.02)
    assert acc_want > 0.9 and abs(acc_got - acc_want) <= 0.02
