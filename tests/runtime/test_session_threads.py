"""Thread settings belong to a session (runtime/threads.py): intra_op_parallelism_threads is
how many threads one kernel of that session's steps may use, inter_op_parallelism_threads how
many run independent nodes at once; two sessions in one process each get theirs. The tests
count the threads that really ran the work (never time it)."""

import threading

import numpy as np
import pytest
import threadpoolctl

import tensorweave as tf
from tensorweave.runtime.kernels.cpu import parallel
from tensorweave.runtime.threads import SessionThreads

BIG = 1 << 20      # a Relu this big is split into blocks (parallel.MIN_PARALLEL)


@pytest.fixture(autouse=True)
def default_two_threads():
    """A process default of two kernel threads, even on a one-CPU machine, so that a
    session's own setting is what limits it."""
    parallel.set_num_threads(2)
    yield
    parallel.set_num_threads(0)


@pytest.fixture
def blocks(monkeypatch):
    """Every `parallel.for_blocks` call: (calling thread, the current pool's size there, the
    set of threads that ran its blocks)."""
    calls = []
    real = parallel.for_blocks

    def recording(n, fn, *args, **kwargs):
        ran: set[int] = set()
        calls.append((threading.get_ident(), parallel.num_threads(), ran))

        def wrapped(w, lo, hi):
            ran.add(threading.get_ident())
            return fn(w, lo, hi)

        return real(n, wrapped, *args, **kwargs)

    monkeypatch.setattr(parallel, "for_blocks", recording)
    return calls


def _threads_meeting(parties: int):
    """A py_func body that passes only when `parties` kernel threads run at once: it hands
    `parties` one-element blocks out and each waits for the others at a barrier."""
    def body(x):
        barrier = threading.Barrier(parties, timeout=20)
        parallel.for_blocks(parties, lambda w, lo, hi: barrier.wait(), block=1, min_parallel=0)
        return x

    return body


def _threads_seen(seen: list):
    def body(x):
        parallel.for_blocks(4, lambda w, lo, hi: seen.append(threading.get_ident()),
                            block=1, min_parallel=0)
        return x

    return body


