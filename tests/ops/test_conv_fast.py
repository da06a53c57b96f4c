"""The cache-blocked conv and pooling fast paths against the generic implementations.

`conv_fast` / `conv_pool` must give the generic `conv_impl` results (float32 stays float32)
on odd sizes, SAME padding with odd inputs, strides, dilations, 1x1 and 5x5 filters, batch 1,
inputs full of ties (ReLU zeros, where MaxPoolGrad must route to the first maximum in
row-major window order), and must never hand out (a view of) a reused scratch buffer.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from tensorweave.ops.nn_geometry import window_2d
from tensorweave.runtime.kernels.cpu import conv_fast as fast
from tensorweave.runtime.kernels.cpu import conv_impl as impl
from tensorweave.runtime.kernels.cpu import conv_pool as pool
from tensorweave.runtime.kernels.cpu import conv_scratch

rng = np.random.default_rng(11)

# (input NHWC, filter KHxKW, out channels, strides, padding, dilations)
CONV_CONFIGS = [
    ((4, 14, 14, 32), (3, 3), 64, 1, "SAME", 1),        # the benchmark's second layer
    ((3, 28, 28, 1), (3, 3), 32, 1, "SAME", 1),         # its first (few input channels)
    ((1, 7, 9, 6), (3, 3), 5, 1, "SAME", 1),            # batch 1, odd sizes
    ((2, 9, 7, 5), (3, 3), 4, 2, "SAME", 1),            # stride 2, odd SAME
    ((2, 10, 11, 8), (5, 5), 3, 1, "SAME", 1),          # 5x5
    ((2, 11, 10, 8), (5, 5), 6, 2, "VALID", 1),         # 5x5 stride 2 VALID
    ((2, 9, 9, 7), (3, 2), 4, 1, "VALID", 2),           # dilated, non-square filter
    ((2, 8, 8, 6), (1, 1), 4, 1, "SAME", 1),            # 1x1 (generic: no patch matrix)
    ((2, 9, 9, 6), (1, 1), 4, 2, "VALID", 1),           # 1x1 stride 2
    ((40, 6, 6, 16), (3, 3), 8, 1, "SAME", 1),          # many chunks
]


def _win(x_shape, k_hw, strides, padding, dilations=1):
    attrs = {"strides": [1, strides, strides, 1], "padding": padding,
             "dilations": [1, dilations, dilations, 1]}
    return window_2d(x_shape[1:3], k_hw, attrs)


def relu_ties(shape, dtype=np.float32):
    """Random values with half of them exactly 0 (ReLU output): windows full of ties."""
    return np.maximum(rng.standard_normal(shape), 0).astype(dtype)


def assert_close(actual, expected):
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    scale = max(float(np.abs(expected).max(initial=0)), 1.0)
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5 * scale)


def _conv_inputs(config, dtype=np.float32):
    x_shape, k_hw, out_c, strides, padding, dilations = config
    win = _win(x_shape, k_hw, strides, padding, dilations)
    x = relu_ties(x_shape, dtype)
    w = rng.standard_normal(k_hw + (x_shape[3], out_c)).astype(dtype)
    dy = relu_ties((x_shape[0], win.out_h, win.out_w, out_c), dtype)
    return x, w, dy, win


@pytest.mark.parametrize("config", CONV_CONFIGS, ids=str)
def test_conv2d_and_gradients_match_generic(config):
    x, w, dy, win = _conv_inputs(config)
    assert_close(fast.conv2d(x, w, win), impl.conv2d(x, w, win))
    assert_close(fast.conv2d_backprop_input(dy, w, x.shape, win),
                 impl.conv2d_backprop_input(dy, w, x.shape, win))
    assert_close(fast.conv2d_backprop_filter(x, dy, w.shape, win),
                 impl.conv2d_backprop_filter(x, dy, w.shape, win))


def test_fast_path_is_taken_where_it_should_be():
    x, w, _, win = _conv_inputs(CONV_CONFIGS[0])
    assert fast.fast_path(x.shape, w.shape, win, x.dtype)
    pointwise = _conv_inputs(CONV_CONFIGS[7])
    assert not fast.fast_path(pointwise[0].shape, pointwise[1].shape, pointwise[3], np.float32)
    assert not fast.fast_path(x.shape, w.shape, win, np.int32)
    grouped = (x.shape[0], x.shape[1], x.shape[2], 2 * x.shape[3])
    assert not fast.fast_path(grouped, w.shape, win, x.dtype)


def test_float64_stays_float64():
    x, w, dy, win = _conv_inputs(CONV_CONFIGS[2], np.float64)
    assert_close(fast.conv2d(x, w, win), impl.conv2d(x, w, win))
    assert_close(fast.conv2d_backprop_input(dy, w, x.shape, win),
                 impl.conv2d_backprop_input(dy, w, x.shape, win))


def test_grouped_conv_falls_back_to_generic():
    x = relu_ties((2, 6, 6, 8))
    w = rng.standard_normal((3, 3, 4, 6)).astype(np.float32)   # 2 groups
    win = _win(x.shape, (3, 3), 1, "SAME")
    dy = relu_ties((2, 6, 6, 6))
    assert_close(fast.conv2d(x, w, win), impl.conv2d(x, w, win))
    assert_close(fast.conv2d_backprop_input(dy, w, x.shape, win),
                 impl.conv2d_backprop_input(dy, w, x.shape, win))
    assert_close(fast.conv2d_backprop_filter(x, dy, w.shape, win),
                 impl.conv2d_backprop_filter(x, dy, w.shape, win))


def test_results_never_alias_scratch():
    """A second call (same shapes, so the same scratch) leaves the first results intact."""
    x, w, dy, win = _conv_inputs(CONV_CONFIGS[0])
    first = [fast.conv2d(x, w, win), fast.conv2d_backprop_input(dy, w, x.shape, win),
             fast.conv2d_backprop_filter(x, dy, w.shape, win)]
    kept = [a.copy() for a in first]
    x2, w2, dy2, _ = _conv_inputs(CONV_CONFIGS[0])
    fast.conv2d(x2, w2, win)
    fast.conv2d_backprop_input(dy2, w2, x.shape, win)
    fast.conv2d_backprop_filter(x2, dy2, w.shape, win)
    for a, b in zip(first, kept):
        np.testing.assert_array_equal(a, b)


def test_inputs_are_not_modified():
    x, w, dy, win = _conv_inputs(CONV_CONFIGS[3])
    copies = [x.copy(), w.copy(), dy.copy()]
    fast.conv2d(x, w, win)
    fast.conv2d_backprop_input(dy, w, x.shape, win)
    fast.conv2d_backprop_filter(x, dy, w.shape, win)
    for a, b in zip((x, w, dy), copies):
        np.testing.assert_array_equal(a, b)


def test_concurrent_threads_get_their_own_scratch():
    cases = [_conv_inputs(CONV_CONFIGS[0]) for _ in range(4)]
    expected = [impl.conv2d(x, w, win) for x, w, _, win in cases]
    errors: list = []

    def work(i):
        x, w, _, win = cases[i]
        for _ in range(5):
            got = fast.conv2d(x, w, win)
            if not np.allclose(got, expected[i], rtol=1e-5, atol=1e-4):
                errors.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv_kernels_nchw_and_float16_take_the_fast_path_correctly(padding):
    """Through the registered kernels: an NCHW input reaches the fast path as a transposed
    view, float16 as float32; both must give the NHWC float32 results."""
    from tests.ops.test_nn import kernel

    x, w, _, win = _conv_inputs(((3, 9, 8, 6), (3, 3), 5, 2, padding, 1))
    dy = relu_ties((3, win.out_h, win.out_w, 5))
    nhwc = {"strides": [1, 2, 2, 1], "padding": padding}
    nchw = {"strides": [1, 1, 2, 2], "padding": padding, "data_format": "NCHW"}
    to_nchw = (0, 3, 1, 2)
    xs, ws = np.array(x.shape, np.int32), np.array(w.shape, np.int32)
    xs_nchw = np.array([x.shape[i] for i in to_nchw], np.int32)
    expect = [impl.conv2d(x, w, win), impl.conv2d_backprop_input(dy, w, x.shape, win),
              impl.conv2d_backprop_filter(x, dy, w.shape, win)]
    got = [kernel("Conv2D", ["float32"], **nhwc)(x, w),
           kernel("Conv2DBackpropInput", ["float32"], **nhwc)(xs, w, dy),
           kernel("Conv2DBackpropFilter", ["float32"], **nhwc)(x, ws, dy)]
    for a, b in zip(got, expect):
        assert_close(a, b)
    got = [kernel("Conv2D", ["float32"], **nchw)(x.transpose(to_nchw), w),
           kernel("Conv2DBackpropInput", ["float32"], **nchw)(xs_nchw, w, dy.transpose(to_nchw)),
           kernel("Conv2DBackpropFilter", ["float32"], **nchw)(
               x.transpose(to_nchw), ws, dy.transpose(to_nchw))]
    assert_close(got[0], expect[0].transpose(to_nchw))
    assert_close(got[1], expect[1].transpose(to_nchw))
    assert_close(got[2], expect[2])
    half = kernel("Conv2D", ["float16"], **nhwc)(x.astype(np.float16), w.astype(np.float16))
    assert half.dtype == np.float16
    np.testing.assert_allclose(half.astype(np.float32), expect[0], rtol=2e-2, atol=5e-2)


def test_chunks_cover_the_batch_evenly():
    assert conv_scratch.chunks(64, 1 << 18, 1 << 20) == [(i, i + 4) for i in range(0, 64, 4)]
    assert conv_scratch.chunks(64, 200_000, 1 << 20)[-1] == (60, 64)
    assert conv_scratch.chunks(5, 10**9) == [(i, i + 1) for i in range(5)]
    assert conv_scratch.chunks(3, 1) == [(0, 3)]
    assert conv_scratch.chunks(0, 100) == []


# -- pooling ------------------------------------------------------------------------------------
# (input NHWC, window = stride, padding): every one tiles, so the fast path runs
POOL_CONFIGS = [
    ((4, 28, 28, 32), 2, "VALID"),      # the benchmark's first pool
    ((3, 14, 14, 64), 2, "SAME"),       # even size: SAME needs no padding
    ((1, 9, 7, 3), 2, "VALID"),         # odd sizes: the trailing row/column is never read
    ((2, 9, 9, 5), 3, "VALID"),         # 3x3/3
    ((2, 8, 7, 4), 3, "VALID"),         # 3x3/3 with trailing rows and columns
    ((2, 6, 8, 4), 1, "VALID"),         # 1x1/1
    ((2, 6, 8, 4), 2, "VALID", (1, 2)),  # 1x2/(1,2)
]
# windows that do not tile: generic path
GENERIC_POOL_CONFIGS = [((2, 7, 9, 3), 2, 2, "SAME"), ((2, 9, 9, 4), 3, 2, "VALID")]


def _pool_win(x_shape, k, stride, padding, k_hw=None):
    k_hw = k_hw or (k, k)
    s_hw = k_hw if stride == k else (stride, stride)
    return window_2d(x_shape[1:3], k_hw, {"strides": [1, s_hw[0], s_hw[1], 1],
                                          "padding": padding})


def _tiled(config):
    x_shape, k, padding = config[:3]
    win = _pool_win(x_shape, k, k, padding, config[3] if len(config) > 3 else None)
    assert pool.tiles(np.empty(x_shape, np.float32), win) is not None
    return x_shape, win


def _max_pool_inputs(x_shape, win, ties, dtype=np.float32):
    x = relu_ties(x_shape, dtype) if ties else rng.standard_normal(x_shape).astype(dtype)
    y = impl.max_pool(x, win)
    dy = rng.standard_normal(y.shape).astype(dtype)
    return x, y, dy


@pytest.mark.parametrize("ties", [True, False], ids=["ties", "distinct"])
@pytest.mark.parametrize("config", POOL_CONFIGS, ids=str)
def test_max_pool_grad_matches_generic_exactly(config, ties):
    x_shape, win = _tiled(config)
    x, y, dy = _max_pool_inputs(x_shape, win, ties)
    dx = pool.max_pool_grad(x, y, dy, win)
    assert dx.dtype == np.float32
    np.testing.assert_array_equal(dx, impl.max_pool_grad(x, y, dy, win))


def test_max_pool_grad_keeps_float64_and_int32():
    x_shape, win = _tiled(POOL_CONFIGS[2])
    for dtype in (np.float64, np.int32):
        x, y, dy = _max_pool_inputs(x_shape, win, True, dtype)
        dx = pool.max_pool_grad(x, y, dy, win)
        assert dx.dtype == dtype
        np.testing.assert_array_equal(dx, impl.max_pool_grad(x, y, dy, win))


def test_max_pool_grad_routes_ties_to_the_first_maximum():
    x = np.zeros((1, 2, 4, 1), np.float32)
    x[0, :, 2:, 0] = [[1.0, 2.0], [2.0, 2.0]]          # second window: max 2 at three places
    win = _pool_win(x.shape, 2, 2, "VALID")
    y = impl.max_pool(x, win)
    dy = np.array([[[[5.0], [7.0]]]], np.float32)
    dx = pool.max_pool_grad(x, y, dy, win)
    np.testing.assert_array_equal(dx[0, :, :, 0], [[5, 0, 0, 7], [0, 0, 0, 0]])


def test_max_pool_grad_nan_goes_to_the_last_tap_like_generic():
    x = relu_ties((1, 4, 4, 2))
    x[0, 0, 0, 0] = np.nan
    win = _pool_win(x.shape, 2, 2, "VALID")
    y = impl.max_pool(x, win)
    dy = np.ones(y.shape, np.float32)
    dx = pool.max_pool_grad(x, y, dy, win)
    assert dx[0, 1, 1, 0] == 1.0 and dx[0, 0, 0, 0] == 0.0
    np.testing.assert_array_equal(dx, impl.max_pool_grad(x, y, dy, win))


@pytest.mark.parametrize("config", POOL_CONFIGS, ids=str)
def test_avg_pool_grad_matches_generic(config):
    x_shape, win = _tiled(config)
    dy = rng.standard_normal((x_shape[0], win.out_h, win.out_w, x_shape[3])).astype(np.float32)
    assert_close(pool.avg_pool_grad(dy, x_shape, win), impl.avg_pool_grad(dy, x_shape, win))


@pytest.mark.parametrize("config", GENERIC_POOL_CONFIGS, ids=str)
def test_pool_grads_fall_back_when_windows_do_not_tile(config):
    x_shape, k, stride, padding = config
    win = _pool_win(x_shape, k, stride, padding)
    assert pool.tiles(np.empty(x_shape, np.float32), win) is None
    x, y, dy = _max_pool_inputs(x_shape, win, ties=True)
    np.testing.assert_array_equal(pool.max_pool_grad(x, y, dy, win),
                                  impl.max_pool_grad(x, y, dy, win))
    assert_close(pool.avg_pool_grad(dy, x.shape, win), impl.avg_pool_grad(dy, x.shape, win))


def test_pool_grad_results_never_alias_scratch():
    x_shape, win = _tiled(POOL_CONFIGS[0])
    x, y, dy = _max_pool_inputs(x_shape, win, True)
    first = pool.max_pool_grad(x, y, dy, win)
    kept = first.copy()
    x2, y2, dy2 = _max_pool_inputs(x_shape, win, True)
    pool.max_pool_grad(x2, y2, dy2, win)
    np.testing.assert_array_equal(first, kept)


def test_pool_grad_kernels_nchw_match_nhwc():
    """Through the registered kernels: NCHW takes the same fast path, transposed."""
    from tests.ops.test_nn import kernel

    x = relu_ties((2, 8, 6, 3))
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}
    nchw = {"ksize": [1, 1, 2, 2], "strides": [1, 1, 2, 2], "padding": "VALID",
            "data_format": "NCHW"}
    y = kernel("MaxPool", ["float32"], **attrs)(x)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    dx = kernel("MaxPoolGrad", ["float32"], **attrs)(x, y, dy)
    dx_nchw = kernel("MaxPoolGrad", ["float32"], **nchw)(
        x.transpose(0, 3, 1, 2), y.transpose(0, 3, 1, 2), dy.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(dx_nchw, dx.transpose(0, 3, 1, 2))
    win = _pool_win(x.shape, 2, 2, "VALID")
    np.testing.assert_array_equal(dx, impl.max_pool_grad(x, y, dy, win))
    shape = np.array(x.shape, np.int32)
    np.testing.assert_allclose(kernel("AvgPoolGrad", ["float32"], **attrs)(shape, dy),
                               impl.avg_pool_grad(dy, x.shape, win), rtol=1e-6)


@pytest.mark.parametrize("config", POOL_CONFIGS[:4] + [((20, 9, 9, 512), 2, "VALID")], ids=str)
def test_max_pool_in_chunks_matches_generic(config):
    x_shape, win = _tiled(config)
    x = relu_ties(x_shape)
    np.testing.assert_array_equal(pool.max_pool(x, win), impl.max_pool(x, win))
    y = impl.max_pool(x, win)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    np.testing.assert_array_equal(pool.max_pool_grad(x, y, dy, win),
                                  impl.max_pool_grad(x, y, dy, win))


@pytest.mark.parametrize("config", GENERIC_POOL_CONFIGS, ids=str)
def test_max_pool_in_chunks_with_padding_matches_generic(config):
    x_shape, k, stride, padding = config
    x = relu_ties((12,) + x_shape[1:3] + (4096,))
    win = _pool_win(x.shape, k, stride, padding)
    assert len(conv_scratch.chunks(x.shape[0], x[:1].nbytes)) > 1
    np.testing.assert_array_equal(pool.max_pool(x, win), impl.max_pool(x, win))


def test_scratch_is_reused_and_bounded():
    a = conv_scratch.scratch(("test_reuse",), (4, 5), np.float32)
    assert conv_scratch.scratch(("test_reuse",), (4, 5), np.float32) is a
    assert conv_scratch.scratch(("test_reuse",), (4, 5), np.float64) is not a
    padded = conv_scratch.scratch(("test_fill",), (3,), np.float32, fill=-np.inf)
    assert np.all(padded == -np.inf)
    for i in range(40):     # 40 x 8 MiB: more than the per-thread budget
        conv_scratch.scratch(("test_many", i), (2 << 20,), np.float32)
    assert conv_scratch.cached_bytes() <= conv_scratch._MAX_TOTAL_BYTES
    huge = conv_scratch.scratch(("test_huge",), (16 << 20,), np.float32)   # 64 MiB: not kept
    assert conv_scratch.scratch(("test_huge",), (16 << 20,), np.float32) is not huge
