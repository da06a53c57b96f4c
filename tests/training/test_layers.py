"""tf.layers: TF1 variable names, scopes, reuse and collections; outputs against numpy and
against numbers written by TensorFlow (tests/data/layers_expected.npz, made by
make_layers_expected.py); batch-norm moving averages; a short SGD run against TensorFlow."""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pytest

from tests.training import expected_cases as cases

EXPECTED = np.load(Path(__file__).resolve().parents[1] / "data" / "layers_expected.npz")
tf = cases.tensorweave_namespace()
layers = tf.layers


def _names(variables) -> list[str]:
    return [v.name for v in variables]


def _run(fetches, feed=None, init=True):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _op_names() -> set[str]:
    return {op.name for op in tf.get_default_graph().get_operations()}


# -- naming, scopes and reuse ---------------------------------------------------------------
def test_dense_variables_named_and_collected_as_tf1():
    x = tf.placeholder(tf.float32, [None, 4])
    layers.dense(layers.dense(x, 3), 2)
    assert _names(tf.global_variables()) == [
        "dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]
    assert _names(tf.trainable_variables()) == _names(tf.global_variables())
    assert [tuple(v.shape.as_list()) for v in tf.global_variables()] == [
        (4, 3), (3,), (3, 2), (2,)]


def test_dense_op_names_follow_the_layer_scope():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = layers.dense(x, 3, activation=tf.nn.relu)
    assert y.op.name == "dense/Relu"
    assert {"dense/MatMul", "dense/BiasAdd", "dense/kernel/read"} <= _op_names()
    assert y.op.inputs[0].op.inputs[0].op.type == "MatMul"


def test_named_layer_twice_without_reuse_raises_and_reuse_shares():
    x = tf.placeholder(tf.float32, [None, 4])
    layers.dense(x, 2, name="fc")
    with pytest.raises(ValueError, match="Variable fc/kernel already exists"):
        layers.dense(x, 2, name="fc")
    y = layers.dense(x, 2, name="fc", reuse=True)
    assert _names(tf.global_variables()) == ["fc/kernel:0", "fc/bias:0"]
    assert y.op.inputs[0].op.inputs[1].name == "fc/kernel/read:0"
    assert y.op.name == "fc_2/BiasAdd"  # ops get a fresh name scope, as in TF1


def test_layer_object_reuses_its_variables_on_each_call():
    x = tf.placeholder(tf.float32, [None, 4])
    layer = layers.Dense(5)
    first, second = layer(x), layer.apply(x)
    assert _names(layer.variables) == ["dense/kernel:0", "dense/bias:0"]
    assert layer.kernel is layer.variables[0] and layer.bias is layer.variables[1]
    assert layer.scope_name == "dense" and layer.name == "dense_1"
    assert (first.op.name, second.op.name) == ("dense/BiasAdd", "dense/BiasAdd_1")
    assert len(tf.global_variables()) == 2
    v1, v2 = _run([first, second], {x: np.ones((2, 4), np.float32)})
    np.testing.assert_array_equal(v1, v2)


def test_layers_nest_in_variable_scopes_and_reuse_by_scope():
    x = tf.placeholder(tf.float32, [None, 4])
    with tf.variable_scope("model"):
        layers.dense(x, 3)
    with tf.variable_scope("model", reuse=True):
        y = layers.dense(x, 3)
    assert _names(tf.global_variables()) == ["model/dense/kernel:0", "model/dense/bias:0"]
    assert y.op.name.startswith("model_1/dense/")


def test_layer_reuse_rejects_incompatible_input():
    layer = layers.Dense(2)
    layer(tf.placeholder(tf.float32, [None, 4]))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 4"):
        layer(tf.placeholder(tf.float32, [None, 5]))


def test_untrainable_layer_keeps_variables_out_of_trainable_collection():
    x = tf.placeholder(tf.float32, [None, 4])
    layer = layers.Dense(2, trainable=False)
    layer(x)
    assert tf.trainable_variables() == []
    assert layer.trainable_variables == [] and len(layer.non_trainable_variables) == 2


def test_every_layer_names_its_ops_like_tf1():
    img = tf.placeholder(tf.float32, [None, 6, 6, 2])
    c = layers.conv2d(img, 3, 3, padding="same", activation=tf.nn.relu)
    b = layers.batch_normalization(c, training=True)
    p = layers.max_pooling2d(b, 2, 2)
    a = layers.average_pooling2d(b, 2, 2)
    f = layers.flatten(p)
    d = layers.dropout(f, 0.5)
    t = layers.conv2d_transpose(p, 2, 3, strides=2, padding="same")
    assert (c.op.name, p.op.name, a.op.name, f.op.name, d.op.name) == (
        "conv2d/Relu", "max_pooling2d/MaxPool", "average_pooling2d/AvgPool",
        "flatten/Reshape", "dropout/Identity")
    assert b.op.name == "batch_normalization/FusedBatchNormV3"
    assert t.op.name == "conv2d_transpose/BiasAdd" and t.shape.as_list() == [None, 6, 6, 2]
    assert {"conv2d/Conv2D", "conv2d_transpose/conv2d_transpose"} <= _op_names()
    assert _names(tf.global_variables()) == [
        "conv2d/kernel:0", "conv2d/bias:0", "batch_normalization/gamma:0",
        "batch_normalization/beta:0", "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0", "conv2d_transpose/kernel:0",
        "conv2d_transpose/bias:0"]
    assert tf.global_variables()[-2].shape.as_list() == [3, 3, 2, 3]


def test_batch_norm_variables_and_update_ops():
    x = tf.placeholder(tf.float32, [None, 3, 3, 2])
    layers.batch_normalization(x, training=True)
    layers.batch_normalization(tf.placeholder(tf.float32, [None, 4]), training=False)
    assert _names(tf.trainable_variables()) == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0",
        "batch_normalization_1/gamma:0", "batch_normalization_1/beta:0"]
    assert "batch_normalization/moving_variance:0" in _names(tf.global_variables())
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert [u.name for u in updates] == [
        "batch_normalization/AssignMovingAvg", "batch_normalization/AssignMovingAvg_1"]
    assert all(u.type == "AssignSub" for u in updates)


