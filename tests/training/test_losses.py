"""tf.losses: values against TensorFlow's (tests/data/layers_expected.npz) and numpy formulas,
weights and reductions, collections, and errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.training import expected_cases as cases

EXPECTED = np.load(Path(__file__).resolve().parents[1] / "data" / "layers_expected.npz")
tf = cases.tensorweave_namespace()
L = tf.losses


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


LOSS_KEYS = sorted(k[5:] for k in EXPECTED.files if k.startswith("loss/"))


@pytest.fixture(scope="module")
def loss_values():
    with tf.Graph().as_default():
        return _run(cases.loss_cases(tf, cases.inputs()))


@pytest.mark.parametrize("key", LOSS_KEYS)
def test_loss_matches_tensorflow(loss_values, key):
    want = EXPECTED[f"loss/{key}"]
    assert np.shape(loss_values[key]) == want.shape
    np.testing.assert_allclose(loss_values[key], want, rtol=1e-5, atol=1e-6)


# -- numpy formulas -------------------------------------------------------------------------
def _log_softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


D = cases.inputs()


def test_weighted_reductions_follow_their_definitions():
    logits, labels, w = D["logits"], D["sparse"], D["w_vec"]
    per = -_log_softmax(logits)[np.arange(6), labels]
    got = _run({red: L.sparse_softmax_cross_entropy(labels, logits, weights=w,
                                                    reduction=getattr(L.Reduction, red))
                for red in cases.REDUCTIONS})
    np.testing.assert_allclose(got["NONE"], per * w, rtol=1e-5)
    np.testing.assert_allclose(got["SUM"], np.sum(per * w), rtol=1e-5)
    np.testing.assert_allclose(got["MEAN"], np.sum(per * w) / np.sum(w), rtol=1e-5)
    np.testing.assert_allclose(got["SUM_OVER_BATCH_SIZE"], np.sum(per * w) / 6, rtol=1e-5)
    np.testing.assert_allclose(got["SUM_BY_NONZERO_WEIGHTS"], np.sum(per * w) / 4, rtol=1e-5)


def test_default_reduction_with_a_float_weight_counts_every_element():
    pred, target = D["pred"], D["target"]
    got = _run(L.mean_squared_error(target, pred, weights=3.0))
    np.testing.assert_allclose(got, 3.0 * np.mean((pred - target) ** 2), rtol=1e-5)


def test_zero_weights_give_zero_not_nan():
    got = _run(L.absolute_difference(D["target"], D["pred"], weights=np.zeros((6, 3),
                                                                              np.float32)))
    assert got == 0.0


def test_elementwise_losses_match_numpy():
    p, t, b = D["pred"], D["target"], D["binary"]
    logits = 4 * p - 2
    err = np.abs(p - 3 * t)
    quad = np.minimum(err, 0.7)
    got = _run({
        "huber": L.huber_loss(3 * t, p, delta=0.7),
        "log": L.log_loss(b, p),
        "hinge": L.hinge_loss(b, logits),
        "sigmoid": L.sigmoid_cross_entropy(b, logits, label_smoothing=0.2),
        "softmax": L.softmax_cross_entropy(D["onehot"], D["logits"], label_smoothing=0.1),
    })
    np.testing.assert_allclose(got["huber"], np.mean(0.5 * quad ** 2 + 0.7 * (err - quad)),
                               rtol=1e-5)
    eps = 1e-7
    np.testing.assert_allclose(
        got["log"], np.mean(-b * np.log(p + eps) - (1 - b) * np.log(1 - p + eps)), rtol=1e-5)
    np.testing.assert_allclose(got["hinge"], np.mean(np.maximum(0, 1 - (2 * b - 1) * logits)),
                               rtol=1e-5)
    z = b * 0.8 + 0.1
    sig = np.maximum(logits, 0) - logits * z + np.log1p(np.exp(-np.abs(logits)))
    np.testing.assert_allclose(got["sigmoid"], np.mean(sig), rtol=1e-5)
    smooth = D["onehot"] * 0.9 + 0.1 / 4
    np.testing.assert_allclose(got["softmax"],
                               np.mean(-(smooth * _log_softmax(D["logits"])).sum(1)), rtol=1e-5)


# -- collections ----------------------------------------------------------------------------
def test_losses_collect_and_total_loss_adds_regularization():
    a = L.mean_squared_error(D["target"], D["pred"])
    b = L.absolute_difference(D["target"], D["pred"], loss_collection=None)
    tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.constant(0.25))
    assert L.get_losses() == [a]
    assert b not in L.get_losses()
    total = L.get_total_loss()
    no_reg = L.get_total_loss(add_regularization_losses=False, name="data_loss")
    reg = L.get_regularization_loss()
    assert (total.op.name, reg.op.name) == ("total_loss", "total_regularization_loss")
    v_a, v_total, v_no_reg, v_reg = _run([a, total, no_reg, reg])
    np.testing.assert_allclose(v_total, v_a + 0.25, rtol=1e-6)
    assert v_no_reg == pytest.approx(v_a) and v_reg == pytest.approx(0.25)


def test_regularization_loss_is_zero_without_regularizers():
    assert _run(L.get_regularization_loss()) == 0.0


def test_loss_ops_are_scoped_as_tf1():
    loss = L.sparse_softmax_cross_entropy(D["sparse"], D["logits"])
    assert loss.op.name.startswith("sparse_softmax_cross_entropy_loss/")
    names = {op.name for op in tf.get_default_graph().get_operations()}
    assert "sparse_softmax_cross_entropy_loss/xentropy/xentropy" in names
    assert "sparse_softmax_cross_entropy_loss/value" in names


# -- errors ---------------------------------------------------------------------------------
def test_errors():
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        L.mean_squared_error(D["target"], D["pred"], reduction="average")
    with pytest.raises(ValueError, match="Argument `labels` must not be None"):
        L.mean_squared_error(None, D["pred"])
    with pytest.raises(ValueError, match="weights can not be broadcast to values"):
        L.mean_squared_error(D["target"], D["pred"], weights=np.ones((6, 2), np.float32))
    with pytest.raises(ValueError, match="axis"):
        L.cosine_distance(D["target"], D["pred"])
    with pytest.raises(ValueError):
        L.mean_squared_error(D["target"], D["pred"][:, :2])


def test_dynamic_weights_shape_is_checked_at_run_time():
    w = tf.placeholder(tf.float32, None)
    loss = L.mean_squared_error(D["target"], D["pred"], weights=w)
    with tf.Session() as sess:
        ok = sess.run(loss, {w: np.ones((6, 1), np.float32)})
        np.testing.assert_allclose(ok, np.mean((D["pred"] - D["target"]) ** 2), rtol=1e-5)
        with pytest.raises(tf.errors.InvalidArgumentError, match="weights can not be"):
            sess.run(loss, {w: np.ones((5, 3), np.float32)})
