"""XLA auto-clustering on the CPU device (master/passes/mark_for_compilation.py): which nodes
join a cluster, the cost rule, the XlaLaunch node and its function, and that a clustered graph
computes what the unclustered one does (outputs, gradients, training steps, loops, conds).

Compiled and uncompiled runs differ by float32 rounding only: XLA fuses elementwise chains
and may reassociate reductions (~1e-7 relative per operation), so after a handful of training
steps over a few dozen ops the values agree to ~1e-5 relative; tolerances below are 1e-4.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.master.explain import explain
from tensorweave.master.passes import mark_for_compilation as mfc
from tensorweave.runtime.kernels.xla import backend

try:
    import jax  # noqa: F401
    HAVE_JAX = True
except ImportError:
    HAVE_JAX = False

needs_jax = pytest.mark.skipif(not HAVE_JAX, reason="XLA clusters need jax "
                                                    "(pip install tensorweave[xla])")
RTOL = 1e-4
_PASS = "mark_for_compilation"


def _config(level=1):
    config = tf.ConfigProto()
    config.graph_options.optimizer_options.global_jit_level = level
    return config


def _stage(ex, name="pass mark_for_compilation"):
    return next(s for s in ex.stages if s.name == name)


def _ops(ex, name="pass mark_for_compilation"):
    return [n.op for g in _stage(ex, name).graphs.values() for n in g.nodes]


class _Calls:
    """Counts calls of compiled clusters while active."""

    def __init__(self):
        self.n = 0

    def __enter__(self):
        from tensorweave.runtime import xla_cluster

        self._cls = xla_cluster.ClusterExecutable
        self._orig = self._cls.__call__

        def call(exe, *args):
            self.n += 1
            return self._orig(exe, *args)

        self._cls.__call__ = call
        return self

    def __exit__(self, *exc):
        self._cls.__call__ = self._orig


def _run_both(build, feed_values, steps=1, level=1):
    """Runs `build()` (returning (fetches, train op or None, placeholders)) unclustered and
    with `global_jit_level=level`; returns both runs' fetched values per step, having checked
    that the clustered run did run compiled clusters."""
    with _Calls() as calls:
        results = _run_levels(build, feed_values, steps, (0,))
    assert calls.n == 0
    with _Calls() as calls:
        results += _run_levels(build, feed_values, steps, (level,))
    assert calls.n >= steps
    return results


def _run_levels(build, feed_values, steps, levels):
    results = []
    for lvl in levels:
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(1)
            fetches, train, phs = build()
            config = {"global_jit_level": lvl} if lvl else {"disabled_passes": [_PASS]}
            with tf.Session(config=config) as sess:
                sess.run(tf.global_variables_initializer())
                feed = dict(zip(phs, feed_values))
                out = []
                for _ in range(steps):
                    out.append(sess.run(fetches, feed))
                    if train is not None:
                        sess.run(train, feed)
                results.append(out)
    return results


def _assert_close(a, b, rtol=RTOL, atol=1e-6):
    for x, y in zip(tf.nest.flatten(a), tf.nest.flatten(b)):
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


# -- jit_scope and the attrs (no jax needed) ----------------------------------------------------
def test_jit_scope_sets_tf_attrs_and_gradients_inherit_them():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3])
        with tf.xla.experimental.jit_scope():
            y = tf.tanh(x * 2.0)
            with tf.xla.experimental.jit_scope():
                z = tf.sigmoid(y)
        with tf.xla.experimental.jit_scope(compile_ops=lambda nd: nd.op == "Exp",
                                           separate_compiled_gradients=True):
            e = tf.exp(z)
            s = tf.sin(e)
        w = tf.cos(s)
        dx = tf.gradients(e, x)[0]
    assert y.op.get_attr("_XlaCompile") is True
    assert y.op.get_attr("_XlaScope") == b"jit_scope_0"
    assert z.op.get_attr("_XlaScope") == b"jit_scope_0"   # nested: the parent's scope
    assert e.op.get_attr("_XlaScope") == b"jit_scope_1"
    assert e.op.get_attr("_XlaCompile") is True and s.op.get_attr("_XlaCompile") is False
    assert e.op.get_attr("_XlaSeparateCompiledGradients") is True
    with pytest.raises(ValueError):
        w.op.get_attr("_XlaCompile")
    exp_grad = [op for op in g.get_operations() if op.name.startswith("gradients/Exp_grad/")
                and op.type == "Mul"][0]
    assert exp_grad.get_attr("_XlaScope") == b"jit_scope_1_grad_Exp"
    tanh_grad = dx.op if dx.op.type == "Mul" else [
        op for op in g.get_operations() if op.type == "TanhGrad"][0]
    assert tanh_grad.get_attr("_XlaCompile") is True


def test_global_jit_level_is_parsed_from_config_proto_and_dict():
    from tensorweave.master.options import SessionOptions

    assert SessionOptions.from_config(_config(2)).global_jit_level == 2
    opts = SessionOptions.from_config({"global_jit_level": 1})
    assert SessionOptions.from_config(opts.to_dict()).global_jit_level == 1
    assert SessionOptions.from_config(None).global_jit_level == 0


def test_without_jax_the_level_does_nothing_and_says_why(monkeypatch, caplog):
    monkeypatch.setattr(backend, "available", lambda: False)
    mfc._log_unavailable.cache_clear()
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4, 4])
        y = tf.reduce_sum(tf.tanh(tf.matmul(x, x)) * 3.0 + 1.0)
    with caplog.at_level(logging.INFO, logger="tensorweave"):
        ex = explain([y], {x: None}, graph=g, config={"global_jit_level": 1})
        explain([y], {x: None}, graph=g, config={"global_jit_level": 1})
    assert "XlaLaunch" not in _ops(ex)
    assert _stage(ex).notes == ["(no change)"]
    lines = [r for r in caplog.records if "XLA is not available" in r.getMessage()]
    assert len(lines) == 1 and "pip install tensorweave[xla]" in lines[0].getMessage()
    mfc._log_unavailable.cache_clear()


# -- structure ----------------------------------------------------------------------------------
@needs_jax
def test_a_jit_scope_becomes_one_xla_launch_with_its_function_in_the_library():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 5], name="x")
        with tf.xla.experimental.jit_scope():
            y = tf.sigmoid(tf.tanh(x * 2.0 + 1.0)) * x
        out = tf.identity(y, name="out")
    ex = explain([out], {x: None}, graph=g)
    graph = _stage(ex).graphs[""]
    launches = [n for n in graph.nodes if n.op == "XlaLaunch"]
    assert len(launches) == 1
    launch = launches[0]
    assert launch.attrs["function"].name == launch.name == "cluster_0"
    fdef = {f.name: f for f in graph.library}["cluster_0"]
    body = sorted(n.op for n in fdef.nodes)
    assert body == sorted(["_Arg", "Const", "Const", "Mul", "AddV2", "Tanh", "Sigmoid", "Mul",
                           "_Retval"])
    assert "Tanh" not in [n.op for n in graph.nodes]
    assert any("cluster_0: 5 ops → XlaLaunch (requested by _XlaCompile)" in t
               for t in _stage(ex).notes)
    assert "mark_for_compilation" in ex.text()


@needs_jax
def test_convolutions_stay_out_of_auto_clusters():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 8, 8, 3])
        w = tf.constant(np.ones((3, 3, 3, 4), np.float32))
        y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
        z = tf.reduce_sum(tf.tanh(tf.nn.relu(y) * 2.0 + 1.0))
    ex = explain([z], {x: None}, graph=g, config={"global_jit_level": 1})
    graph = _stage(ex).graphs[""]
    assert "Conv2D" in [n.op for n in graph.nodes]
    for f in graph.library:
        assert "Conv2D" not in [n.op for n in f.nodes]


@needs_jax
def test_cost_rule_compiles_big_elementwise_chains_and_leaves_small_ones():
    def notes(shape):
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, shape)
            y = tf.reduce_sum(tf.sigmoid(tf.tanh(x * 2.0 + 1.0)) * x)
        return _stage(explain([y], {x: None}, graph=g, config={"global_jit_level": 1})).notes

    small = notes([4])
    assert len(small) == 1 and small[0].startswith("left 6 ops uncompiled (model:")
    big = notes([512, 512])     # 1 MiB per intermediate: the fused-away passes dominate
    assert len(big) == 1 and big[0].startswith("cluster_0: 6 ops → XlaLaunch (model:")
    # the rule itself: no saving without work, GEMMs and free ops count nothing
    assert mfc.OP_US > 0 and mfc.LAUNCH_US > 10 * mfc.OP_US


@needs_jax
def test_stateful_ops_and_targets_are_not_clustered():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.ones(3, np.float32))
        with tf.xla.experimental.jit_scope():
            r = tf.random_uniform([3]) * 2.0 + v
            upd = tf.assign_add(v, tf.tanh(r) * 2.0 + 1.0)
    ex = explain([upd], {}, graph=g)
    graph = _stage(ex).graphs[""]
    ops = [n.op for n in graph.nodes]
    assert "RandomUniform" in ops and "AssignAdd" in ops and "VariableV2" in ops
    bodies = [{n.op for n in f.nodes} for f in graph.library]
    assert any("Tanh" in b for b in bodies)
    for b in bodies:
        assert not {"RandomUniform", "AssignAdd", "VariableV2"} & b


# -- same numbers -------------------------------------------------------------------------------
@needs_jax
def test_elementwise_chain_and_its_gradient_match():
    xs = np.random.default_rng(0).standard_normal((64, 33)).astype(np.float32)

    def build():
        x = tf.placeholder(tf.float32, [64, 33])
        with tf.xla.experimental.jit_scope():
            y = x
            for _ in range(4):
                y = tf.tanh(y * 1.5 + 0.25) - tf.sigmoid(y) * 0.5
            loss = tf.reduce_mean(tf.square(y))
        return [y, loss, tf.gradients(loss, x)[0]], None, [x]

    plain, clustered = _run_both(build, [xs])
    _assert_close(plain, clustered)


def _mlp(hidden=32):
    x = tf.placeholder(tf.float32, [None, 16])
    y = tf.placeholder(tf.int64, [None])
    h = tf.layers.dense(x, hidden, tf.nn.relu)
    h = tf.layers.dense(h, hidden, tf.nn.tanh)
    logits = tf.layers.dense(h, 4)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    return [loss] + tf.trainable_variables(), train, [x, y]


@needs_jax
def test_mlp_training_steps_match(monkeypatch):
    monkeypatch.setattr(mfc, "LAUNCH_US", 0.0)   # compile every auto-cluster
    rng = np.random.default_rng(1)
    feed = [rng.standard_normal((20, 16)).astype(np.float32), rng.integers(0, 4, 20)]
    plain, clustered = _run_both(_mlp, feed, steps=5)
    _assert_close(plain, clustered)
    assert plain[-1][0] < plain[0][0]   # it trained


@needs_jax
def test_lstm_cell_outputs_and_gradients_match(monkeypatch):
    monkeypatch.setattr(mfc, "LAUNCH_US", 0.0)
    rng = np.random.default_rng(2)
    xs = rng.standard_normal((6, 5, 3)).astype(np.float32)

    def build():
        x = tf.placeholder(tf.float32, [6, 5, 3])
        cell = tf.nn.rnn_cell.BasicLSTMCell(8)
        outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        loss = tf.reduce_sum(tf.square(outputs)) + tf.reduce_sum(state.c)
        params = tf.trainable_variables()
        return [outputs, state.h, loss] + tf.gradients(loss, params + [x]), None, [x]

    plain, clustered = _run_both(build, [xs])
    _assert_close(plain, clustered)
    g = tf.Graph()
    with g.as_default():
        fetches, _, (x,) = build()
    ex = explain(fetches, {x: None}, graph=g, config={"global_jit_level": 1})
    graph = _stage(ex).graphs[""]
    bodies = [{n.op for n in f.nodes} for f in graph.library if f.name.startswith("cluster_")]
    assert any({"Sigmoid", "Tanh", "Mul"} <= b for b in bodies)   # the cell, inside the loop


@needs_jax
def test_cond_branches_are_not_merged_with_ops_outside_them(monkeypatch):
    monkeypatch.setattr(mfc, "LAUNCH_US", 0.0)

    def build():
        x = tf.placeholder(tf.float32, [4])
        p = tf.placeholder(tf.bool, [])
        a = tf.tanh(x * 2.0)
        b = tf.cond(p, lambda: tf.sigmoid(a) * 3.0 + 1.0, lambda: tf.exp(a) - 2.0)
        return [a * 5.0 + 1.0, b * 2.0], None, [x, p]

    xs = np.linspace(-1, 1, 4).astype(np.float32)
    for pv in (True, False):
        plain, clustered = _run_both(build, [xs, pv])
        _assert_close(plain, clustered)


@needs_jax
def test_control_dependencies_into_a_cluster_hold(monkeypatch):
    monkeypatch.setattr(mfc, "LAUNCH_US", 0.0)

    def build():
        v = tf.Variable(np.zeros(3, np.float32))
        inc = tf.assign_add(v, np.ones(3, np.float32))
        x = tf.placeholder(tf.float32, [3])
        with tf.control_dependencies([inc]):
            y = tf.tanh(x * 2.0) + 1.0
        return [y * 3.0, v.read_value()], None, [x]

    plain, clustered = _run_both(build, [np.ones(3, np.float32)], steps=3)
    _assert_close(plain, clustered)
    assert clustered[-1][1].tolist() == [3.0, 3.0, 3.0]


# -- no cycles, on random graphs ----------------------------------------------------------------
@needs_jax
@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_cluster_without_cycles_and_keep_their_values(seed, monkeypatch):
    """Random DAGs of compilable ops (elementwise, matmul) and uncompilable ones (a py_func
    sits where a cluster would otherwise swallow a path around it)."""
    monkeypatch.setattr(mfc, "LAUNCH_US", 0.0)
    rng = np.random.default_rng(seed)
    n = 24
    picks = [(rng.integers(0, 3), rng.integers(0, 10 ** 6, 2)) for _ in range(n)]
    xs = rng.standard_normal((5, 5)).astype(np.float32)

    def build():
        x = tf.placeholder(tf.float32, [5, 5])
        nodes = [x]
        for kind, (i, j) in picks:
            a, b = nodes[i % len(nodes)], nodes[j % len(nodes)]
            if kind == 0:
                nodes.append(tf.tanh(a + b * 0.5))
            elif kind == 1:
                nodes.append(tf.matmul(a, b) * 0.2)
            else:
                nodes.append(tf.py_func(lambda v: np.sin(v), [a], tf.float32, stateful=False))
                nodes[-1].set_shape([5, 5])
        return [tf.add_n(nodes[-6:])] + nodes[1::4], None, [x]

    plain, clustered = _run_both(build, [xs])
    _assert_close(plain, clustered)


# -- compiled once per shape signature ---------------------------------------------------------
@needs_jax
def test_recompiles_per_shape_signature_are_bounded_and_logged(monkeypatch, caplog):
    from tensorweave.runtime import xla_cluster

    made = []
    init = xla_cluster.ClusterExecutable.__init__

    def record(self, *a, **k):
        init(self, *a, **k)
        made.append(self)

    monkeypatch.setattr(xla_cluster.ClusterExecutable, "__init__", record)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        with tf.xla.experimental.jit_scope():
            y = tf.reduce_sum(tf.tanh(x * 2.0) + 1.0, axis=1)
        with tf.Session() as sess, caplog.at_level(logging.INFO, logger="tensorweave"):
            for rows in [1, 2, 1, 2] + list(range(3, 23)):
                xs = np.ones((rows, 3), np.float32)
                np.testing.assert_allclose(sess.run(y, {x: xs}),
                                           np.full(rows, 3 * (np.tanh(2.0) + 1)), rtol=1e-6)
    (exe,) = made
    assert exe.compiles == 22                       # 22 distinct batch sizes, repeats cached
    assert exe.cache_size == 16 and len(exe._exe._cache) == 16   # the LRU bound
    recompiles = [r for r in caplog.records if "recompiling" in r.getMessage()]
    assert len(recompiles) == 21 and "(7, 3)" in recompiles[5].getMessage()


# -- tensorweave explain ------------------------------------------------------------------------
@needs_jax
def test_explain_cli_lists_the_clusters_with_jit_on(tmp_path, capsys):
    from tensorweave.cli.main import main

    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [256, 512], name="x")
        h = tf.nn.relu(x - 0.5)
        tf.reduce_mean(tf.sigmoid(h * 2.0 + 1.0) * tf.tanh(h), name="loss")
    tf.train.write_graph(g, str(tmp_path), "g.pb", as_text=False)
    args = ["explain", str(tmp_path / "g.pb"), "--fetch", "loss:0", "--feed", "x:0"]
    assert main(args + ["--jit", "ON_1"]) == 0
    out = capsys.readouterr().out
    assert "cluster_0: 8 ops → XlaLaunch (model: saves" in out
    assert "+ cluster_0 = XlaLaunch[" in out
    assert main(args) == 0
    assert "XlaLaunch" not in capsys.readouterr().out
