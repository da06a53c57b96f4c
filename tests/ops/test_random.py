"""Random ops: TF1's seed rules, repeatability, distributions, wrappers and dropout."""

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.runtime.kernels.cpu.random  # noqa: F401  (until runtime.kernels.cpu imports it)
from tensorweave.ops import random_ops as rnd
from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import OPS
from tensorweave.runtime.kernels.registry import has_kernel


def requires(*names):
    """Skips unless each op type (`"Mul"`, with a CPU kernel) or public function
    (`"tf.zeros"`) exists yet: other op families are written in parallel."""
    missing = [n for n in names if not _exists(n)]
    return pytest.mark.skipif(bool(missing), reason=f"not registered yet: {missing}")


def _exists(name: str) -> bool:
    if not name.startswith("tf."):
        return name in OPS and has_kernel(name)
    obj = tf
    for part in name.split(".")[1:]:
        obj = getattr(obj, part, None)
    return obj is not None


def _run(fetches, n_sessions=1, runs=1):
    """[[value per run] per session] of `fetches` in fresh sessions of the default graph."""
    out = []
    for _ in range(n_sessions):
        with tf.Session() as sess:
            out.append([sess.run(fetches) for _ in range(runs)])
    return out


# -- seeds -----------------------------------------------------------------------------------
def test_get_seed_rules():
    assert rnd.get_seed(None) == (None, None)
    assert rnd.get_seed(7) == (rnd.DEFAULT_GRAPH_SEED, 7)
    assert rnd.get_seed(2**31 + 5) == (rnd.DEFAULT_GRAPH_SEED, 6)  # truncated mod 2**31 - 1
    g = tf.get_default_graph()
    rnd.set_random_seed(42)
    assert g.seed == 42
    tf.constant(1.0)
    tf.constant(2.0)
    assert rnd.get_seed(None) == (42, 2)  # the op count, as TF's graph._last_id
    assert rnd.get_seed(9) == (42, 9)
    rnd.set_random_seed(0)
    assert rnd.get_seed(0) == (0, 2**31 - 1)  # (0, 0) would mean "unseeded"


def test_op_attrs_carry_seeds():
    rnd.set_random_seed(3)
    x = rnd.random_normal([2], seed=11)
    op = tf.get_default_graph().get_operation_by_name("random_normal/RandomStandardNormal")
    assert x.op.name == "random_normal"
    assert (op.get_attr("seed"), op.get_attr("seed2")) == (3, 11)


def _seeded_graph_values(graph_seed, op_seed=None):
    g = tf.Graph()
    with g.as_default():
        rnd.set_random_seed(graph_seed)
        tf.constant(0.0)  # an unrelated op before the random ones
        a = rnd.random_uniform([3, 2], seed=op_seed)
        b = rnd.random_normal([4], seed=op_seed)
        with tf.Session(graph=g) as sess:
            return [sess.run([a, b]) for _ in range(2)]


def test_same_graph_seed_same_values_across_graphs_and_sessions():
    first = _seeded_graph_values(5)
    second = _seeded_graph_values(5)
    for (a1, b1), (a2, b2) in zip(first, second):
        np.testing.assert_array_equal(a1, a2)
        np.testing.assert_array_equal(b1, b2)
    # a session continues its sequence: the second run differs from the first
    assert not np.array_equal(first[0][0], first[1][0])
    other = _seeded_graph_values(6)
    assert not np.array_equal(first[0][0], other[0][0])


def test_op_seed_without_graph_seed_repeats():
    a = rnd.random_uniform([5], seed=1)
    (s1, s2) = _run(a, n_sessions=2, runs=2)
    np.testing.assert_array_equal(s1[0], s2[0])
    np.testing.assert_array_equal(s1[1], s2[1])
    assert not np.array_equal(s1[0], s1[1])


def test_unseeded_ops_differ_between_sessions():
    a = rnd.random_uniform([20])
    (s1,), (s2,) = _run(a, n_sessions=2)
    assert not np.array_equal(s1, s2)


def test_two_ops_with_same_seed_pair_give_same_stream():
    a = apply_op("RandomUniform", [6], dtype=tf.float32, seed=4, seed2=9)
    b = apply_op("RandomUniform", [6], dtype=tf.float32, seed=4, seed2=9)
    c = apply_op("RandomUniform", [6], dtype=tf.float32, seed=4, seed2=10)
    with tf.Session() as sess:
        va, vb, vc = sess.run([a, b, c])
    np.testing.assert_array_equal(va, vb)
    assert not np.array_equal(va, vc)


