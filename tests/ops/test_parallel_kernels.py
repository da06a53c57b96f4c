"""The blocked / multi-threaded paths of the elementwise CPU kernels (`cpu/parallel.py`).

Each kernel that walks big arrays in blocks (on several threads) must give exactly the result
of its plain whole-array numpy formula (the ops are elementwise, so bit for bit), on odd sizes
that leave a partial last block; small arrays must take the plain path (no block machinery).
These are the numpy paths: the compiled loops that replace them for float32 are switched off
here (tests/runtime/test_native.py checks those against these).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from tensorweave import dtypes, errors
from tensorweave.runtime.kernels.cpu import native, parallel
from tensorweave.runtime.kernels.cpu import training as T
from tensorweave.runtime.kernels.registry import KernelNode, lookup_kernel
from tensorweave.runtime.resources import Ref

BIG = 1_000_003            # odd: the last block is partial
SMALL = (17, 23)
RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def two_threads():
    """Forces the threaded numpy path (even on a one-CPU machine), outside pool mode (GEMMs
    unsplit: tests/runtime/test_pool_mode.py has those), then restores defaults."""
    parallel.set_num_threads(2)
    parallel.set_pool_mode(False)
    old = native.set_enabled(False)
    yield
    native.set_enabled(old)
    parallel.set_num_threads(0)


@pytest.fixture
def block_calls(monkeypatch):
    """Counts `parallel.for_blocks` calls (they still run)."""
    calls = []
    real = parallel.for_blocks

    def counting(n, fn, *args, **kwargs):
        calls.append(n)
        return real(n, fn, *args, **kwargs)

    monkeypatch.setattr(parallel, "for_blocks", counting)
    return calls


def _kernel(op: str, inputs: list, outputs: list, **attrs):
    return lookup_kernel(op).factory(KernelNode(op, op, attrs, inputs, outputs))


def _matmul(a, b, transpose_b=False):
    """The MatMul kernel's product: the GEMM a fused kernel runs before its epilogue."""
    return _kernel("MatMul", [F32, F32], [F32], T=F32, transpose_a=False,
                   transpose_b=transpose_b)(a, b)


def _normal(shape, dtype=np.float32, positive=False):
    a = RNG.standard_normal(shape)
    return (np.abs(a) + 0.1 if positive else a).astype(dtype)


# -- for_blocks ----------------------------------------------------------------------------
def test_for_blocks_covers_every_index_once_across_threads():
    hits = np.zeros(BIG, np.int32)
    workers = set()
    lock = threading.Lock()

    def fn(w, lo, hi):
        with lock:
            workers.add(w)
        hits[lo:hi] += 1

    parallel.for_blocks(BIG, fn)
    assert (hits == 1).all()
    assert workers <= {0, 1} and 0 in workers


def test_for_blocks_small_range_is_one_inline_call(monkeypatch):
    monkeypatch.setattr(parallel, "_parallel", lambda *a: pytest.fail("went parallel"))
    calls = []
    parallel.for_blocks(parallel.BLOCK, lambda w, lo, hi: calls.append((w, lo, hi)))
    assert calls == [(0, 0, parallel.BLOCK)]
    calls.clear()
    parallel.for_blocks(parallel.MIN_PARALLEL - 1, lambda w, lo, hi: calls.append((w, lo, hi)))
    assert len(calls) == 4 and {w for w, _, _ in calls} == {0}    # blocks, caller only
    assert calls[-1][2] == parallel.MIN_PARALLEL - 1


def test_for_blocks_one_thread_runs_serially(monkeypatch):
    parallel.set_num_threads(1)
    monkeypatch.setattr(parallel, "_parallel", lambda *a: pytest.fail("went parallel"))
    seen = []
    parallel.for_blocks(BIG, lambda w, lo, hi: seen.append(threading.get_ident()))
    assert set(seen) == {threading.get_ident()}


def test_for_blocks_reraises_a_block_error():
    def fn(w, lo, hi):
        if lo > BIG // 2:
            raise ValueError("bad block")

    with pytest.raises(ValueError, match="bad block"):
        parallel.for_blocks(BIG, fn)
    parallel.for_blocks(BIG, lambda w, lo, hi: None)   # the pool still works


