"""The XLA device (jax): lowerings against the numpy kernels, CPU ↔ XLA_CPU partitions, an
MLP training step on /device:XLA_CPU:0 matching the all-CPU run, and the compile cache."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax", reason="the XLA device needs jax (pip install tensorweave[xla])")

import tensorweave as tf  # noqa: E402
from tensorweave.ops import training_ops  # noqa: E402
from tensorweave.runtime import xla_executable  # noqa: E402

XLA = "/device:XLA_CPU:0"


@pytest.fixture
def built(monkeypatch):
    """The XlaExecutables built during the test."""
    made = []
    init = xla_executable.XlaExecutable.__init__

    def record(self, *a, **k):
        init(self, *a, **k)
        made.append(self)

    monkeypatch.setattr(xla_executable.XlaExecutable, "__init__", record)
    return made


def _run(build, device, feeds=None, soft=False):
    """Runs `build()`'s fetches with the graph under `device` (None: no device scope)."""
    g = tf.Graph()
    with g.as_default():
        ph = {k: tf.placeholder(v.dtype, v.shape, name=k) for k, v in (feeds or {}).items()}
        if device:
            with tf.device(device):
                fetches = build(**ph)
        else:
            fetches = build(**ph)
        config = tf.ConfigProto(allow_soft_placement=soft)
        with tf.Session(config=config) as sess:
            return sess.run(fetches, {ph[k]: v for k, v in (feeds or {}).items()})


def test_list_devices_has_xla_cpu_and_no_gpu_without_cuda():
    with tf.Session() as sess:
        names = [d.name for d in sess.list_devices()]
    assert names[0].endswith("/device:CPU:0")
    assert any(n.endswith("/device:XLA_CPU:0") for n in names)
    assert not any("GPU" in n for n in names)  # this machine has no CUDA device


def test_no_xla_device_without_jax(monkeypatch):
    from tensorweave.runtime import device
    from tensorweave.runtime.kernels.xla import backend

    monkeypatch.setattr(backend, "available", lambda: False)
    assert device.local_device_names(cpus=2) == [
        "/job:localhost/replica:0/task:0/device:CPU:0",
        "/job:localhost/replica:0/task:0/device:CPU:1"]


_RNG = np.random.default_rng(0)
_A = _RNG.standard_normal((4, 5)).astype(np.float32)
_B = _RNG.standard_normal((5, 3)).astype(np.float32)
_P = np.abs(_A) + 0.5

OPS = {
    "unary": lambda: [tf.negative(_A), tf.square(_A), tf.exp(_A), tf.log(_P), tf.sqrt(_P),
                      tf.rsqrt(_P), tf.tanh(_A), tf.abs(_A), tf.floor(_A), tf.sign(_A)],
    "binary": lambda: [tf.add(_A, _P), tf.subtract(_A, _P), tf.multiply(_A, _P),
                       tf.realdiv(_A, _P), tf.maximum(_A, 0.1),
                       tf.minimum(_A, _P), tf.pow(_P, 1.5), tf.squared_difference(_A, _P),
                       tf.cast(tf.less(_A, _P), tf.int32), tf.add_n([_A, _P, _A])],
    "int": lambda: [tf.floordiv(np.array([7, -7, 9]), 2), tf.mod(np.array([7, -7, 9]), 3),
                    tf.reduce_mean(np.array([1, 2, 4])), tf.cast(_A, tf.int64)],
    "matmul": lambda: [tf.matmul(_A, _B), tf.matmul(_A, _A, transpose_b=True),
                       tf.matmul(_B, _B, transpose_a=True)],
    "nn": lambda: [tf.nn.bias_add(_A, _B[:, 0]), tf.nn.relu(_A), tf.nn.relu6(_A * 9),
                   tf.sigmoid(_A), tf.nn.softmax(_A), tf.nn.log_softmax(_A),
                   tf.nn.elu(_A), tf.nn.softplus(_A)],
    "reduce": lambda: [tf.reduce_sum(_A), tf.reduce_sum(_A, 1), tf.reduce_mean(_A, 0),
                       tf.reduce_max(_A, [0, 1], keepdims=True), tf.reduce_min(_A, -1),
                       tf.reduce_prod(_P, 1)],
    "array": lambda: [tf.reshape(_A, [-1]), tf.reshape(_A, [2, 10]), tf.transpose(_A),
                      tf.expand_dims(_A, 1), tf.shape(_A), tf.size(_A), tf.identity(_A),
                      tf.tile(_B, [2, 1]), tf.zeros_like(_A), tf.fill([2, 3], 1.5),
                      tf.concat([_A, _A], 0), tf.stack([_A, _A], 1),
                      tf.broadcast_to(_B[:, 0], [4, 5])],
    "xent": lambda: list(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=np.array([0, 2, 1, 2]), logits=_A[:, :3])) + [
        tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.nn.softmax(_B[:4]), logits=_A[:, :3])],
}