def test_sequence_continues_across_run_signatures():
    a = apply_op("RandomUniform", [4], dtype=tf.float32, seed=1, seed2=1)
    b = tf.constant(1.0)
    with tf.Session() as sess:
        first = sess.run(a)
        second, _ = sess.run([a, b])
    with tf.Session() as sess:
        replay = sess.run(a)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(first, replay)


# -- distributions (the raw ops) -------------------------------------------------------------
def _sample(op_type, shape=(200, 100), **attrs):
    t = apply_op(op_type, list(shape), seed=1, seed2=2, **attrs)
    with tf.Session() as sess:
        return t, sess.run(t)


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_standard_normal(dtype):
    t, v = _sample("RandomStandardNormal", dtype=dtype)
    assert v.dtype == dtype.np_dtype and v.shape == (200, 100)
    assert t.shape.as_list() == [200, 100]
    assert abs(float(v.astype(np.float64).mean())) < 0.03
    assert abs(float(v.astype(np.float64).std()) - 1.0) < 0.03


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_uniform_in_unit_interval(dtype):
    _, v = _sample("RandomUniform", dtype=dtype)
    assert v.dtype == dtype.np_dtype
    assert v.min() >= 0 and v.max() < 1
    assert abs(float(v.astype(np.float64).mean()) - 0.5) < 0.01


def test_truncated_normal_bound_and_std():
    _, v = _sample("TruncatedNormal", dtype=tf.float32)
    assert np.abs(v).max() < 2.0
    assert abs(float(v.std()) - 0.87962566) < 0.02


def test_uniform_int_range_and_coverage():
    t = apply_op("RandomUniformInt", [5000], np.int64(-3), np.int64(4), seed=1, seed2=1)
    with tf.Session() as sess:
        v = sess.run(t)
    assert v.dtype == np.int64
    assert set(np.unique(v).tolist()) == set(range(-3, 4))


def test_uniform_int_needs_minval_below_maxval():
    t = apply_op("RandomUniformInt", [3], 5, 5)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="Need minval < maxval: 5 >= 5"):
        sess.run(t)


def test_uniform_int_rejects_non_scalar_bounds():
    with pytest.raises(ValueError, match="minval must be a scalar"):
        apply_op("RandomUniformInt", [3], [1, 2], 5)


def test_multinomial_frequencies_follow_softmax():
    half = np.log(0.5)
    logits = np.array([np.log([0.1, 0.2, 0.7]), [half, -np.inf, half]])
    t = rnd.multinomial(logits.astype(np.float32), 20000, seed=3)
    assert t.shape.as_list() == [2, 20000] and t.dtype == tf.int64
    with tf.Session() as sess:
        v = sess.run(t)
    freq = np.stack([np.bincount(row, minlength=3) / row.size for row in v])
    np.testing.assert_allclose(freq[0], [0.1, 0.2, 0.7], atol=0.015)
    np.testing.assert_allclose(freq[1], [0.5, 0.0, 0.5], atol=0.015)
    assert (v[1] != 1).all()  # zero probability is never drawn


def test_categorical_dtype():
    t = rnd.categorical(np.zeros((2, 3), np.float32), 4, dtype=tf.int32, seed=1)
    assert t.dtype == tf.int32 and t.op.name == "categorical/Multinomial"


def test_shuffle_is_permutation_of_rows():
    x = np.arange(30, dtype=np.int32).reshape(10, 3)
    t = rnd.random_shuffle(x, seed=2)
    with tf.Session() as sess:
        v = sess.run(t)
    assert sorted(v[:, 0].tolist()) == list(range(0, 30, 3))
    np.testing.assert_array_equal(v[:, 1], v[:, 0] + 1)
    assert not np.array_equal(v, x)


def test_gamma_and_poisson_means():
    g = apply_op("RandomGamma", [20000], np.array([0.5, 3.0], np.float64), seed=1, seed2=1)
    p = rnd.random_poisson([2.0, 30.0], [20000], seed=1)
    assert g.shape.as_list() == [20000, 2] and p.shape.as_list() == [20000, 2]
    with tf.Session() as sess:
        vg, vp = sess.run([g, p])
    np.testing.assert_allclose(vg.mean(axis=0), [0.5, 3.0], rtol=0.05)
    assert vp.dtype == np.float32
    np.testing.assert_allclose(vp.mean(axis=0), [2.0, 30.0], rtol=0.03)


def test_static_shape_from_shape_tensor():
    ph = tf.placeholder(tf.int32, [3])
    assert apply_op("RandomUniform", ph, dtype=tf.float32).shape.as_list() == [None] * 3
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        apply_op("RandomUniform", [[2, 3]], dtype=tf.float32)


