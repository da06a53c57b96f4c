"""The compiled float32 loops against the numpy code they replace (run with them switched off).

Elementwise loops must match bit for bit; convolutions up to summation order (checked against
float64). Geometries cover padding, strides, dilations, VALID windows that leave input
unused, channel counts on and off the loops' register blocks, and ties, nan and -inf for
pooling. Bad buffers must raise, never read or write out of bounds.
"""

import contextlib
import shutil
import sysconfig

import numpy as np
import pytest

from tensorweave.ops.nn_geometry import window_2d
from tensorweave.runtime.kernels.cpu import conv_impl as impl
from tensorweave.runtime.kernels.cpu import native
from tests.numerics import assert_dot_close

needs_native = pytest.mark.skipif(not native.BUILT, reason="compiled helper not built")

RNG = np.random.default_rng(0)


@contextlib.contextmanager
def numpy_only():
    old = native.set_enabled(False)
    try:
        yield
    finally:
        native.set_enabled(old)


def both(fn, *args):
    """(native result, numpy result) of fn(*args)."""
    assert native.enabled()
    fast = fn(*args)
    with numpy_only():
        slow = fn(*args)
    return fast, slow


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_built_wherever_a_compiler_is():
    """The install builds the helper when a C compiler exists (CI's machine has one)."""
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) or shutil.which("cc"):
        assert native.BUILT and native.enabled()


GEOMETRIES = [  # (in_hw, k_hw, strides, padding, dilations)
    ((28, 28), (3, 3), (1, 1), "SAME", (1, 1)),
    ((14, 14), (3, 3), (1, 1), "SAME", (1, 1)),
    ((9, 7), (3, 2), (2, 2), "SAME", (1, 1)),
    ((10, 11), (3, 3), (2, 3), "VALID", (1, 1)),     # trailing input never read
    ((8, 9), (2, 3), (1, 1), "SAME", (2, 2)),
    ((5, 5), (5, 5), (1, 1), "VALID", (1, 1)),
    ((6, 4), (1, 1), (2, 2), "VALID", (1, 1)),
]


def window(geom):
    in_hw, k_hw, strides, padding, dil = geom
    return window_2d(in_hw, k_hw, {"strides": [1, *strides, 1], "padding": padding,
                                   "dilations": [1, *dil, 1], "data_format": "NHWC"})


@needs_native
@pytest.mark.parametrize("geom", GEOMETRIES)
@pytest.mark.parametrize("c", [1, 3, 8])
def test_patch_matrix_and_its_adjoint(geom, c):
    win = window(geom)
    x = rand(2, *geom[0], c)
    fast, slow = both(impl.im2col, x, win)
    np.testing.assert_array_equal(fast, slow)
    cols = rand(*fast.shape)
    fast, slow = both(impl.col2im, cols, win, 2, c)
    np.testing.assert_allclose(fast, slow, rtol=1e-5, atol=1e-5)


def _close_to_float64(fast, ref64, rtol=2e-6):
    scale = max(np.abs(ref64).max(), 1.0)
    np.testing.assert_allclose(fast, ref64, rtol=0, atol=rtol * scale * 10)


@needs_native
@pytest.mark.parametrize("geom", GEOMETRIES)
@pytest.mark.parametrize("c,o", [(1, 32), (1, 5), (3, 40), (2, 64), (4, 33)])
def test_direct_convolution_for_few_channels(geom, c, o):
    win = window(geom)
    x, w, b = rand(3, *geom[0], c), rand(*geom[1], c, o), rand(o)
    ref = impl.conv2d(x.astype(np.float64), w.astype(np.float64), win)
    fast, slow = both(impl.conv2d, x, w, win)
    _close_to_float64(fast, ref)
    _close_to_float64(slow, ref)
    for act in (None, "Relu", "Relu6"):
        want = np.maximum(ref + b, 0) if act else ref + b
        want = np.minimum(want, 6) if act == "Relu6" else want
        _close_to_float64(impl.conv2d(x, w, win, b, act), want)
    dy = rand(3, win.out_h, win.out_w, o)
    fast = impl.conv2d_backprop_filter(x, dy, w.shape, win)
    ref = impl.conv2d_backprop_filter(x.astype(np.float64), dy.astype(np.float64), w.shape, win)
    _close_to_float64(fast, ref)


