"""Pool mode (`cpu/parallel.py`): convolutional steps split their GEMMs and big loops over the
kernel threads, with numpy's BLAS held to one thread.

A split kernel matches numpy within the bound its operation allows (a GEMM of depth k: about
k*eps relative to |a|.|b|, tests/numerics.py: BLAS on another thread count or CPU core type
may sum in another order), and repeats itself bit for bit; where the claim is "the same
single-threaded calls", the reference runs under the same BLAS settings. The mode must set and
restore BLAS's thread count, and the executor must pick the mode from its plan.
"""

import numpy as np
import pytest
import threadpoolctl

import tensorweave as tf
from tensorweave.ops.nn_geometry import window_2d
from tensorweave.runtime.kernels.cpu import conv_native, native, parallel
from tests.numerics import assert_gemm_close

needs_native = pytest.mark.skipif(not native.BUILT, reason="compiled helper not built")
RNG = np.random.default_rng(5)


@pytest.fixture(autouse=True)
def two_threads():
    """Two kernel threads (even on a one-CPU machine); defaults and mode restored after."""
    old_mode = parallel._pool_mode
    parallel.set_num_threads(2)
    yield
    parallel.set_pool_mode(old_mode)
    parallel.set_num_threads(0)


def blas_threads() -> list[int]:
    """Thread counts of the BLAS libraries the kernels control (numpy's, loaded when they
    first entered pool mode; a library loaded later, e.g. scipy's, is not theirs)."""
    ours = {c.filepath for c in parallel._blas}
    return [i["num_threads"] for i in threadpoolctl.threadpool_info()
            if i["user_api"] == "blas" and i["filepath"] in ours]


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def in_pool_mode(fn, *args):
    parallel.set_pool_mode(True)
    try:
        return fn(*args)
    finally:
        parallel.set_pool_mode(False)


@pytest.fixture
def splits(monkeypatch):
    """Records the (n, block) of every `for_blocks` call (they still run)."""
    calls = []
    real = parallel.for_blocks

    def recording(n, fn, block=parallel.BLOCK, min_parallel=parallel.MIN_PARALLEL):
        calls.append((n, block))
        return real(n, fn, block, min_parallel)

    monkeypatch.setattr(parallel, "for_blocks", recording)
    return calls


# -- BLAS's threads -------------------------------------------------------------------------
def test_pool_mode_holds_blas_to_one_thread_and_gives_it_back():
    parallel.set_pool_mode(True)
    parallel.set_pool_mode(False)
    own = blas_threads()
    assert own and own == parallel._blas_own
    parallel.set_pool_mode(True)
    assert parallel.pool_mode()
    assert blas_threads() == [1] * len(own)
    parallel.set_num_threads(1)            # one kernel thread: nothing split, BLAS on one too
    assert not parallel.pool_mode() and blas_threads() == [1] * len(own)
    parallel.set_num_threads(2)
    assert blas_threads() == [1] * len(own)
    parallel.set_pool_mode(False)
    assert blas_threads() == own


# -- matmul ---------------------------------------------------------------------------------
MATMULS = [  # (a, b): rows split, columns split (few rows), transposed views, float64, skinny
    (rand(1024, 64), rand(64, 1024)),
    (rand(64, 3136), rand(3136, 128)),
    (rand(3136, 64).T, rand(128, 3136).T),
    (rand(700, 300, dtype=np.float64), rand(300, 301, dtype=np.float64)),
    (rand(1024, 1024), rand(1024, 10)),
]


@pytest.mark.parametrize("a, b", MATMULS)
def test_split_matmul_equals_numpy_and_repeats_exactly(a, b, splits):
    """Each part is one single-threaded BLAS call over the whole inner dimension; numpy's
    reference runs BLAS on its own threads, which may block and sum k = 3136 products in
    another order: the two agree within the depth-k bound, not to 1e-6 (on a Haswell core
    type they differ by 4e-4 relative where the result cancels). Repeats are exact."""
    got = in_pool_mode(parallel.matmul, a, b)
    assert splits, "the GEMM was not split"
    assert_gemm_close(got, a, b)
    np.testing.assert_array_equal(in_pool_mode(parallel.matmul, a, b), got)


def test_small_or_mixed_or_outside_pool_mode_is_one_numpy_call(splits):
    """One numpy call: bit for bit numpy's under the same BLAS settings (in pool mode, BLAS
    on one thread; outside it, on its own threads)."""
    for a, b in [(rand(128, 64), rand(64, 256)), (rand(20, 400), rand(400, 800))]:  # 2nd: LSTM
        np.testing.assert_array_equal(in_pool_mode(parallel.matmul, a, b),
                                      in_pool_mode(np.matmul, a, b))
    a64 = MATMULS[0][1].astype(np.float64)
    mixed = in_pool_mode(parallel.matmul, MATMULS[0][0], a64)
    np.testing.assert_array_equal(mixed, in_pool_mode(np.matmul, MATMULS[0][0], a64))
    parallel.set_pool_mode(False)
    np.testing.assert_array_equal(parallel.matmul(*MATMULS[0]), np.matmul(*MATMULS[0]))
    assert splits == []


