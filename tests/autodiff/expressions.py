"""Expressions whose gradients are compared with TensorFlow's (`make_expected.py` writes them).

Each expression is `fn(tf, inputs) -> (y, xs)`, written against the TF1 API so the same code
builds in TensorFlow (`tensorflow.compat.v1`) and in tensorweave: `inputs` are numpy arrays,
the expression turns them into constants, and the gradients of `y` with respect to `xs` are
compared. This module must not import tensorweave (the TensorFlow peer runs it).
"""

from __future__ import annotations

import numpy as np


def _inputs(seed: int, *shapes, dtype=np.float32, lo=-1.0, hi=1.0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(lo, hi, size=s).astype(dtype) for s in shapes]


def mlp_softmax_xent(tf, v):
    x, w, b, w2 = [tf.constant(a) for a in v]
    labels = tf.constant(np.eye(4, dtype=np.float32)[[0, 3, 1]])
    h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b))
    logits = tf.matmul(h, w2)
    xent = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    return tf.reduce_mean(xent), [x, w, b, w2]


def conv_pool(tf, v):
    x, f = [tf.constant(a) for a in v]
    c = tf.nn.conv2d(x, f, strides=[1, 1, 1, 1], padding="SAME")
    p = tf.nn.max_pool(tf.nn.relu(c), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    a = tf.nn.avg_pool(c, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME")
    return tf.reduce_sum(p * p) + tf.reduce_sum(a), [x, f]


def conv_strided_valid(tf, v):
    x, f = [tf.constant(a) for a in v]
    c = tf.nn.conv2d(x, f, strides=[1, 2, 1, 1], padding="VALID")
    return tf.reduce_sum(tf.tanh(c)), [x, f]


def batch_norm_training(tf, v):
    x, scale, offset, w = [tf.constant(a) for a in v]
    y, _, _ = tf.nn.fused_batch_norm(x, scale, offset, epsilon=0.001, is_training=True)
    return tf.reduce_sum(y * w), [x, scale, offset]


def gather_rows(tf, v):
    params, w = [tf.constant(a) for a in v]
    g = tf.gather(params, tf.constant([0, 3, 3, 1]))
    return tf.reduce_sum(g * w), [params]


def slicing(tf, v):
    (x,) = [tf.constant(a) for a in v]
    y = tf.reduce_sum(x[1:, ::-2] * 1.5) + tf.reduce_sum(tf.square(tf.slice(x, [0, 1], [2, 3])))
    y += tf.reduce_sum(x[-1, 1:3] * x[0, 0])
    return y, [x]


def reductions(tf, v):
    (x,) = [tf.constant(a) for a in v]
    c = tf.constant([1.0, -2.0, 0.5, 3.0])
    y = tf.reduce_sum(tf.reduce_mean(x, axis=0) * c) + tf.reduce_sum(tf.reduce_max(x, axis=1))
    y += tf.reduce_prod(x[0]) + tf.reduce_logsumexp(x) + tf.reduce_min(x)
    return y, [x]


def broadcasting(tf, v):
    a, b, c, d = [tf.constant(t) for t in v]
    y = tf.reduce_sum((a * b + c) / (d + 2.0) - tf.square(a - c))
    return y, [a, b, c, d]


def cond_true(tf, v):
    return _cond(tf, v, True)


def cond_false(tf, v):
    return _cond(tf, v, False)


def _cond(tf, v, pred):
    x, y = [tf.constant(a) for a in v]
    r = tf.cond(tf.constant(pred), lambda: x * y, lambda: tf.sin(x) + y * 2.0)
    return tf.reduce_sum(r * r + x), [x, y]


def sparse_xent(tf, v):
    (logits,) = [tf.constant(a) for a in v]
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([2, 0, 1]),
                                                          logits=logits)
    return tf.reduce_sum(loss * tf.constant([1.0, 2.0, 3.0])), [logits]


def elementwise(tf, v):
    x, y = [tf.constant(a) for a in v]
    r = tf.sigmoid(x) * tf.tanh(y) + tf.pow(x + 2.0, y) + tf.exp(x) * tf.log(y + 2.0)
    return tf.reduce_sum(r + tf.sqrt(x * x + 1.0) + tf.maximum(x, y)), [x, y]


def joining(tf, v):
    a, b = [tf.constant(t) for t in v]
    c = tf.concat([a, b * 2.0], axis=1)
    s0, s1 = tf.split(c, [2, 3], axis=1)
    st = tf.stack([s0[:, 0], s1[:, 2]], axis=1)
    t = tf.tile(tf.transpose(a), [2, 1])
    return tf.reduce_sum(st * st) + tf.reduce_sum(t * tf.reduce_sum(s1)), [a, b]


def batch_matmul_activations(tf, v):
    a, b = [tf.constant(t) for t in v]
    m = tf.matmul(a, b)
    r = tf.nn.softplus(m) + tf.nn.elu(m) + tf.nn.leaky_relu(m, alpha=0.1)
    return tf.reduce_sum(r), [a, b]


def segments_and_scans(tf, v):
    (x,) = [tf.constant(a) for a in v]
    s = tf.segment_sum(x, tf.constant([0, 0, 1, 2]))
    u = tf.unsorted_segment_sum(x, tf.constant([1, -1, 1, 0]), 3)
    c = tf.cumsum(x, axis=1, reverse=True)
    return tf.reduce_sum(s * s) + tf.reduce_sum(u * 3.0) + tf.reduce_sum(c * c), [x]


# name -> (build, inputs)
EXPRESSIONS = {
    "mlp_softmax_xent": (mlp_softmax_xent, _inputs(1, (3, 5), (5, 6), (6,), (6, 4))),
    "conv_pool": (conv_pool, _inputs(2, (2, 6, 5, 3), (3, 3, 3, 4))),
    "conv_strided_valid": (conv_strided_valid, _inputs(3, (1, 7, 6, 2), (3, 2, 2, 3))),
    "batch_norm_training": (batch_norm_training, _inputs(4, (4, 3, 2, 3), (3,), (3,),
                                                         (4, 3, 2, 3))),
    "gather_rows": (gather_rows, _inputs(5, (5, 3), (4, 3))),
    "slicing": (slicing, _inputs(6, (4, 5))),
    "reductions": (reductions, _inputs(7, (3, 4))),
    "broadcasting": (broadcasting, _inputs(8, (2, 1, 3), (4, 1), (3,), ())),
    "cond_true": (cond_true, _inputs(9, (3,), (3,))),
    "cond_false": (cond_false, _inputs(9, (3,), (3,))),
    "sparse_xent": (sparse_xent, _inputs(10, (3, 4))),
    "elementwise": (elementwise, _inputs(11, (2, 3), (2, 3), lo=0.1, hi=1.0)),
    "joining": (joining, _inputs(12, (3, 2), (3, 3))),
    "batch_matmul_activations": (batch_matmul_activations, _inputs(13, (2, 3, 4), (2, 4, 2))),
    "segments_and_scans": (segments_and_scans, _inputs(14, (4, 3))),
}