@pytest.mark.parametrize("family", sorted(OPS))
def test_lowerings_match_numpy_kernels(family, built):
    want = _run(OPS[family], None)
    got = _run(OPS[family], XLA, soft=True)
    assert built, "nothing ran on the XLA device"
    for w, g in zip(want, got):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)


def test_cpu_xla_cpu_split_matches_all_cpu(built):
    x = _RNG.standard_normal((6, 5)).astype(np.float32)

    def build(devices):
        def f(x):
            with tf.device(devices[0]):
                h = tf.matmul(x, _B) + 1.0
            with tf.device(devices[1]):
                h = tf.nn.relu(h) * 2.0
                h = tf.reshape(h, tf.stack([tf.shape(h)[0] * 3, -1]))
            with tf.device(devices[2]):
                return [tf.reduce_sum(h, 1), h]
        return f

    want = _run(build(["/cpu:0"] * 3), None, {"x": x})
    got = _run(build(["/cpu:0", XLA, "/cpu:0"]), None, {"x": x}, soft=True)
    assert len(built) == 1
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_op_without_lowering_needs_soft_placement():
    def f():
        return tf.random.shuffle(tf.constant([1, 2, 3]))

    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot assign a device"):
        _run(f, XLA)
    assert sorted(_run(f, XLA, soft=True)) == [1, 2, 3]


def _mlp_losses(device, steps=4):
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((32, 8)).astype(np.float32)
    ys = rng.integers(0, 3, 32).astype(np.int64)
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, 8])
        y = tf.placeholder(tf.int64, [None])
        w1 = tf.Variable(rng.standard_normal((8, 16)).astype(np.float32) * 0.3)
        b1 = tf.Variable(np.zeros(16, np.float32))
        w2 = tf.Variable(rng.standard_normal((16, 3)).astype(np.float32) * 0.3)
        with tf.device(device):
            h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w1), b1))
            logits = tf.matmul(h, w2)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=y, logits=logits))
            train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        config = tf.ConfigProto(allow_soft_placement=True)
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            out = [sess.run([loss, train], {x: xs, y: ys})[0] for _ in range(steps)]
            return out, sess.run(w1)


def test_mlp_training_step_on_xla_matches_cpu(built):
    want, w_want = _mlp_losses("/cpu:0")
    got, w_got = _mlp_losses(XLA)
    assert built
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(w_got, w_want, rtol=1e-5, atol=1e-6)
    assert got[-1] < got[0]


def test_compiles_once_per_input_signature(built):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        with tf.device(XLA):
            y = tf.reduce_sum(tf.nn.relu(x) * 2.0, 1)
        with tf.Session() as sess:
            for n in (2, 2, 5, 2, 5):
                np.testing.assert_allclose(sess.run(y, {x: np.ones((n, 3), np.float32)}),
                                           np.full(n, 6.0))
    assert [ex.compiles for ex in built] == [2]