def test_parity_model_names_match_tensorflow():
    d = cases.inputs()
    x = tf.placeholder(tf.float32, [None, 6, 6, 1])
    h = layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    h = layers.batch_normalization(h, momentum=0.8, training=True)
    h = layers.max_pooling2d(h, 2, 2)
    layers.dense(layers.flatten(h), 5, kernel_initializer=tf.constant_initializer(d["train_w"]))
    assert _names(tf.global_variables()) == list(EXPECTED["names/parity_global"])
    assert [",".join(map(str, v.shape.as_list())) for v in tf.global_variables()] == \
        list(EXPECTED["names/parity_shapes"])
    assert _names(tf.trainable_variables()) == list(EXPECTED["names/parity_trainable"])
    assert [u.name for u in tf.get_collection(tf.GraphKeys.UPDATE_OPS)] == \
        list(EXPECTED["names/parity_updates"])


def test_regularizers_go_to_the_collection_with_tf1_names():
    from tensorweave.contrib import layers as contrib_layers

    x = tf.placeholder(tf.float32, [None, 4])
    w0 = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    layers.dense(x, 3, kernel_initializer=tf.constant_initializer(w0),
                 kernel_regularizer=contrib_layers.l2_regularizer(0.1),
                 bias_regularizer=contrib_layers.l1_regularizer(0.5))
    reg = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert [r.op.name for r in reg] == ["dense/kernel/Regularizer/l2_regularizer",
                                        "dense/bias/Regularizer/l1_regularizer"]
    values = _run(reg)
    np.testing.assert_allclose(values, [0.1 * 0.5 * np.sum(w0 ** 2), 0.0], rtol=1e-6)


def test_activity_regularizer_is_divided_by_the_batch_size():
    x = tf.constant(np.full((4, 2), 2.0, np.float32))
    layers.dense(x, 3, kernel_initializer=tf.ones_initializer(),
                 activity_regularizer=lambda out: tf.reduce_sum(out))
    (loss,) = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert loss.op.name.startswith("dense/ActivityRegularizer/")
    np.testing.assert_allclose(_run(loss), 4 * 3 * 4.0 / 4)