@needs_native
@pytest.mark.parametrize("geom", GEOMETRIES)
def test_input_gradient_through_the_adjoint(geom):
    win = window(geom)
    w, dy = rand(*geom[1], 6, 7), rand(2, win.out_h, win.out_w, 7)
    shape = (2, *geom[0], 6)
    fast = impl.conv2d_backprop_input(dy, w, shape, win)
    ref = impl.conv2d_backprop_input(dy.astype(np.float64), w.astype(np.float64), shape, win)
    _close_to_float64(fast, ref)


def _pool_input(geom, c):
    """Values with ties (rounded), -inf and nan, so every routing rule is exercised."""
    x = np.round(rand(2, *geom[0], c) * 2) / 2
    x.flat[::17] = -np.inf
    x.flat[5::41] = np.nan
    return x


@needs_native
@pytest.mark.parametrize("geom", GEOMETRIES)
@pytest.mark.parametrize("c", [1, 5, 32])
def test_max_pool_and_its_gradient_match_bit_for_bit(geom, c):
    win = window(geom)
    x = _pool_input(geom, c)
    fast, slow = both(impl.max_pool, x, win)
    np.testing.assert_array_equal(fast, slow)
    dy = rand(*fast.shape)
    fast, slow = both(impl.max_pool_grad, x, fast, dy, win)
    if win.stride_h >= win.k_h and win.stride_w >= win.k_w:
        np.testing.assert_array_equal(fast, slow)
    else:  # overlapping windows: sums of several gradients, added in another order
        np.testing.assert_allclose(fast, slow, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(fast == 0, slow == 0)    # routed to the same places


@needs_native
def test_max_pool_grad_times_relu_mask():
    win = window(((8, 8), (2, 2), (2, 2), "VALID", (1, 1)))
    h = np.maximum(rand(2, 8, 8, 3), 0)
    y = impl.max_pool(h, win)
    dy = rand(*y.shape)
    fused = native.max_pool_grad(h, y, dy, win, relu_of=h)
    np.testing.assert_array_equal(fused, impl.max_pool_grad(h, y, dy, win) * (h > 0))


@needs_native
@pytest.mark.filterwarnings("ignore:invalid value")
def test_elementwise_loops_match_bit_for_bit():
    g, x = rand(1000, 37), rand(1000, 37)
    x[::7] = 0.0
    g[::11] = np.inf
    np.testing.assert_array_equal(native.relu_grad(g, x), g * (x > 0))
    b = rand(37)
    y = rand(1000, 37)
    y[3, 4] = np.nan
    for act, ref in ((None, y + b), ("Relu", np.maximum(y + b, 0)),
                     ("Relu6", np.minimum(np.maximum(y + b, 0), 6))):
        np.testing.assert_array_equal(impl.bias_act(y.copy(), b, act), ref)
        with numpy_only():
            np.testing.assert_array_equal(impl.bias_act(y.copy(), b, act), ref)


@needs_native
@pytest.mark.parametrize("nesterov", [False, True])
def test_adam_matches_the_numpy_update_bit_for_bit(nesterov):
    from tensorweave.runtime.kernels.cpu.training import _adam, _adam_scalars

    f32 = np.float32
    s = _adam_scalars((f32(0.9) ** 3, f32(0.999) ** 3, f32(1e-3), f32(0.9), f32(0.999),
                       f32(1e-7)))
    var, m, v, g = rand(300_000), rand(300_000), np.abs(rand(300_000)), rand(300_000)
    states = [[a.copy() for a in (var, m, v)] for _ in range(2)]
    _adam(states[0], s, g, _Scratch(), {"use_nesterov": nesterov})
    with numpy_only():
        _adam(states[1], s, g, _Scratch(), {"use_nesterov": nesterov})
    for a, b in zip(*states):
        np.testing.assert_array_equal(a, b)


class _Scratch:
    def get(self, i, like):
        return np.empty_like(like)


def _read_only(n):
    a = np.ones(n, np.float32)
    a.flags.writeable = False
    return a


@pytest.mark.parametrize("call", [
    lambda: native.relu_grad(np.ones(4, np.float64), np.ones(4, np.float64)),
    lambda: native._native.relu_grad(np.ones(4, np.float32), np.ones(3, np.float32),
                                      np.ones(4, np.float32), 4),
    lambda: native._native.relu_grad(np.ones(8, np.float32)[::2], np.ones(4, np.float32),
                                      np.ones(4, np.float32), 4),
    lambda: native._native.max_pool(np.ones(4, np.float32), np.ones(1, np.float32),
                                     (1, 2, 2, 1, 2, 2, 1, 1, 2, 2, 1, 1, 0, 0)[:13]),
    lambda: native._native.max_pool(np.ones(4, np.float32), np.ones(1, np.float32),
                                     (1, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1, 1, 0, 0)),
    lambda: native._native.im2col(np.ones(4, np.float32), np.ones(4, np.float32),
                                  (1, 2, 2, 1, 1, 1, 2, 2, 0, 1, 1, 1, 0, 0)),
    lambda: native._native.conv_direct(np.ones(4, np.float32), np.ones(4, np.float32), None,
                                       np.ones(4, np.float32), 1, 9,
                                       (1, 2, 2, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0)),
    lambda: native._native.max_pool(np.ones(4, np.float32), _read_only(1),
                                    (1, 2, 2, 1, 2, 2, 1, 1, 2, 2, 1, 1, 0, 0)),
])
@needs_native
def test_bad_buffers_and_geometry_raise(call):
    with pytest.raises((TypeError, ValueError, BufferError)):
        call()


@needs_native
def test_a_window_whose_padded_input_cannot_exist_is_refused_not_allocated():
    """Strides of 2^20 over a 1x1 input: the padded copy would be 2^40 floats."""
    one = np.ones(1, np.float32)
    with pytest.raises(MemoryError):
        native._native.conv_direct(one, one, None, np.ones(4, np.float32), 1, 0,
                                   (1, 1, 1, 1, 1, 1, 2, 2, 1 << 20, 1 << 20, 1, 1, 0, 0))


@needs_native
def test_kernels_fall_back_to_numpy_for_other_dtypes_and_layouts():
    win = window(GEOMETRIES[1])
    x64 = RNG.standard_normal((2, 14, 14, 3))
    assert impl.max_pool(x64, win).dtype == np.float64
    xt = rand(2, 3, 14, 14).transpose(0, 2, 3, 1)          # NCHW seen as NHWC: a view
    np.testing.assert_array_equal(impl.max_pool(xt, win),
                                  impl.max_pool(np.ascontiguousarray(xt), win))


@needs_native
def test_patch_groups_small_or_large_give_the_same_convolution(monkeypatch):
    """Groups that fit the kept scratch buffer, and groups too large to keep."""
    from tensorweave.runtime.kernels.cpu import conv_native

    win = window(GEOMETRIES[1])
    x, w = rand(6, 14, 14, 8), rand(3, 3, 8, 5)
    kept = conv_native.conv2d(x, w, win)
    # NOTE: other group sizes are GEMMs of other shapes (other BLAS tiles, another summation
    # order), so the runs agree within the bound of a depth-3*3*8 dot product, not to 1e-6
    magnitude = impl.conv2d(np.abs(x).astype(np.float64), np.abs(w).astype(np.float64), win)
    monkeypatch.setattr(conv_native, "SCRATCH_MAX_FLOATS", 16)
    assert_dot_close(conv_native.conv2d(x, w, win), kept, 3 * 3 * 8, magnitude)
    with numpy_only():
        assert_dot_close(impl.conv2d(x, w, win), kept, 3 * 3 * 8, magnitude)


# -- batch normalization --------------------------------------------------------------------
def _bn_kernels(fmt="NHWC", training=True):
    from types import SimpleNamespace

    from tensorweave import dtypes
    from tensorweave.runtime.kernels.cpu import nn_norm

    attrs = {"data_format": fmt, "epsilon": 1e-3, "is_training": training,
             "exponential_avg_factor": 1.0}
    node = SimpleNamespace(attr=lambda k, d=None: attrs.get(k, d),
                           output_dtypes=[dtypes.float32] * 6)
    return nn_norm._batch_norm(node, v3=True), nn_norm._batch_norm_grad(node)


def _bn_reference(x, dy, scale, offset, axes, eps=1e-3):
    """FusedBatchNorm (training) and its gradient in float64."""
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    shape = [1] * x.ndim
    shape[-1 if axes == (0, 1, 2) else 1] = -1
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    inv = 1 / np.sqrt(var + eps)
    x_hat = (x - mean.reshape(shape)) * inv.reshape(shape)
    y = x_hat * scale.reshape(shape) + offset.reshape(shape)
    n = x.size / mean.size
    d_offset, d_scale = dy.sum(axis=axes), (dy * x_hat).sum(axis=axes)
    dx = (scale * inv).reshape(shape) * (dy - (d_offset / n).reshape(shape)
                                         - x_hat * (d_scale / n).reshape(shape))
    return y, mean, var * n / (n - 1), dx, d_scale, d_offset


@needs_native
@pytest.mark.parametrize("fmt, shape", [("NHWC", (8, 9, 7, 5)), ("NCHW", (4, 6, 5, 7)),
                                        ("NHWC", (64, 16, 16, 16))])
def test_batch_norm_and_gradient_against_float64(fmt, shape):
    """Native and numpy paths both within float32 rounding of a float64 reference: sums of
    n terms in float64 (native) or float32 (numpy: ~n*eps worst case, far less in practice),
    then O(1) float32 operations per element."""
    axes = (0, 1, 2) if fmt == "NHWC" else (0, 2, 3)
    c = shape[-1] if fmt == "NHWC" else shape[1]
    x, dy = rand(*shape) * 3 + 1.5, rand(*shape)
    scale, offset = rand(c), rand(c)
    want = _bn_reference(x, dy, scale, offset, axes)
    for use_native in (True, False):
        old = native.set_enabled(use_native)
        try:
            fwd, grad = _bn_kernels(fmt)
            y, mean, var, r1, r2, _ = fwd(x, scale, offset, np.zeros(c, np.float32),
                                          np.ones(c, np.float32))
            dx, d_scale, d_offset, *_ = grad(dy, x, scale, r1, r2)
        finally:
            native.set_enabled(old)
        got = (y, mean, var, dx, d_scale, d_offset)
        for name, g, w in zip(("y", "mean", "var", "dx", "d_scale", "d_offset"), got, want):
            assert g.dtype == np.float32 and g.shape == w.shape, name
            np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4, err_msg=f"{name} {use_native}")


