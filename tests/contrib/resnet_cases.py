"""slim's resnet_v1 built the same way by tensorweave (test_slim_resnet.py) and by TensorFlow
with `tf_slim` (make_resnet_expected.py): `run(tf, resnet_v1)` builds ResNet-50 (64x64 input,
10 classes) and a small atrous ResNet, gives every variable `value_for(name, shape)` and
returns the names, shapes and outputs to compare."""

from __future__ import annotations

import zlib

import numpy as np


def value_for(name: str, shape) -> np.ndarray:
    """Deterministic weights per variable name: He-scaled kernels (so 50 layers neither vanish
    nor blow up), batch-norm statistics and affine terms near the identity."""
    rng = np.random.RandomState(zlib.crc32(name.encode()) % (2 ** 31))
    short = name.split("/")[-1]
    if short in ("moving_variance", "gamma"):
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)
    if short in ("moving_mean", "beta", "biases"):
        return rng.normal(0.0, 0.1, shape).astype(np.float32)
    fan_in = int(np.prod(shape[:-1]))
    return (rng.normal(0.0, 1.0, shape) * np.sqrt(1.0 / fan_in)).astype(np.float32)


def _images(shape, seed):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)


def _load(tf, sess):
    for v in tf.global_variables():
        sess.run(v.assign(value_for(v.op.name, v.shape.as_list())))


def _describe(tf, out, prefix, end_points):
    variables = tf.global_variables()
    out[f"{prefix}/names"] = np.array([v.op.name for v in variables])
    out[f"{prefix}/shapes"] = np.array([str(v.shape.as_list()) for v in variables])
    out[f"{prefix}/end_points"] = np.array(list(end_points))
    out[f"{prefix}/end_point_shapes"] = np.array([str(t.shape.as_list())
                                                  for t in end_points.values()])
    out[f"{prefix}/regularization"] = np.array(
        [t.op.name for t in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)])
    out[f"{prefix}/update_ops"] = np.array(len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)))


def run(tf, resnet_v1, slim, parts=("r50", "tiny")):
    out = {}
    if "r50" in parts:
        _run_r50(tf, resnet_v1, slim, out)
    if "tiny" in parts:
        _run_tiny(tf, resnet_v1, slim, out)
    return out


def _run_r50(tf, resnet_v1, slim, out):
    with tf.Graph().as_default():
        x = tf.constant(_images((2, 64, 64, 3), 1))
        with slim.arg_scope(resnet_v1.resnet_arg_scope()):
            logits, end_points = resnet_v1.resnet_v1_50(x, num_classes=10, is_training=False)
        _describe(tf, out, "r50", end_points)
        with tf.Session() as sess:
            _load(tf, sess)
            out["r50/logits"], out["r50/predictions"], out["r50/block3"] = sess.run(
                [logits, end_points["predictions"], end_points["resnet_v1_50/block3"]])


def _run_tiny(tf, resnet_v1, slim, out):
    """Atrous: output_stride 8 turns block3's units (nominal stride 16) into rate-2 ones;
    batch norm in training mode (batch statistics); an odd input size."""
    with tf.Graph().as_default():
        x = tf.constant(_images((1, 37, 29, 3), 2))
        blocks = [resnet_v1.resnet_v1_block("block1", base_depth=4, num_units=2, stride=2),
                  resnet_v1.resnet_v1_block("block2", base_depth=8, num_units=2, stride=2),
                  resnet_v1.resnet_v1_block("block3", base_depth=8, num_units=1, stride=1)]
        with slim.arg_scope(resnet_v1.resnet_arg_scope()):
            net, end_points = resnet_v1.resnet_v1(x, blocks, num_classes=None,
                                                   is_training=True, global_pool=False,
                                                   output_stride=8, scope="tiny")
        _describe(tf, out, "tiny", end_points)
        with tf.Session() as sess:
            _load(tf, sess)
            out["tiny/net"] = sess.run(net)