def test_chain_split_cpu_xla_cpu_xla_does_not_deadlock(built):
    """Cumsum has no lowering: soft placement sends it to the CPU between two XLA parts, so
    the XLA partition must send `h` before it can receive `c` (one executable would wait)."""
    x = _RNG.standard_normal((3, 4)).astype(np.float32)

    def build(device):
        def f(x):
            with tf.device(device):
                h = tf.nn.relu(x) * 2.0
                c = tf.cumsum(h, axis=1)
                return h + c
        return f

    want = _run(build("/cpu:0"), None, {"x": x})
    g = tf.Graph()
    with g.as_default():
        ph = tf.placeholder(tf.float32, [3, 4])
        out = build(XLA)(ph)
        config = tf.ConfigProto(allow_soft_placement=True, operation_timeout_in_ms=20000)
        with tf.Session(config=config) as sess:
            got = sess.run(out, {ph: x})
    # three stages: the axis constant Cumsum needs, then h (needs x), then h + c (needs c)
    assert len(built) == 1 and built[0].compiles == 3
    np.testing.assert_allclose(got, want, rtol=1e-6)


# -- variables and training state on the device ----------------------------------------------
def _train_on(device, make_opt, steps=3):
    """Losses, final weights and global step of a small MLP whose variables, gradients and
    updates are all under `device`."""
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((16, 6)).astype(np.float32)
    ys = rng.integers(0, 3, 16).astype(np.int64)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 6])
        y = tf.placeholder(tf.int64, [None])
        with tf.device(device):
            w1 = tf.Variable(rng.standard_normal((6, 8)).astype(np.float32) * 0.3)
            b1 = tf.Variable(np.zeros(8, np.float32))
            w2 = tf.Variable(rng.standard_normal((8, 3)).astype(np.float32) * 0.3)
            step = tf.train.get_or_create_global_step()
            h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w1), b1))
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=y, logits=tf.matmul(h, w2)))
            train = make_opt().minimize(loss, global_step=step)
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {x: xs, y: ys})[0] for _ in range(steps)]
            return losses, sess.run([w1, b1, w2, step])


@pytest.mark.parametrize("make_opt", [
    lambda: tf.train.AdamOptimizer(0.05),
    lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    lambda: tf.train.RMSPropOptimizer(0.05, momentum=0.5, centered=True),
], ids=["adam", "nesterov", "centered_rmsprop"])
def test_training_step_with_variables_on_xla_is_one_executable(make_opt, built):
    want, w_want = _train_on("/cpu:0", make_opt)
    got, w_got = _train_on(XLA, make_opt)
    train = [ex for ex in built if any(it.op.startswith("Apply") for it in ex._body)]
    assert len(train) == 1 and train[0].compiles == 1  # forward, backward and updates
    # float32 sums in another order: a few ulps per step, over three steps
    np.testing.assert_allclose(got, want, rtol=1e-5)
    for w, g in zip(w_want, w_got):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert w_got[-1] == 3 and got[-1] < got[0]


def test_uninitialized_variable_on_xla_names_it():
    g = tf.Graph()
    with g.as_default(), tf.device(XLA):
        v = tf.Variable(np.ones(3, np.float32), name="weights")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="weights"):
                sess.run(v * 2.0)
            assert not sess.run(tf.is_variable_initialized(v))
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(v * 2.0), [2, 2, 2])


def test_constant_initializers_are_set_on_the_host_and_reset_after_donation(built):
    """Zeros and constants folded while tracing leave the executable (set on the host each
    run, a fresh buffer: the update step donates it); running the initializer again after
    in-place updates gives the constants back, and later steps compile nothing new."""
    g = tf.Graph()
    with g.as_default():
        with tf.device(XLA):
            v = tf.Variable(tf.zeros([3]))
            c = tf.Variable(np.array([1.0, 2.0, 3.0], np.float32))
            r = tf.Variable(tf.random_uniform([2], seed=1))
            inc = tf.group(v.assign_add(c), c.assign_add(c))
        with tf.Session() as sess:
            init = tf.global_variables_initializer()
            for _ in range(2):
                sess.run(init)
                np.testing.assert_array_equal(sess.run([v, c]), [[0, 0, 0], [1, 2, 3]])
                sess.run(inc)
                sess.run(inc)
                np.testing.assert_array_equal(sess.run([v, c]), [[3, 6, 9], [4, 8, 12]])
            assert 0 <= sess.run(r).min() and sess.run(r).max() < 1
    stages = [exe for ex in built for exe in ex._cache.values()]
    assert any(len(exe.const_state) == 2 for exe in stages)   # v and c, not r
    assert sum(ex.compiles for ex in built) == len(stages)     # one per stage, none again


