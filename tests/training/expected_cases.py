"""Cases shared by `make_layers_expected.py` (run with TensorFlow) and the tests (run with
tensorweave): fixed inputs and graph builders written against a `tf`-like namespace, so both
sides build the same graph. Nothing here imports TensorFlow or tensorweave at module level.

A builder takes `(tf, d)` (`d`: the arrays of `inputs()`) and returns a dict of fetches; the
expected values live in tests/data/layers_expected.npz under `<case>/<fetch>`.
"""

from __future__ import annotations

import numpy as np

STEPS = 5
MOMENTUM = 0.9
TRAIN_PATTERN = [True, False, True, True, False]


def inputs() -> dict:
    """Fixed float32 inputs and initial values (seeded)."""
    rng = np.random.RandomState(1234)

    def f32(*shape, scale=1.0):
        return (rng.randn(*shape) * scale).astype(np.float32)

    return {
        "x2": f32(4, 5), "x3": f32(2, 3, 5), "dense_w": f32(5, 3, scale=0.5),
        "dense_b": f32(3, scale=0.1),
        "img": f32(2, 7, 6, 3), "conv_k": f32(3, 2, 3, 4, scale=0.3), "conv_b": f32(4),
        "conv_k3": f32(3, 3, 3, 2, scale=0.3),
        "small": f32(2, 3, 4, 2), "deconv_k": f32(3, 3, 3, 2, scale=0.3),
        "bn4": f32(STEPS, 4, 3, 3, 2, scale=2.0) + 0.5, "bn2": f32(STEPS, 6, 4, scale=3.0) - 1.0,
        "bn_nchw": f32(4, 2, 3, 3) + 1.0, "gamma": f32(2) + 1.0, "beta": f32(2),
        # losses
        "logits": f32(6, 4), "onehot": np.eye(4, dtype=np.float32)[[0, 3, 1, 1, 2, 0]],
        "sparse": np.array([0, 3, 1, 1, 2, 0], np.int32),
        "w_vec": np.array([1.0, 0.0, 2.0, 0.5, 0.0, 1.0], np.float32),
        "w_col": np.array([[1.0], [0.0], [2.0], [0.5], [0.0], [1.0]], np.float32),
        "pred": rng.uniform(0.05, 0.95, (6, 3)).astype(np.float32),
        "target": rng.uniform(0.0, 1.0, (6, 3)).astype(np.float32),
        "binary": (rng.uniform(size=(6, 3)) > 0.5).astype(np.float32),
        "w_mat": rng.uniform(0.0, 2.0, (6, 3)).astype(np.float32) * (rng.uniform(size=(6, 3))
                                                                   > 0.3),
        # training parity
        "train_x": f32(3, 8, 6, 6, 1), "train_y": rng.randint(0, 5, (3, 8)).astype(np.int32),
        "train_k": f32(3, 3, 1, 4, scale=0.4), "train_w": f32(36, 5, scale=0.2),
    }


# -- forward cases --------------------------------------------------------------------------------
def forward_cases(tf, d) -> dict:
    """Layer outputs on fixed inputs and initial values."""
    const = tf.constant_initializer
    out = {}
    out["dense/relu"] = tf.layers.dense(
        tf.constant(d["x2"]), 3, activation=tf.nn.relu, kernel_initializer=const(d["dense_w"]),
        bias_initializer=const(d["dense_b"]))
    out["dense/rank3"] = tf.layers.dense(tf.constant(d["x3"]), 3,
                                         kernel_initializer=const(d["dense_w"]), use_bias=False)
    img = tf.constant(d["img"])
    for padding in ("valid", "same"):
        out[f"conv/{padding}"] = tf.layers.conv2d(
            img, 4, (3, 2), strides=(2, 1), padding=padding,
            kernel_initializer=const(d["conv_k"]), bias_initializer=const(d["conv_b"]))
    out["conv/dilated"] = tf.layers.conv2d(img, 2, 3, padding="same", dilation_rate=2,
                                           kernel_initializer=const(d["conv_k3"]),
                                           activation=tf.nn.relu)
    small = tf.constant(d["small"])
    for padding in ("valid", "same"):
        out[f"deconv/{padding}"] = tf.layers.conv2d_transpose(
            small, 3, 3, strides=2, padding=padding, kernel_initializer=const(d["deconv_k"]))
    for padding in ("valid", "same"):
        out[f"maxpool/{padding}"] = tf.layers.max_pooling2d(img, 3, 2, padding=padding)
    out["avgpool/same"] = tf.layers.average_pooling2d(img, 2, (2, 1), padding="same")
    out["avgpool/valid"] = tf.layers.average_pooling2d(img, (2, 3), 1)
    out["flatten"] = tf.layers.flatten(img)
    return out


