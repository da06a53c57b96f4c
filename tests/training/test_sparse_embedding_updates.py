"""A word2vec step stays sparse: the embedding, NCE/softmax weight and bias gradients are
IndexedSlices all the way to the optimizer, whose update ops are the sparse ones, and no
node computes a value of the vocabulary-sized shapes besides the variables themselves (the
step's trace is searched for outputs shaped [V, D] or [V])."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

V, D, B = 3001, 7, 16
SPARSE_UPDATE_OPS = {"ScatterSub", "ScatterAdd", "SparseApplyAdagrad", "SparseApplyMomentum",
                     "SparseApplyRMSProp", "SparseApplyAdadelta", "SparseApplyFtrl",
                     "SparseApplyFtrlV2", "SparseApplyProximalAdagrad",
                     "SparseApplyProximalGradientDescent"}
OPTIMIZERS = {
    "sgd": lambda: tf.train.GradientDescentOptimizer(1.0),
    "adagrad": lambda: tf.train.AdagradOptimizer(0.5),
    "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    "rmsprop": lambda: tf.train.RMSPropOptimizer(0.1),
    "adadelta": lambda: tf.train.AdadeltaOptimizer(1.0),
}
for _name in ("FtrlOptimizer", "ProximalAdagradOptimizer", "ProximalGradientDescentOptimizer"):
    if hasattr(tf.train, _name):
        OPTIMIZERS[_name] = (lambda n: lambda: getattr(tf.train, n)(0.1))(_name)


def _model(loss_fn, shards: int):
    x = tf.placeholder(tf.int32, [B])
    y = tf.placeholder(tf.int32, [B, 1])
    emb = tf.Variable(tf.random_uniform([V, D], -1.0, 1.0, seed=1))
    w = [tf.Variable(tf.truncated_normal([V // shards + (i < V % shards), D], seed=i + 2))
         for i in range(shards)]
    b = tf.Variable(tf.zeros([V]))
    embed = tf.nn.embedding_lookup(emb, x)
    loss = tf.reduce_mean(loss_fn(weights=w if shards > 1 else w[0], biases=b, labels=y,
                                  inputs=embed, num_sampled=8, num_classes=V))
    return x, y, loss, [emb, b] + w


def _dense_shaped(md, shards: int) -> list[str]:
    big = {(V, D), (V,)} | {(V // shards + (i < V % shards), D) for i in range(shards)}
    out = []
    for dev in md.step_stats.dev_stats:
        for n in dev.node_stats:
            for o in n.output:
                dims = tuple(d.size for d in o.tensor_description.shape.dim)
                if dims in big:
                    out.append(f"{n.node_name} {dims}")
    return out


@pytest.mark.parametrize("shards", [1, 3])
@pytest.mark.parametrize("loss_name", ["nce_loss", "sampled_softmax_loss"])
@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_word2vec_step_never_computes_a_dense_vocabulary_gradient(opt_name, loss_name, shards):
    with tf.Graph().as_default() as g:
        x, y, loss, variables = _model(getattr(tf.nn, loss_name), shards)
        opt = OPTIMIZERS[opt_name]()
        grads = opt.compute_gradients(loss, variables)
        assert all(isinstance(gr, tf.IndexedSlices) for gr, _ in grads), \
            [type(gr).__name__ for gr, _ in grads]
        train = opt.apply_gradients(grads)
        updates = {op.type for op in g.get_operations() if op.name.startswith(opt.get_name())}
        assert updates & SPARSE_UPDATE_OPS, updates
        assert not {t for t in updates if t.startswith("Apply")}, updates
        rng = np.random.default_rng(0)
        feed = {x: rng.integers(0, V, B).astype(np.int32),
                y: rng.integers(0, V, (B, 1)).astype(np.int32)}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(variables[0])
            md = tf.RunMetadata()
            sess.run(train, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=md)
            after = sess.run(variables[0])
    changed = np.flatnonzero(np.any(before != after, axis=1))
    assert set(changed.tolist()) <= set(feed[x].tolist()) and changed.size
    stateful = {"VariableV2", "Identity"}
    dense = [n for n in _dense_shaped(md, shards)
             if g.get_operation_by_name(n.split()[0]).type not in stateful | SPARSE_UPDATE_OPS]
    assert not dense, f"vocabulary-sized values computed in the step: {dense}"