# -- convolutions and loops over images ------------------------------------------------------
def _window(x_shape, k=3, padding="SAME", strides=(1, 1)):
    return window_2d(x_shape[1:3], (k, k), {"strides": [1, *strides, 1], "padding": padding,
                                             "dilations": [1, 1, 1, 1]})


@needs_native
def test_convolution_in_pool_mode_equals_one_thread(splits, monkeypatch):
    """The same single-threaded GEMMs per image group, whichever thread runs them (BLAS on
    several threads may round differently, so both runs are in pool mode)."""
    x, w = rand(64, 14, 14, 32), rand(3, 3, 32, 64)
    win = _window(x.shape)
    dy, bias = rand(64, 14, 14, 64), rand(64)

    def convs():
        return (conv_native.conv2d(x, w, win, bias, "Relu"),
                conv_native.backprop_filter(x, dy, win),
                conv_native.backprop_input(dy, w, x.shape, win))

    parallel.set_pool_mode(True)
    pooled = convs()
    assert len(splits) == 3
    monkeypatch.setattr(parallel, "pool_mode", lambda: False)
    serial = convs()
    assert len(splits) == 3
    for got, want in zip(pooled, serial):
        np.testing.assert_array_equal(got, want)


@needs_native
def test_image_loops_in_pool_mode_equal_one_call(splits):
    x = rand(64, 28, 28, 32)
    x[::3, ::2, 1::2] = x[::3, 1::2, 1::2]          # ties between window members
    win = _window(x.shape, k=2, padding="VALID", strides=(2, 2))
    y = native.max_pool(x, win)
    dy, relu = rand(*y.shape), rand(*x.shape)
    g = rand(*x.shape)
    xc, wc = rand(64, 28, 28, 1), rand(3, 3, 1, 32)
    winc = _window(xc.shape)
    dyc = rand(64, 28, 28, 32)
    serial = (y, native.max_pool_grad(x, y, dy, win, relu_of=relu), native.relu_grad(g, x),
              native.conv_direct(xc, wc, winc, rand(32) * 0, "Relu"))
    dw_serial = native.conv_filter_direct(xc, dyc, winc)
    assert splits == []

    def pooled():
        return (native.max_pool(x, win), native.max_pool_grad(x, y, dy, win, relu_of=relu),
                native.relu_grad(g, x), native.conv_direct(xc, wc, winc, rand(32) * 0, "Relu"))

    for got, want in zip(in_pool_mode(pooled), serial):
        np.testing.assert_array_equal(got, want)
    dw = in_pool_mode(native.conv_filter_direct, xc, dyc, winc)
    np.testing.assert_allclose(dw, dw_serial, rtol=1e-5, atol=1e-3)
    assert len(splits) == 5


# -- the executor picks the mode -------------------------------------------------------------
def _run(build, shape):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, shape)
        out = build(x)
        with tf.Session() as s:
            return s.run(out, {x: np.ones(shape, np.float32)})


def test_executor_uses_pool_mode_for_steps_with_convolutions_or_gemms():
    """BLAS's spinning threads never run beside a step's kernels: pool mode from the first
    step of a plan with a convolution or a GEMM; plans with neither leave the mode."""
    parallel.set_pool_mode(False)
    _run(lambda x: tf.nn.conv2d(x, tf.ones([3, 3, 3, 4]), [1, 1, 1, 1], "SAME"), [2, 8, 8, 3])
    assert parallel.pool_mode()
    parallel.set_pool_mode(False)
    _run(lambda x: tf.reduce_sum(x * 2.0), [4, 5])      # no GEMM: the mode stays
    assert not parallel.pool_mode()
    _run(lambda x: tf.matmul(x, tf.ones([5, 6])), [4, 5])
    assert parallel.pool_mode()


def test_intra_op_parallelism_threads_is_the_sessions_not_the_processs():
    """A session's setting holds in its steps and leaves the process default alone
    (tests/runtime/test_session_threads.py counts the threads)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 8, 8, 3])
        y = tf.nn.conv2d(x, tf.ones([3, 3, 3, 4]), [1, 1, 1, 1], "SAME")
        def threads(t):
            return np.float32(parallel.num_threads() + 10 * parallel.pool_mode())

        inside = tf.py_func(threads, [tf.reduce_sum(y)], tf.float32)
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as s:
            assert s.run(inside, {x: np.ones([2, 8, 8, 3], np.float32)}) == 1
    assert parallel.num_threads() == 2 and parallel.pool_mode()


def test_a_function_run_inside_a_step_leaves_the_steps_mode():
    """A tf.data map function runs in its own executor, inside the step's IteratorGetNext."""
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.from_tensors(tf.ones([2, 8, 8, 3])).repeat().map(lambda t: t * 2.0)
        x = tf.data.make_one_shot_iterator(ds).get_next()
        y = tf.nn.conv2d(x, tf.ones([3, 3, 3, 4]), [1, 1, 1, 1], "SAME")
        with tf.Session() as s:
            parallel.set_pool_mode(False)
            out = s.run(y)
            assert parallel.pool_mode()
    assert out[0, 4, 4, 0] == 3 * 3 * 3 * 2