def test_two_sessions_side_by_side_each_get_their_intra_op_threads():
    """Session B (3 threads) runs a kernel whose blocks must meet on three threads at once,
    while session A (1 thread), in the same process at the same time, runs every block of
    its kernels on its own thread."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None])
        seen: list = []
        a_out = tf.py_func(_threads_seen(seen), [x], tf.float32)
        b_out = tf.py_func(_threads_meeting(3), [x], tf.float32)
    one = tf.ConfigProto(intra_op_parallelism_threads=1)
    three = tf.ConfigProto(intra_op_parallelism_threads=3)
    failures: list = []
    a_threads: list = []

    def run(config, out, record=None):
        try:
            with tf.Session(graph=g, config=config) as s:
                for _ in range(5):
                    s.run(out, {x: np.ones(4, np.float32)})
                    if record is not None:
                        record.append(threading.get_ident())
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(e)

    ta = threading.Thread(target=run, args=(one, a_out, a_threads))
    tb = threading.Thread(target=run, args=(three, b_out))
    ta.start()
    tb.start()
    ta.join(60)
    tb.join(60)
    assert not failures, failures
    assert len(seen) == 20 and set(seen) == set(a_threads)


def test_intra_op_one_never_runs_a_kernel_on_more_than_one_thread(blocks):
    """Big elementwise kernels, a GEMM worth splitting and a convolution: one thread each,
    BLAS included, while the process default would split them."""
    g = tf.Graph()
    with g.as_default():
        v = tf.placeholder(tf.float32, [BIG])
        a = tf.placeholder(tf.float32, [512, 512])
        img = tf.placeholder(tf.float32, [32, 16, 16, 8])
        relu = tf.nn.relu(v)
        mm = tf.matmul(a, a)
        conv = tf.nn.conv2d(img, tf.ones([3, 3, 8, 16]), [1, 1, 1, 1], "SAME")
        blas: list = []
        probe = tf.py_func(lambda t: blas.append(_blas_threads()) or t, [tf.reduce_sum(mm)],
                           tf.float32)
    feed = {v: np.ones(BIG, np.float32), a: np.ones((512, 512), np.float32),
            img: np.ones((32, 16, 16, 8), np.float32)}
    with tf.Session(graph=g, config=tf.ConfigProto(intra_op_parallelism_threads=1)) as s:
        for _ in range(3):
            s.run([relu, mm, conv, probe], feed)
    assert blocks, "no kernel reached parallel.for_blocks"
    for caller, size, ran in blocks:
        assert size == 1 and ran <= {caller}
    assert blas and all(b and set(b) == {1} for b in blas)
    blocks.clear()
    with tf.Session(graph=g) as s:      # the process default (two threads) splits them
        s.run(relu, feed)
    assert any(size == 2 for _, size, _ in blocks)


def _blas_threads() -> list[int]:
    ours = {c.filepath for c in parallel._blas}
    return [i["num_threads"] for i in threadpoolctl.threadpool_info()
            if i["user_api"] == "blas" and i["filepath"] in ours]


def test_a_dataset_function_keeps_its_sessions_threads(blocks):
    """A map function runs on the pipeline's prefetch thread, inside the session's step."""
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.from_tensors(np.ones(BIG, np.float32)).repeat()
        it = tf.data.make_one_shot_iterator(ds.map(tf.nn.relu).prefetch(1))
        nxt = it.get_next()
    with tf.Session(graph=g, config=tf.ConfigProto(intra_op_parallelism_threads=1)) as s:
        for _ in range(3):
            s.run(nxt)
    assert blocks and all(size == 1 and ran <= {caller} for caller, size, ran in blocks)


# -- inter-op threads ------------------------------------------------------------------------
@pytest.fixture
def gemm_threads(monkeypatch):
    """The thread (name) of every 2-D float GEMM the MatMul kernel runs."""
    names: list[str] = []
    real = parallel.matmul

    def recording(a, b):
        names.append(threading.current_thread().name)
        return real(a, b)

    monkeypatch.setattr(parallel, "matmul", recording)
    return names


def _three_matmuls():
    x = tf.placeholder(tf.float32, [32, 32], name="x")
    ws = [tf.constant(np.full((32, 32), i, np.float32)) for i in range(3)]
    return x, tf.add_n([tf.matmul(x, w) for w in ws])


def _run(config, fetch, feed, options=None, steps=3):
    with tf.Session(config=config) as s:
        for _ in range(steps):
            out = s.run(fetch, feed, options=options)
    return out


def test_inter_op_threads_bound_the_threads_running_independent_nodes(gemm_threads):
    x, out = _three_matmuls()
    feed = {x: np.ones((32, 32), np.float32)}
    me = threading.current_thread().name
    want = _run(tf.ConfigProto(inter_op_parallelism_threads=1), out, feed)
    assert set(gemm_threads) == {me}
    np.testing.assert_allclose(want, 32 * 3, rtol=0)
    gemm_threads.clear()
    got = _run(tf.ConfigProto(inter_op_parallelism_threads=3), out, feed)
    np.testing.assert_array_equal(got, want)
    others = set(gemm_threads) - {me}
    assert me in gemm_threads and 1 <= len(others) <= 2        # 2 pool threads at most
    assert all(n.startswith("tw-interop") for n in others)
    gemm_threads.clear()
    _run(tf.ConfigProto(inter_op_parallelism_threads=-1), out, feed)  # TF: caller's thread
    assert set(gemm_threads) == {me}


def test_session_inter_op_thread_pools_are_chosen_per_run(gemm_threads):
    x, out = _three_matmuls()
    feed = {x: np.ones((32, 32), np.float32)}
    me = threading.current_thread().name
    cfg = tf.ConfigProto()
    cfg.session_inter_op_thread_pool.add().num_threads = 1
    cfg.session_inter_op_thread_pool.add().num_threads = 3
    with tf.Session(config=cfg) as s:
        s.run(out, feed)
        assert set(gemm_threads) == {me}
        gemm_threads.clear()
        s.run(out, feed, options=tf.RunOptions(inter_op_thread_pool=1))
        assert len(set(gemm_threads) - {me}) >= 1
        gemm_threads.clear()
        s.run(out, feed, options=tf.RunOptions(inter_op_thread_pool=-1))
        assert set(gemm_threads) == {me}
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid inter_op_thread_pool: 2"):
            s.run(out, feed, options=tf.RunOptions(inter_op_thread_pool=2))


def test_a_named_inter_op_pool_is_shared_by_the_sessions_naming_it(gemm_threads):
    x, out = _three_matmuls()
    feed = {x: np.ones((32, 32), np.float32)}
    name = f"shared{id(gemm_threads)}"

    def config(n):
        cfg = tf.ConfigProto(use_per_session_threads=True)
        pool = cfg.session_inter_op_thread_pool.add()
        pool.num_threads, pool.global_name = n, name
        return cfg

    _run(config(2), out, feed)
    _run(config(4), out, feed)   # the first session's size holds (as TF 2.21)
    pooled = set(gemm_threads) - {threading.current_thread().name}
    assert len(pooled) == 1 and pooled.pop().startswith(f"tw-interop-{name}")


def test_closing_a_session_ends_its_threads():
    threads = SessionThreads(intra=3, inter=3)
    pool = threads.intra_op
    barrier = threading.Barrier(3, timeout=20)
    parallel.run_in(pool, parallel.for_blocks, 3, lambda w, lo, hi: barrier.wait(), 1, 0)
    helpers = [h._thread for h in pool.crew()._helpers]
    assert len(helpers) == 2
    threads.close()
    for t in helpers:
        t.join(5)
    assert not any(t.is_alive() for t in helpers)


def test_the_default_inter_op_pool_follows_the_affinity_mask_not_the_quota(monkeypatch):
    # a 1-CPU quota caps CPU time, not concurrency: 0 asks for the cores we may run on (as
    # TF's default); the kernels' own threads (cpu_count) still follow the quota
    from tensorweave.runtime import threads
    from tensorweave.runtime.kernels.cpu import cpus

    monkeypatch.setattr(cpus, "quota_cpus", lambda: 1.0)
    monkeypatch.setattr(threads, "affinity_count", lambda: 4)
    assert cpus.cpu_count() <= 1
    st = threads.SessionThreads(0, 0)
    try:
        assert st.inter_op[0]._max_workers == 3
        assert st.intra_op is None
    finally:
        st.close()
    monkeypatch.setattr(threads, "affinity_count", lambda: 1)
    assert threads.inter_op_pool(0) is threads.INLINE
    monkeypatch.setattr(threads, "affinity_count", lambda: 64)
    assert threads.default_inter_op_threads() == threads.MAX_DEFAULT_INTER_OP