def test_sparse_updates_on_xla_match_cpu_with_duplicate_indices(built):
    def build():
        v = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3) / 7.0)
        acc = tf.Variable(np.full((4, 3), 0.1, np.float32))
        idx = tf.constant([2, 0, 2])
        grad = tf.constant(np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3))
        ada = training_ops.sparse_apply_adagrad(v, acc, 0.5, grad, idx)
        with tf.control_dependencies([ada]):
            sub = tf.scatter_sub(v, tf.constant([1, 1]), grad[:2])
        return [v, acc], sub

    out = {}
    for device in ("/cpu:0", XLA):
        g = tf.Graph()
        with g.as_default():
            with tf.device(device):
                (v, acc), sub = build()
            with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(sub)
                out[device] = sess.run([v, acc])
    assert any("SparseApplyAdagrad" in {it.op for it in ex._body} for ex in built)
    for w, g in zip(out["/cpu:0"], out[XLA]):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_saver_and_summaries_with_variables_on_xla(tmp_path):
    """A checkpoint saved from XLA_CPU variables restores on the CPU and back; a summary of a
    device value is written by the host."""
    def graph(device):
        g = tf.Graph()
        with g.as_default(), tf.device(device):
            v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="v")
            add = tf.assign_add(v, tf.ones([2, 3]))
            summ = tf.summary.scalar("total", tf.reduce_sum(v))
            saver = tf.train.Saver()
        return g, v, add, summ, saver

    g, v, add, summ, saver = graph(XLA)
    with g.as_default(), tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        sess.run(v.initializer)
        sess.run(add)
        path = saver.save(sess, str(tmp_path / "model"))
        writer = tf.summary.FileWriter(str(tmp_path / "logs"))
        writer.add_summary(sess.run(summ), 1)
        writer.close()
    g, v, add, _, saver = graph("/cpu:0")
    with g.as_default(), tf.Session() as sess:
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(v), np.arange(6).reshape(2, 3) + 1)
        sess.run(add)
        path = saver.save(sess, str(tmp_path / "model2"))
    g, v, add, _, saver = graph(XLA)
    with g.as_default(), tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(v), np.arange(6).reshape(2, 3) + 2)
    events = list(tf.train.summary_iterator(str(next((tmp_path / "logs").iterdir()))))
    values = [val.simple_value for e in events for val in e.summary.value if val.tag == "total"]
    assert values == [21.0]


@pytest.mark.slow  # two sessions: two compilations of four generators (~5 s here)
def test_seeded_random_initializers_on_xla():
    """Counter-based draws: a new session replays a seeded node, each run draws afresh, and
    the samples have the op's distribution (jax's generator: not the CPU kernel's numbers)."""
    def draws():
        g = tf.Graph()
        with g.as_default(), tf.device(XLA):
            tf.set_random_seed(7)
            n = tf.random_normal([20000])
            t = tf.truncated_normal([20000], stddev=2.0)
            u = tf.random_uniform([20000], 1.0, 3.0)
            i = tf.random_uniform([20000], 0, 5, dtype=tf.int64)
            with tf.Session() as sess:
                return sess.run([n, t, u, i]), sess.run(n)

    (n, t, u, i), n_again = draws()
    (n2, _, _, _), _ = draws()
    np.testing.assert_array_equal(n, n2)
    assert not np.array_equal(n, n_again)
    # 20000 samples: the mean's standard error is 1/141 of the deviation; 5 of them as bound
    assert abs(n.mean()) < 0.036 and abs(n.std() - 1) < 0.03
    assert np.abs(t).max() < 4.0 and abs(t.std() - 2 * 0.8796) < 0.06  # N(0,1) cut at ±2
    assert u.min() >= 1.0 and u.max() < 3.0 and abs(u.mean() - 2) < 0.03
    assert i.dtype == np.int64 and set(np.unique(i)) == {0, 1, 2, 3, 4}