def batch_norm_forward_cases(tf, d) -> dict:
    """Batch-norm outputs in training and inference mode (fused, non-fused, NCHW)."""
    const = tf.constant_initializer
    out = {}
    x4, x2 = tf.constant(d["bn4"][0]), tf.constant(d["bn2"][0])
    for training in (True, False):
        tag = "train" if training else "infer"
        out[f"bn_fused/{tag}"] = tf.layers.batch_normalization(
            x4, training=training, gamma_initializer=const(d["gamma"]),
            beta_initializer=const(d["beta"]))
        out[f"bn_plain/{tag}"] = tf.layers.batch_normalization(x2, training=training,
                                                               epsilon=0.01)
        out[f"bn_nchw/{tag}"] = tf.layers.batch_normalization(
            tf.constant(d["bn_nchw"]), axis=1, training=training,
            gamma_initializer=const(d["gamma"]), beta_initializer=const(d["beta"]))
        out[f"bn_unfused4d/{tag}"] = tf.layers.batch_normalization(
            x4, training=training, fused=False, center=False)
    return out


def moving_average_model(tf, d):
    """Batch-norm layers fed one batch per step: fused / non-fused, with a Python
    `training=True` and with a fed bool tensor, and batch renormalization. Returns (feeds,
    update_ops, fetches)."""
    x4 = tf.placeholder(tf.float32, [None, 3, 3, 2], name="x4")
    x2 = tf.placeholder(tf.float32, [None, 4], name="x2")
    training = tf.placeholder(tf.bool, [], name="training")
    fetches = {}
    layers = {
        "fused": (x4, True, {}), "plain": (x2, True, {}), "fused_t": (x4, training, {}),
        "plain_t": (x2, training, {}),
        "renorm": (x2, training, dict(renorm=True, renorm_momentum=0.8,
                                      renorm_clipping={"rmax": 1.5, "dmax": 0.5})),
    }
    for tag, (x, flag, extra) in layers.items():
        layer = tf.layers.BatchNormalization(momentum=MOMENTUM, name=f"bn_{tag}", **extra)
        fetches[f"ma_{tag}/output"] = layer.apply(x, training=flag)
        fetches[f"ma_{tag}/moving_mean"] = layer.moving_mean
        fetches[f"ma_{tag}/moving_variance"] = layer.moving_variance
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    return (x4, x2, training), updates, fetches


# -- losses ---------------------------------------------------------------------------------------
REDUCTIONS = ["NONE", "SUM", "MEAN", "SUM_OVER_BATCH_SIZE", "SUM_BY_NONZERO_WEIGHTS"]


def loss_cases(tf, d) -> dict:
    """Every loss with scalar, per-example and per-element weights, and each reduction."""
    c = tf.constant
    L = tf.losses
    out = {}
    for red in REDUCTIONS:
        r = getattr(L.Reduction, red)
        out[f"softmax/{red}"] = L.softmax_cross_entropy(c(d["onehot"]), c(d["logits"]),
                                                        weights=c(d["w_vec"]), reduction=r)
        out[f"sparse/{red}"] = L.sparse_softmax_cross_entropy(c(d["sparse"]), c(d["logits"]),
                                                              weights=c(d["w_vec"]),
                                                              reduction=r)
        out[f"mse/{red}"] = L.mean_squared_error(c(d["target"]), c(d["pred"]),
                                                 weights=c(d["w_mat"]), reduction=r)
    out["softmax/default"] = L.softmax_cross_entropy(c(d["onehot"]), c(d["logits"]))
    out["softmax/smooth"] = L.softmax_cross_entropy(c(d["onehot"]), c(d["logits"]),
                                                    weights=2.0, label_smoothing=0.1)
    out["sparse/default"] = L.sparse_softmax_cross_entropy(c(d["sparse"]), c(d["logits"]))
    out["sparse/w_col"] = L.sparse_softmax_cross_entropy(c(d["sparse"]), c(d["logits"]),
                                                         weights=c(d["w_col"]))
    out["sigmoid/default"] = L.sigmoid_cross_entropy(c(d["binary"]), c(d["pred"]) * 4 - 2)
    out["sigmoid/smooth"] = L.sigmoid_cross_entropy(c(d["binary"]), c(d["pred"]) * 4 - 2,
                                                    weights=c(d["w_mat"]), label_smoothing=0.2)
    out["mse/default"] = L.mean_squared_error(c(d["target"]), c(d["pred"]))
    out["mse/w_col"] = L.mean_squared_error(c(d["target"]), c(d["pred"]),
                                            weights=c(d["w_col"]))
    out["absdiff/w_mat"] = L.absolute_difference(c(d["target"]), c(d["pred"]),
                                                 weights=c(d["w_mat"]))
    out["huber/delta"] = L.huber_loss(c(d["target"]) * 3, c(d["pred"]), delta=0.7)
    out["log_loss/w_col"] = L.log_loss(c(d["binary"]), c(d["pred"]), weights=c(d["w_col"]))
    out["hinge/default"] = L.hinge_loss(c(d["binary"]), c(d["pred"]) * 4 - 2)
    out["cosine/axis1"] = L.cosine_distance(c(d["target"]), c(d["pred"]), axis=1)
    out["pairwise/w_col"] = L.mean_pairwise_squared_error(c(d["target"]), c(d["pred"]),
                                                          weights=c(d["w_col"]))
    out["pairwise/default"] = L.mean_pairwise_squared_error(c(d["target"]), c(d["pred"]))
    return out