# -- values against numpy and TensorFlow ----------------------------------------------------
def test_dense_matches_numpy():
    rng = np.random.RandomState(0)
    x, w, b = rng.randn(5, 4), rng.randn(4, 3), rng.randn(3)
    y = layers.dense(tf.constant(x.astype(np.float32)), 3, activation=tf.nn.relu,
                     kernel_initializer=tf.constant_initializer(w),
                     bias_initializer=tf.constant_initializer(b))
    np.testing.assert_allclose(_run(y), np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-6)


def test_conv_and_pool_match_numpy():
    rng = np.random.RandomState(1)
    x, k = rng.randn(2, 5, 4, 3), rng.randn(3, 3, 3, 2)
    y = layers.conv2d(tf.constant(x.astype(np.float32)), 2, 3,
                      kernel_initializer=tf.constant_initializer(k), use_bias=False)
    p = layers.max_pooling2d(tf.constant(x.astype(np.float32)), 2, 2)
    want = _np_conv_valid(x, k)
    got, pooled = _run([y, p])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(pooled, x[:, :4, :4].reshape(2, 2, 2, 2, 2, 3).max(axis=(2, 4)),
                               rtol=1e-6)


def _np_conv_valid(x, k):
    n, h, w, _ = x.shape
    kh, kw, _, out = k.shape
    y = np.zeros((n, h - kh + 1, w - kw + 1, out))
    for i in range(h - kh + 1):
        for j in range(w - kw + 1):
            y[:, i, j] = np.einsum("nhwc,hwco->no", x[:, i:i + kh, j:j + kw], k)
    return y


FORWARD_KEYS = sorted(k[4:] for k in EXPECTED.files if k.startswith("fwd/"))


@pytest.fixture(scope="module")
def forward_values():
    with tf.Graph().as_default():
        d = cases.inputs()
        fetches = {**cases.forward_cases(tf, d), **cases.batch_norm_forward_cases(tf, d)}
        return _run(fetches)


@pytest.mark.parametrize("key", FORWARD_KEYS)
def test_forward_matches_tensorflow(forward_values, key):
    want = EXPECTED[f"fwd/{key}"]
    got = forward_values[key]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


@pytest.fixture(scope="module")
def moving_average_history():
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
                after = sess.run(fetches, feed)
                for k in fetches:
                    history[k].append(after[k] if "moving" in k else values[k])
    return {k: np.stack(v) for k, v in history.items()}


MA_KEYS = sorted(k for k in EXPECTED.files if k.startswith("ma_"))


@pytest.mark.parametrize("key", MA_KEYS)
def test_batch_norm_moving_averages_match_tensorflow(moving_average_history, key):
    np.testing.assert_allclose(moving_average_history[key], EXPECTED[key], rtol=1e-5,
                               atol=1e-5)


def test_fused_moving_variance_uses_the_unbiased_batch_variance():
    x = np.random.RandomState(3).randn(4, 2, 2, 3).astype(np.float32)
    layer = layers.BatchNormalization(momentum=0.5)
    layer(tf.constant(x), training=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS))
        mean, var = sess.run([layer.moving_mean, layer.moving_variance])
    flat = x.reshape(-1, 3)
    np.testing.assert_allclose(mean, 0.5 * flat.mean(0), rtol=1e-5)
    np.testing.assert_allclose(var, 0.5 + 0.5 * flat.var(0, ddof=1), rtol=1e-5)


def test_untrainable_batch_norm_adds_no_update_ops():
    layers.batch_normalization(tf.placeholder(tf.float32, [None, 3]), training=True,
                               trainable=False)
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    assert tf.trainable_variables() == []