@needs_native
def test_batch_norm_sums_repeat_on_any_thread_count():
    """The statistics are summed over fixed row blocks in block order, so pool mode (the
    blocks shared out to threads) and one thread give the same bits."""
    from tensorweave.runtime.kernels.cpu import parallel

    x = rand(3 * native.SUM_ROWS + 17, 24)
    shift = rand(24)
    one = native.channel_sums(x, x, shift)
    parallel.set_pool_mode(True)
    try:
        pooled = native.channel_sums(x, x, shift)
    finally:
        parallel.set_pool_mode(False)
    for a, b in zip(one, pooled):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(one[0], x.astype(np.float64).sum(axis=0), rtol=1e-12)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(one[1], (x64 * (x64 - shift)).sum(axis=0), rtol=1e-12)


@needs_native
@pytest.mark.parametrize("call", [
    lambda: native._native.channel_sums(*[np.ones(6, np.float32)] * 3, np.zeros(3),
                                        np.zeros(3), 2, 3),         # shift of 6 for 3 columns
    lambda: native._native.channel_sums(np.ones(6, np.float32), np.ones(6, np.float32),
                                        np.ones(3, np.float32), np.zeros(3, np.float32),
                                        np.zeros(3), 2, 3),         # float32 sums
    lambda: native._native.bn_forward(np.ones(6, np.float32), np.ones(6, np.float32),
                                      np.ones(6, np.float32), 2, 3),   # params need 3*cols
    lambda: native._native.bn_backward(*[np.ones(6, np.float32)] * 3, np.ones(15, np.float32),
                                       3, 3),                          # rows*cols > buffers
    lambda: native._native.bn_forward(np.ones(6, np.float32), np.ones(6, np.float32),
                                      np.ones(9, np.float32), -2, -3),  # negative sizes
])
def test_bad_batch_norm_buffers_raise(call):
    with pytest.raises((TypeError, ValueError, BufferError)):
        call()