# -- wrappers --------------------------------------------------------------------------------
@requires("Mul", "AddV2", "Sub")
def test_random_uniform_wrapper_names_and_range():
    t = rnd.random_uniform([300, 40], minval=-2.0, maxval=5.0, seed=1)
    names = [op.name for op in tf.get_default_graph().get_operations()]
    assert names == ["random_uniform/shape", "random_uniform/min", "random_uniform/max",
                     "random_uniform/RandomUniform", "random_uniform/sub", "random_uniform/mul",
                     "random_uniform"]
    assert t.shape.as_list() == [300, 40]
    with tf.Session() as sess:
        v = sess.run(t)
    assert v.min() >= -2.0 and v.max() < 5.0
    assert abs(float(v.mean()) - 1.5) < 0.1


def test_random_uniform_int_wrapper():
    t = rnd.random_uniform([100], maxval=3, dtype=tf.int32, seed=1)
    assert t.op.type == "RandomUniformInt" and t.op.name == "random_uniform"
    with tf.Session() as sess:
        assert set(sess.run(t).tolist()) == {0, 1, 2}
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        rnd.random_uniform([2], dtype=tf.int64)
    with pytest.raises(ValueError, match="Invalid dtype"):
        rnd.random_uniform([2], dtype=tf.int8, maxval=3)


@requires("Mul", "AddV2")
def test_random_normal_and_truncated_wrappers():
    n = rnd.random_normal([400, 50], mean=3.0, stddev=0.5, seed=1, name="noise")
    t = rnd.truncated_normal([400, 50], mean=-1.0, stddev=2.0, seed=1)
    assert n.op.name == "noise" and t.op.name == "truncated_normal"
    assert n.dtype == tf.float32
    with tf.Session() as sess:
        vn, vt = sess.run([n, t])
    assert abs(float(vn.mean()) - 3.0) < 0.02 and abs(float(vn.std()) - 0.5) < 0.02
    assert np.abs(vt + 1.0).max() < 4.0
    assert abs(float(vt.std()) - 2 * 0.87962566) < 0.05


@requires("Mul", "AddV2")
def test_wrapper_in_name_scope_and_repeated():
    with tf.name_scope("outer"):
        a = rnd.random_normal([2])
        b = rnd.random_normal([2])
    assert a.op.name == "outer/random_normal"
    assert b.op.name == "outer/random_normal_1"
    assert b.op.inputs[0].op.name == "outer/random_normal_1/mul"


# -- dropout ---------------------------------------------------------------------------------
@requires("Mul", "AddV2", "Floor", "RealDiv", "Shape", "tf.floor", "tf.div", "tf.shape")
def test_dropout_keeps_and_scales():
    x = np.ones((200, 100), np.float32) * 3.0
    y = rnd.dropout(x, keep_prob=0.25, seed=1)
    assert y.shape.as_list() == [200, 100]
    with tf.Session() as sess:
        v = sess.run(y)
    assert set(np.unique(v).tolist()) <= {0.0, 12.0}
    assert abs(float((v > 0).mean()) - 0.25) < 0.02


@requires("Mul", "AddV2", "Floor", "RealDiv", "tf.floor", "tf.div")
def test_dropout_noise_shape_and_rate():
    x = np.ones((50, 4), np.float32)
    y = rnd.dropout(x, rate=0.5, noise_shape=[50, 1], seed=1)
    with tf.Session() as sess:
        v = sess.run(y)
    assert all(len(set(row.tolist())) == 1 for row in v)  # whole rows kept or dropped
    assert set(np.unique(v).tolist()) == {0.0, 2.0}


def test_dropout_argument_checks():
    x = tf.constant(np.ones((2, 2), np.float32))
    assert rnd.dropout(x, keep_prob=1.0) is x
    with pytest.raises(ValueError, match=r"range \(0, 1\]"):
        rnd.dropout(x, keep_prob=1.5)
    with pytest.raises(ValueError, match="Cannot specify both"):
        rnd.dropout(x, keep_prob=0.5, rate=0.5)
    with pytest.raises(ValueError, match="floating point tensor"):
        rnd.dropout(tf.constant([1, 2]), keep_prob=0.5)


@requires("tf.shape", "tf.slice", "tf.Assert", "tf.reduce_all", "FloorMod", "Slice", "All")
def test_random_crop():
    x = np.arange(60, dtype=np.int32).reshape(6, 10)
    c = rnd.random_crop(x, [2, 3], seed=1)
    with tf.Session() as sess:
        v = sess.run(c)
    assert v.shape == (2, 3)
    r, col = divmod(int(v[0, 0]), 10)
    np.testing.assert_array_equal(v, x[r:r + 2, col:col + 3])