def test_loops_and_conds_stay_on_cpu_around_an_xla_training_step(built):
    """A tf.cond and a tf.while_loop under the XLA device scope: the placer keeps the cond's
    branches on the CPU (conds are not compiled), and the loop with them (its gradient's
    Exit is colocated with the cond gradient's Switch); the rest (variables, gradients
    outside the loop, the update) runs on XLA_CPU."""
    xs = np.arange(12, dtype=np.float32).reshape(3, 4) / 10

    def losses(device):
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [3, 4])
            p = tf.placeholder(tf.bool, [])
            with tf.device(device):
                w = tf.Variable(np.full((4, 4), 0.1, np.float32))
                xw = tf.matmul(x, w)  # NOTE: a branch reading `w` would pull it to the CPU
                h = tf.cond(p, lambda: tf.nn.relu(xw) * 2.0, lambda: xw - 1.0)
                _, acc = tf.while_loop(lambda i, a: i < 3,
                                       lambda i, a: (i + 1, tf.tanh(tf.matmul(a, w))),
                                       [tf.constant(0), h])
                loss = tf.reduce_sum(acc * acc)
                train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
            with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
                sess.run(tf.global_variables_initializer())
                out = [sess.run([loss, train], {x: xs, p: b})[0] for b in (True, False, True)]
                return out, sess.run(w)

    want, w_want = losses("/cpu:0")
    got, w_got = losses(XLA)
    assert any("ApplyGradientDescent" in {it.op for it in ex._body} for ex in built)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(w_got, w_want, rtol=1e-5, atol=1e-7)


def test_a_cuda_gpu_would_list_gpu_and_xla_gpu(monkeypatch):
    """The GPU code path without a GPU: jax reporting one CUDA device gives GPU:0 and
    XLA_GPU:0 (both compiled: their kernels are the lowerings)."""
    import importlib.util

    from tensorweave.runtime.kernels.xla import backend

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "jax_cuda12_plugin" else
                        real(name, *a))
    monkeypatch.setattr(backend, "gpu_count", lambda: 1)
    names = backend.device_names("localhost", 0)
    assert [n.rsplit("/", 1)[1] for n in names] == ["device:XLA_CPU:0", "device:GPU:0",
                                                    "device:XLA_GPU:0"]
    assert all(backend.is_compiled_device(n) for n in names)
    assert not backend.is_compiled_device("/job:localhost/replica:0/task:0/device:CPU:0")


_CACHED_RUN = """
import numpy as np, jax.monitoring, tensorweave as tf
hits = []
jax.monitoring.register_event_listener(lambda name, **kw: hits.append(name))
x = tf.placeholder(tf.float32, [4])
with tf.device("/device:XLA_CPU:0"):
    y = tf.reduce_sum(tf.tanh(x) * 3.0)
with tf.Session() as sess:
    print(sess.run(y, {x: np.arange(4, dtype=np.float32)}),
          "/jax/compilation_cache/cache_hits" in hits)
"""


@pytest.mark.slow
@pytest.mark.multiprocess
def test_persistent_compilation_cache_is_used_when_its_directory_is_set(tmp_path):
    """TENSORWEAVE_XLA_CACHE_DIR: the second process loads the executable the first wrote."""
    import os
    import subprocess
    import sys

    from tensorweave.runtime.kernels.xla.backend import CACHE_DIR_ENV

    env = dict(os.environ, **{CACHE_DIR_ENV: str(tmp_path / "xla")})
    runs = [subprocess.run([sys.executable, "-c", _CACHED_RUN], env=env, capture_output=True,
                           text=True, timeout=120) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr[-500:]
    (first, hit1), (second, hit2) = (r.stdout.split() for r in runs)
    assert first == second and np.isclose(float(first), 3 * np.tanh([0, 1, 2, 3]).sum())
    assert (hit1, hit2) == ("False", "True")
    assert os.listdir(tmp_path / "xla")