# -- dropout --------------------------------------------------------------------------------
def test_dropout_training_flag():
    x = tf.constant(np.ones((200, 50), np.float32))
    flag = tf.placeholder(tf.bool, [])
    off = layers.dropout(x, 0.3)
    on = layers.dropout(x, 0.3, training=True)
    fed = layers.dropout(x, 0.3, training=flag)
    shared = layers.dropout(x, 0.5, noise_shape=[None, 1], training=True)
    v_off, v_on, v_shared = _run([off, on, shared], init=False)
    np.testing.assert_array_equal(v_off, 1.0)
    assert set(np.unique(v_on)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((v_on == 0).mean() - 0.3) < 0.03
    assert np.all(v_shared == v_shared[:, :1])  # one draw per row
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(fed, {flag: False}), 1.0)
        assert 0.25 < (sess.run(fed, {flag: True}) == 0).mean() < 0.35


# -- errors ---------------------------------------------------------------------------------
def test_construction_errors_name_the_problem():
    with pytest.raises(ValueError, match="last dimension of the inputs to a Dense layer"):
        layers.dense(tf.placeholder(tf.float32, [None, None]), 3)
    with pytest.raises(ValueError, match="channel dimension of the inputs should be defined"):
        layers.conv2d(tf.placeholder(tf.float32, [None, 4, 4, None]), 2, 3)
    with pytest.raises(ValueError, match="padding"):
        layers.Conv2D(2, 3, padding="full")
    with pytest.raises(ValueError, match="kernel_size"):
        layers.Conv2D(2, (3, 3, 3))
    with pytest.raises(ValueError, match="rate"):
        layers.Dropout(1.5)
    with pytest.raises(ValueError, match="expected ndim=4"):
        layers.max_pooling2d(tf.placeholder(tf.float32, [None, 4, 4]), 2, 2)


# -- a short training run against TensorFlow ------------------------------------------------
def test_sgd_training_run_matches_tensorflow():
    sgd = cases.optimizer_or_none(tf)
    if sgd is None:
        pytest.skip("needs tf.train.GradientDescentOptimizer (optimizers issue)")
    pytest.importorskip("tensorweave.autodiff.gradients", reason="needs autodiff.gradients")
    from tensorweave.contrib import layers as contrib_layers

    ns = types.SimpleNamespace(**vars(tf))
    ns.train = types.SimpleNamespace(GradientDescentOptimizer=sgd)
    d = cases.inputs()
    x, y, loss, train_op = cases.parity_model(ns, d, contrib_layers.l2_regularizer(0.01))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([loss, train_op], {x: d["train_x"][i], y: d["train_y"][i]})[0]
                  for i in range(len(d["train_x"]))]
        values = {v.op.name: sess.run(v) for v in tf.global_variables()}
    np.testing.assert_allclose(losses, EXPECTED["parity/losses"], rtol=1e-4)
    for name, value in values.items():
        np.testing.assert_allclose(value, EXPECTED[f"parity/var/{name}"], rtol=1e-4,
                                   atol=1e-5, err_msg=name)


# -- tf.contrib.layers and regularizers -----------------------------------------------------
def test_contrib_fully_connected_names_and_collections():
    from tensorweave.contrib import layers as contrib_layers

    x = tf.placeholder(tf.float32, [None, 4])
    y = contrib_layers.fully_connected(x, 3)
    z = contrib_layers.fully_connected(y, 2, activation_fn=None, scope="out")
    again = contrib_layers.fully_connected(y, 2, activation_fn=None, scope="out", reuse=True)
    names = ["fully_connected/weights:0", "fully_connected/biases:0", "out/weights:0",
             "out/biases:0"]
    assert _names(tf.global_variables()) == names
    assert _names(tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)) == names
    assert (y.op.name, z.op.name, again.op.name) == (
        "fully_connected/Relu", "out/BiasAdd", "out_1/BiasAdd")
    assert y.op.type == "Relu"


def test_contrib_flatten_and_initializers():
    from tensorweave.contrib import layers as contrib_layers

    flat = contrib_layers.flatten(tf.placeholder(tf.float32, [None, 2, 3]))
    assert flat.op.name == "Flatten/flatten/Reshape" and flat.shape.as_list() == [None, 6]
    xavier = tf.get_variable("xavier", [200, 300],
                             initializer=contrib_layers.xavier_initializer(seed=1))
    he = tf.get_variable("he", [3, 3, 64, 128],
                         initializer=contrib_layers.variance_scaling_initializer(seed=2))
    a, b = _run([xavier, he])
    limit = np.sqrt(6.0 / 500)
    assert a.min() >= -limit and a.max() <= limit and a.max() > 0.95 * limit
    assert b.std() == pytest.approx(np.sqrt(2.0 / (9 * 64)), rel=0.05)  # He: 2 / fan_in
    with pytest.raises(TypeError, match="Unknown mode"):
        contrib_layers.variance_scaling_initializer(mode="fan_in")