# -- row scatters -------------------------------------------------------------------------------
SCATTER_SHAPES = [(50, 7), (20, 3, 4), (9,), (6, 0)]


@pytest.mark.parametrize("shape", SCATTER_SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
@pytest.mark.parametrize("subtract", [False, True])
def test_row_scatter_matches_ufunc_at_bit_for_bit(shape, dtype, subtract):
    """Duplicates (a third of the indices repeat) add one after another in index order,
    as TF's sequential ScatterFunctor and numpy's ufunc.at do, so the bits agree exactly."""
    from tensorweave.runtime.kernels.cpu import segment_rows

    base = (RNG.standard_normal(shape) * 100).astype(dtype)
    idx = RNG.integers(0, shape[0], 3 * shape[0]).astype(np.int32)
    upd = (RNG.standard_normal(idx.shape + shape[1:]) * 100).astype(dtype)
    fast, slow = base.copy(), base.copy()
    segment_rows.add_rows(fast, idx, upd, subtract)
    (np.subtract if subtract else np.add).at(slow, idx, upd)
    np.testing.assert_array_equal(fast, slow)


@needs_native
def test_row_scatter_broadcasts_a_scalar_and_refuses_bad_indices_unwritten():
    from tensorweave.runtime.kernels.cpu import segment_rows

    out = np.zeros((4, 3), np.float32)
    segment_rows.add_rows(out, np.array([1, 1, 3]), np.float32(2))
    np.testing.assert_array_equal(out.sum(axis=1), [0, 12, 0, 6])
    before = out.copy()
    with pytest.raises(ValueError):
        native.scatter_rows(out, np.array([0, 4]), np.ones((2, 3), np.float32), 4, 3, False,
                            False)
    np.testing.assert_array_equal(out, before)
    with pytest.raises(TypeError):   # int32 indices must be widened by the caller
        native._native.scatter_rows(out, np.array([0], np.int32), np.ones((1, 3), np.float32),
                                    4, 3, 1, False, False)


# -- sparse softmax cross entropy ---------------------------------------------------------------
@needs_native
@pytest.mark.parametrize("rows,cols,spread", [(7, 10000, 3.0), (5, 3, 1.0), (9, 13, 40.0),
                                              (4, 1, 1.0)])
def test_sparse_xent_against_float64(rows, cols, spread):
    """Loss and backprop within float32 rounding of the float64 values: the loop's exp errs by
    ~2e-7 relative per element (Cephes's polynomial), its sums are in float64, so backprop
    (each entry in [-1, 1]) is within 1e-6 and the loss within 1e-6 relative + absolute."""
    x = (RNG.standard_normal((rows, cols)) * spread).astype(np.float32)
    x[0, 0] = -1e4                                    # underflows to 0 in exp
    labels = RNG.integers(0, cols, rows)
    loss, back = native.sparse_xent(x, labels)
    z = x.astype(np.float64)
    z -= z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1))
    want_loss = lse - z[np.arange(rows), labels]
    want_back = np.exp(z - lse[:, None])
    want_back[np.arange(rows), labels] -= 1
    np.testing.assert_allclose(loss, want_loss, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(back, want_back, rtol=0, atol=1e-6)


@needs_native
def test_sparse_xent_exp_over_the_whole_float32_range():
    """One class against a 0 logit: backprop[0] = exp(t) / (1 + exp(t)) - 1 for t from -100
    (the exp underflows) to 88 (near overflow), and nan logits give nan."""
    t = np.concatenate([np.linspace(-100, 88, 4001), [np.nan]]).astype(np.float32)
    x = np.stack([t, np.zeros_like(t)], axis=1)
    loss, back = native.sparse_xent(x, np.ones(t.size, np.int64))
    want = 1 / (1 + np.exp(-t[:-1].astype(np.float64)))       # softmax of class 0
    np.testing.assert_allclose(back[:-1, 0], want, rtol=1e-6, atol=1e-30)
    assert np.isnan(loss[-1]) and np.isnan(back[-1]).all()
    with pytest.raises(ValueError):
        native.sparse_xent(x[:2], np.array([0, 2]))