# -- metrics --------------------------------------------------------------------------------------
def metric_batches() -> list:
    """Three (labels, predictions, weights) batches of binary labels."""
    rng = np.random.RandomState(7)
    return [((rng.uniform(size=5) > 0.5).astype(np.int64),
             (rng.uniform(size=5) > 0.4).astype(np.int64),
             rng.uniform(0.0, 2.0, 5).astype(np.float32) * (rng.uniform(size=5) > 0.2))
            for _ in range(3)]


def metric_cases(tf, labels, predictions, weights) -> dict:
    """(value, update_op) pairs of the streaming metrics, on placeholders."""
    m = tf.metrics
    return {
        "accuracy": m.accuracy(labels, predictions),
        "accuracy_w": m.accuracy(labels, predictions, weights=weights),
        "mean_w": m.mean(tf.cast(predictions, tf.float32) * 3.0, weights=weights),
        "precision": m.precision(labels, predictions),
        "recall_w": m.recall(labels, predictions, weights=weights),
        "mse_w": m.mean_squared_error(labels, predictions, weights=weights),
        "mae": m.mean_absolute_error(labels, predictions),
        "rmse": m.root_mean_squared_error(labels, predictions),
    }


# -- training parity ------------------------------------------------------------------------------
def parity_model(tf, d, regularizer):
    """conv(relu, L2) → batch norm → max pool → flatten → dense, trained by plain SGD with the
    UPDATE_OPS idiom. Returns (x, y, loss, train_op)."""
    const = tf.constant_initializer
    x = tf.placeholder(tf.float32, [None, 6, 6, 1], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu,
                         kernel_initializer=const(d["train_k"]),
                         kernel_regularizer=regularizer)
    h = tf.layers.batch_normalization(h, momentum=0.8, training=True)
    h = tf.layers.max_pooling2d(h, 2, 2)
    logits = tf.layers.dense(tf.layers.flatten(h), 5, kernel_initializer=const(d["train_w"]))
    tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    loss = tf.losses.get_total_loss()
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return x, y, loss, train_op


# -- the tensorweave side -------------------------------------------------------------------------
def tensorweave_namespace():
    """`import tensorweave as tf`, completed with the modules this area provides where the
    public namespace does not export them yet (tf.layers, tf.losses, tf.metrics, tf.nn)."""
    import importlib
    import pkgutil
    import types

    import tensorweave
    import tensorweave.runtime.kernels.cpu as cpu

    for mod in pkgutil.iter_modules(cpu.__path__):  # NOTE: registers kernels not wired yet
        try:
            importlib.import_module(f"{cpu.__name__}.{mod.name}")
        except Exception:  # noqa: BLE001 - a family still being written; its tests fail
            pass
    ns = types.SimpleNamespace(**{k: getattr(tensorweave, k) for k in dir(tensorweave)
                                  if not k.startswith("__")})
    for name, module in (("layers", "tensorweave.training.layers"),
                         ("losses", "tensorweave.training.losses"),
                         ("metrics", "tensorweave.training.metrics")):
        if not hasattr(ns, name):
            setattr(ns, name, importlib.import_module(module))
    if not hasattr(ns, "nn"):
        ns.nn = types.SimpleNamespace()
        for module in ("nn_ops", "nn_conv", "nn_norm", "nn_losses"):
            mod = importlib.import_module(f"tensorweave.ops.{module}")
            for name in mod.__all__:
                setattr(ns.nn, name, getattr(mod, name))
    for module in ("array_ops", "creation_ops", "control_flow_ops", "joining_ops"):
        mod = importlib.import_module(f"tensorweave.ops.{module}")
        for name in mod.__all__:
            if not hasattr(ns, name):
                setattr(ns, name, getattr(mod, name))
    return ns


def optimizer_or_none(tf, name: str = "GradientDescentOptimizer"):
    """`tf.train.<name>` if some module provides it yet, else None."""
    import importlib

    found = getattr(tf.train, name, None)
    if found is not None:
        return found
    for module in ("tensorweave.training.optimizers", "tensorweave.training.optimizer"):
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if found is not None:
            return found
    return None