def test_regularizer_functions():
    from tensorweave.training import regularizers as R

    w = tf.constant(np.array([[1.0, -2.0], [3.0, -4.0]], np.float32))
    l1, l2 = R.l1_regularizer(0.5)(w), R.l2_regularizer(0.1)(w)
    both = R.l1_l2_regularizer(0.5, 0.1)(w)
    assert (l1.op.name, l2.op.name) == ("l1_regularizer", "l2_regularizer")
    assert both.op.name == "l1_l2_regularizer"
    assert R.l2_regularizer(0.0)(w) is None
    assert R.sum_regularizer([None]) is None
    penalty = R.apply_regularization(R.l2_regularizer(1.0), [w, w])
    assert tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES) == [penalty]
    v1, v2, v3, v4 = _run([l1, l2, both, penalty])
    assert (v1, v2, v3, v4) == pytest.approx((5.0, 1.5, 6.5, 30.0))
    with pytest.raises(ValueError, match="cannot be an integer"):
        R.l2_regularizer(1)
    with pytest.raises(ValueError, match="less than 0"):
        R.l1_regularizer(-0.1)


def test_get_variable_regularizer_from_the_variable_scope():
    from tensorweave.training import regularizers as R

    with tf.variable_scope("net", regularizer=R.l2_regularizer(0.5)):
        layers.dense(tf.placeholder(tf.float32, [None, 2]), 2, use_bias=False,
                     kernel_initializer=tf.ones_initializer())
    (loss,) = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert loss.op.name == "net/dense/kernel/Regularizer/l2_regularizer"
    assert _run(loss) == pytest.approx(0.5 * 0.5 * 4)


# -- custom layers --------------------------------------------------------------------------
class ScaleLayer(layers.Layer):
    """A user layer: one trainable scale per feature."""

    def build(self, input_shape):
        self.scale = self.add_weight("scale", shape=[input_shape[-1]],
                                     initializer=tf.constant_initializer(2.0))
        super().build(input_shape)

    def call(self, inputs):
        return inputs * self.scale


def test_custom_layer_subclass_gets_tf1_naming():
    layer = ScaleLayer()
    out = layer(tf.constant(np.ones((2, 3), np.float32)))
    assert layer.name == "scale_layer_1" and layer.scope_name == "scale_layer"
    assert _names(layer.trainable_weights) == ["scale_layer/scale:0"]
    assert out.op.name == "scale_layer/mul"
    np.testing.assert_array_equal(_run(out), 2.0)
    assert layer.count_params() == 3


def test_dense_rejects_integer_inputs():
    with pytest.raises(TypeError, match="floating-point dtype"):
        layers.dense(tf.placeholder(tf.int32, [None, 3]), 2)


def test_channels_first_layers_match_channels_last():
    x = np.random.RandomState(5).randn(2, 6, 5, 3).astype(np.float32)
    k = np.random.RandomState(6).randn(3, 3, 3, 4).astype(np.float32)
    b = np.arange(4, dtype=np.float32)
    outs = []
    for fmt, data in (("channels_last", x), ("channels_first", x.transpose(0, 3, 1, 2))):
        h = layers.conv2d(tf.constant(data), 4, 3, padding="same", data_format=fmt,
                          kernel_initializer=tf.constant_initializer(k),
                          bias_initializer=tf.constant_initializer(b))
        h = layers.max_pooling2d(h, 2, 2, data_format=fmt)
        h = layers.batch_normalization(h, axis=1 if fmt == "channels_first" else -1,
                                       training=True)
        outs.append(layers.flatten(h, data_format=fmt))
    last, first = _run(outs)
    assert outs[1].shape.as_list() == [2, 24]
    np.testing.assert_allclose(first, last, rtol=1e-4, atol=1e-5)