def test_for_blocks_from_two_threads_at_once_cover_every_index_once():
    """One call owns the crew; the other runs its blocks on its own thread."""
    hits = [np.zeros(BIG, np.int32), np.zeros(BIG, np.int32)]

    def call(k):
        for _ in range(20):
            parallel.for_blocks(BIG, lambda w, lo, hi: hits[k].__setitem__(
                slice(lo, hi), hits[k][lo:hi] + 1))

    threads = [threading.Thread(target=call, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert all((h == 20).all() for h in hits)


def test_set_num_threads_ends_the_old_crews_threads():
    parallel.for_blocks(BIG, lambda w, lo, hi: None)
    crew = parallel.current()._crew
    helpers = [h._thread for h in crew._helpers]
    assert helpers and all(t.is_alive() for t in helpers)
    parallel.set_num_threads(2)
    for t in helpers:
        t.join(5)
    assert not any(t.is_alive() for t in helpers)
    parallel.for_blocks(BIG, lambda w, lo, hi: None)   # a new crew serves


def test_an_interrupted_wait_retires_the_crew(monkeypatch):
    """Ctrl-C while the caller waits for a helper: that crew ends (a late hand-off must not
    answer a later call) and the next call gets a new one."""
    parallel.for_blocks(BIG, lambda w, lo, hi: None)
    crew = parallel.current()._crew
    helper = crew._helpers[0]

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(helper, "wait_job", interrupted)
    with pytest.raises(KeyboardInterrupt):
        parallel.for_blocks(BIG, lambda w, lo, hi: None)
    assert crew.retired
    helper._thread.join(5)
    assert not helper._thread.is_alive()
    hits = np.zeros(BIG, np.int32)
    parallel.for_blocks(BIG, lambda w, lo, hi: hits.__setitem__(slice(lo, hi), hits[lo:hi] + 1))
    assert parallel.current()._crew is not crew and (hits == 1).all()


def test_for_blocks_nested_in_a_worker_runs_inline():
    inner_workers = []

    def inner(w, lo, hi):
        inner_workers.append(w)

    def outer(w, lo, hi):
        if w:   # on a pool thread: a nested call must not wait on the (busy) pool
            parallel.for_blocks(BIG, inner)

    parallel.for_blocks(BIG, outer)
    assert set(inner_workers) <= {0}
    covered = np.zeros(BIG, np.int32)

    def outer_on_caller(w, lo, hi):   # the caller owns the crew: its nested call runs alone
        if w == 0 and not covered.any():
            parallel.for_blocks(BIG, lambda w2, a, b: covered.__setitem__(slice(a, b), 1))

    parallel.for_blocks(BIG, outer_on_caller)
    assert covered.all()


# -- training kernels ----------------------------------------------------------------------
def _refs(arrays):
    refs = []
    for i, a in enumerate(arrays):
        r = Ref(f"v{i}")
        r.value = a
        refs.append(r)
    return refs


def _apply(op, arrays, scalars, grad, dtype=np.float32, **attrs):
    """Runs the dense kernel `op` on copies of `arrays`; returns the updated arrays."""
    dt = dtypes.as_dtype(dtype)
    refs = _refs([a.copy() for a in arrays])
    kernel = _kernel(op, [], [], T=dt, **attrs)
    kernel(*refs, *[np.asarray(s, dtype) for s in scalars[0]], grad,
           *[np.asarray(s, dtype) for s in scalars[1]])
    return [r.value for r in refs]


def _plain(fn, arrays, scalars, grad, flags, prep=None):
    """The formula on whole arrays: the kernels' plain path."""
    arrays = [a.copy() for a in arrays]
    s = tuple(np.asarray(v, arrays[0].dtype)[()] for v in scalars[0] + scalars[1])
    fn(arrays, prep(s) if prep else s, grad, T._Scratch(), flags)
    return arrays


ADAM = ([0.9 ** 3, 0.999 ** 3, 0.01, 0.9, 0.999, 1e-7], [])
CASES = [
    # op, formula, number of arrays, (scalars before grad, after grad), flags, positive slots
    ("ApplyGradientDescent", T._gradient_descent, 1, ([0.1], []), {}, 0),
    ("ApplyMomentum", T._momentum, 2, ([0.1], [0.9]), {"use_nesterov": False}, 0),
    ("ApplyMomentum", T._momentum, 2, ([0.1], [0.9]), {"use_nesterov": True}, 0),
    ("ApplyAdam", T._adam, 3, ADAM, {"use_nesterov": False}, 1),
    ("ApplyAdam", T._adam, 3, ADAM, {"use_nesterov": True}, 1),
    ("ApplyRMSProp", T._rms_prop, 3, ([0.01, 0.9, 0.5, 1e-6], []), {}, 1),
    ("ApplyCenteredRMSProp", T._centered_rms_prop, 4, ([0.01, 0.9, 0.5, 1e-6], []), {}, 1),
    ("ApplyAdagrad", T._adagrad, 2, ([0.1], []), {"update_slots": True}, 1),
    ("ApplyAdagrad", T._adagrad, 2, ([0.1], []), {"update_slots": False}, 1),
    ("ApplyAdadelta", T._adadelta, 3, ([0.5, 0.95, 1e-6], []), {}, 1),
]


def _slots(n, positive, shape, dtype=np.float32):
    """var (any sign), then the slots (positive where the formula takes their sqrt)."""
    arrays = [_normal(shape, dtype)]
    arrays += [_normal(shape, dtype, positive=bool(positive)) for _ in range(1, n)]
    if n == 4:   # centered RMSProp: mg may be any sign, ms > mg² (ms >= 0.1, |mg| < 0.3)
        arrays[1] = np.clip(_normal(shape, dtype), -6, 6) * np.asarray(0.05, dtype)
    return arrays


@pytest.mark.parametrize("op,fn,n,scalars,flags,positive", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dense_apply_blocked_equals_whole_array_formula(op, fn, n, scalars, flags, positive,
                                                        dtype, block_calls):
    arrays = _slots(n, positive, (BIG,), dtype)
    grad = _normal((BIG,), dtype)
    got = _apply(op, arrays, scalars, grad, dtype, **flags)
    prep = T._adam_scalars if op == "ApplyAdam" else None
    want = _plain(fn, arrays, scalars, grad, flags, prep)
    assert block_calls == [BIG]
    for g, w in zip(got, want):
        assert g.dtype == dtype and g.shape == (BIG,)
        np.testing.assert_array_equal(g, w)
    assert not np.array_equal(got[0], arrays[0])   # it did update


def test_adam_blocked_matches_tf_formula_2d():
    """A 2-D variable (the MLP's kernel shape, odd), against TF's formula in float64."""
    shape = (1001, 999)
    var, m, v = _normal(shape), _normal(shape), _normal(shape, positive=True)
    g = _normal(shape)
    b1p, b2p, lr, b1, b2, eps = ADAM[0]
    got_var, got_m, got_v = _apply("ApplyAdam", [var, m, v], ADAM, g, use_nesterov=True)
    m64 = m + (g - m.astype(np.float64)) * (1 - b1)
    v64 = v + (np.square(g.astype(np.float64)) - v) * (1 - b2)
    alpha = lr * np.sqrt(1 - b2p) / (1 - b1p)
    var64 = var - alpha * (g * (1 - b1) + b1 * m64) / (np.sqrt(v64) + eps)
    np.testing.assert_allclose(got_m, m64, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_v, v64, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_var - var, var64 - var, rtol=1e-4, atol=1e-6)
    assert got_var.dtype == np.float32


def test_dense_apply_small_takes_plain_path(block_calls):
    arrays = _slots(3, 1, SMALL)
    g = _normal(SMALL)
    got = _apply("ApplyAdam", arrays, ADAM, g, use_nesterov=False)
    want = _plain(T._adam, arrays, ADAM, g, {"use_nesterov": False}, T._adam_scalars)
    assert block_calls == []
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_dense_apply_non_contiguous_grad_is_plain_and_right(block_calls):
    shape = (1001, 1003)
    arrays = _slots(2, 1, shape)
    g = np.asfortranarray(_normal(shape))
    got = _apply("ApplyAdagrad", arrays, ([0.1], []), g, update_slots=True)
    want = _plain(T._adagrad, arrays, ([0.1], []), g, {"update_slots": True})
    assert block_calls == []
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_dense_apply_updates_in_place_and_keeps_shape_errors():
    var, m, v = _slots(3, 1, (BIG,))
    refs = _refs([var, m, v])
    kernel = _kernel("ApplyAdam", [], [], T=dtypes.float32, use_nesterov=False)
    scalars = [np.float32(x) for x in ADAM[0]]
    out = kernel(*refs, *scalars, _normal((BIG,)))
    assert out is refs[0] and refs[0].value is var    # same buffer, updated
    with pytest.raises(errors.InvalidArgumentError, match="var and grad do not have the same"):
        kernel(*refs, *scalars, _normal((BIG - 1,)))


# -- nn and fused kernels ------------------------------------------------------------------
F32 = dtypes.float32


def test_relu_grad_blocked_equals_formula(block_calls):
    shape = (1001, 999)
    g, x = _normal(shape), _normal(shape)
    g[0, :3] = [np.inf, -np.inf, np.nan]
    x[0, :3] = [-1.0, 2.0, 0.0]
    with np.errstate(invalid="ignore"):   # inf * 0 = nan, as TF
        got = _kernel("ReluGrad", [F32, F32], [F32])(g, x)
        want = g * (x > 0)
    assert block_calls == [g.size]
    assert got.dtype == np.float32 and got.shape == shape
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got[0, 0]) and got[0, 1] == -np.inf and np.isnan(got[0, 2])


def test_relu_blocked_equals_formula(block_calls):
    x = _normal((BIG,))
    x[:2] = [np.nan, -0.0]
    got = _kernel("Relu", [F32], [F32])(x)
    assert block_calls == [BIG]
    np.testing.assert_array_equal(got, np.maximum(x, 0))
    assert got is not x


@pytest.mark.parametrize("shape", [(1001, 999), (11, 97, 1031)])
def test_bias_add_blocked_equals_formula(shape, block_calls):
    x, b = _normal(shape), _normal(shape[-1:])
    got = _kernel("BiasAdd", [F32, F32], [F32], data_format="NHWC")(x, b)
    assert len(block_calls) == 1
    np.testing.assert_array_equal(got, x + b)


@pytest.mark.parametrize("act,ref", [
    ("Relu", lambda y: np.maximum(y, 0)),
    ("Relu6", lambda y: np.clip(y, 0, 6)),
    ("Elu", lambda y: np.where(y > 0, y, np.expm1(np.minimum(y, 0)))),
    ("Tanh", np.tanh),
])
def test_fused_matmul_bias_activation_blocked_equals_formula(act, ref, block_calls):
    a, w, b = _normal((1001, 33)), _normal((33, 1003)), _normal((1003,))
    kernel = _kernel("_FusedMatMul", [F32, F32, F32], [F32], T=F32, transpose_a=False,
                     transpose_b=False, fused_ops=["BiasAdd", act], leakyrelu_alpha=0.2)
    got = kernel(a, w, b)
    assert len(block_calls) == 1
    assert got.dtype == np.float32
    # NOTE: the GEMM is the MatMul kernel's own (a kernel against itself is bit for bit; numpy's
    # on other BLAS settings would agree only within the depth-k bound, tests/numerics.py),
    # so what is compared exactly is the blocked epilogue
    np.testing.assert_array_equal(got, ref(_matmul(a, w) + b))


def test_small_nn_kernels_take_plain_path(block_calls):
    g, x, b = _normal(SMALL), _normal(SMALL), _normal(SMALL[-1:])
    np.testing.assert_array_equal(_kernel("ReluGrad", [F32, F32], [F32])(g, x), g * (x > 0))
    np.testing.assert_array_equal(_kernel("Relu", [F32], [F32])(x), np.maximum(x, 0))
    np.testing.assert_array_equal(
        _kernel("BiasAdd", [F32, F32], [F32], data_format="NHWC")(x, b), x + b)
    fused = _kernel("_FusedMatMul", [F32, F32, F32], [F32], T=F32, transpose_a=False,
                    transpose_b=True, fused_ops=["BiasAdd", "Relu"], leakyrelu_alpha=0.2)
    np.testing.assert_array_equal(fused(x, x, g[:, 0]),
                                  np.maximum(_matmul(x, x, transpose_b=True) + g[:, 0], 0))
    assert block_calls == []


def test_for_blocks_workers_use_the_callers_numpy_error_state():
    x = np.zeros(BIG, np.float32)
    helper_ran = threading.Event()

    def fn(w, lo, hi):
        if w == 0:
            helper_ran.wait(5)     # leave a block to the helper thread
        else:
            helper_ran.set()
            np.divide(1, x[lo:hi])

    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            parallel.for_blocks(BIG, fn)
    assert helper_ran.is_set()


def test_default_uses_every_cpu():
    parallel.set_num_threads(0)
    assert parallel.num_threads() == parallel.DEFAULT_THREADS == min(parallel.cpu_count(), 8)


def test_one_thread_is_serial_cache_blocked_and_equal(monkeypatch):
    parallel.set_num_threads(1)
    monkeypatch.setattr(parallel, "_parallel", lambda *a: pytest.fail("went parallel"))
    arrays, g = _slots(3, 1, (BIG,)), _normal((BIG,))
    got = _apply("ApplyAdam", arrays, ADAM, g, use_nesterov=True)
    want = _plain(T._adam, arrays, ADAM, g, {"use_nesterov": True}, T._adam_scalars)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    x = _normal((BIG,))
    np.testing.assert_array_equal(_kernel("ReluGrad", [F32, F32], [F32])(g, x), g * (x > 0))
