"""Stage 2: shuffle, prefetch, filter, zip, concatenate, flat_map, interleave, padded_batch,
cache, unbatch, shard — each against a plain Python expectation."""

import threading

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.runtime.kernels.cpu.dataset_transforms  # noqa: F401 - registers kernels
from tests.data_pipeline.helpers import Dataset, drain, values


def ints(ds) -> list:
    return [int(v) for v in values(ds)]


def test_filter():
    assert ints(Dataset.range(10).filter(lambda x: tf.equal(x % 3, 0))) == [0, 3, 6, 9]
    with pytest.raises(ValueError, match="scalar boolean"):
        Dataset.range(3).filter(lambda x: x)


def test_zip_stops_at_shortest_and_keeps_structure():
    a, b = Dataset.range(5), Dataset.range(10, 13).map(lambda x: (x, x * 2))
    out = values(Dataset.zip((a, b)))
    assert [(int(x), int(y[0]), int(y[1])) for x, y in out] == [(0, 10, 20), (1, 11, 22),
                                                               (2, 12, 24)]
    d = values(Dataset.zip({"p": a, "q": b}))
    assert int(d[1]["p"]) == 1 and int(d[1]["q"][1]) == 22


def test_concatenate():
    assert ints(Dataset.range(3).concatenate(Dataset.range(7, 9))) == [0, 1, 2, 7, 8]
    with pytest.raises(TypeError):
        Dataset.range(3).concatenate(Dataset.from_tensors(np.float32(1)))


def test_flat_map():
    ds = Dataset.range(1, 4).flat_map(lambda x: Dataset.range(x).map(lambda y: y * 10 + x))
    assert ints(ds) == [1, 2, 12, 3, 13, 23]


def test_interleave_matches_tf_order():
    # TF doc example: range(1, 6) interleaved, each repeated 6 times, cycle 2, block 4
    ds = Dataset.range(1, 6).interleave(
        lambda x: Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    expect = [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4,
              5, 5, 5, 5, 5, 5]
    assert ints(ds) == expect


def test_padded_batch():
    ds = Dataset.range(1, 5).map(lambda x: tf.fill([x], x))
    out = values(ds.padded_batch(2, padded_shapes=[None]))
    np.testing.assert_array_equal(out[0], [[1, 0], [2, 2]])
    np.testing.assert_array_equal(out[1], [[3, 3, 3, 0], [4, 4, 4, 4]])
    fixed = values(ds.padded_batch(3, padded_shapes=[5], padding_values=np.int64(-1)))
    np.testing.assert_array_equal(fixed[1], [[4, 4, 4, 4, -1]])
    assert ds.padded_batch(2, [None]).output_shapes.as_list() == [None, None]


def test_unbatch_inverts_batch():
    x = np.arange(14).reshape(7, 2)
    out = values(Dataset.from_tensor_slices(x).batch(3).unbatch())
    np.testing.assert_array_equal(np.stack(out), x)


def test_shard():
    assert ints(Dataset.range(10).shard(3, 1)) == [1, 4, 7]
    nx = Dataset.range(10).shard(3, 3).make_one_shot_iterator().get_next()
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError, match="Index"):
        s.run(nx)


def test_cache_replays_first_pass():
    calls = []

    def note(v):
        calls.append(int(v))
        return v

    ds = Dataset.range(4).map(lambda x: tf.py_func(note, [x], tf.int64)).cache().repeat(3)
    assert ints(ds) == [0, 1, 2, 3] * 3
    assert calls == [0, 1, 2, 3]


def test_shuffle_is_permutation_and_seeded_deterministic():
    def run(seed, epochs=2):
        return ints(Dataset.range(50).shuffle(10, seed=seed).repeat(epochs))

    a, b = run(7), run(7)
    assert a == b
    assert sorted(a[:50]) == list(range(50)) and sorted(a[50:]) == list(range(50))
    assert a[:50] != list(range(50))
    assert a[:50] != a[50:]          # reshuffled each iteration
    assert run(8) != a
    same = ints(Dataset.range(20).shuffle(5, seed=1, reshuffle_each_iteration=False).repeat(2))
    assert same[:20] == same[20:]


def test_shuffle_buffer_bounds_displacement():
    # with a buffer of B an element can come out at most B-1 positions early
    out = ints(Dataset.range(200).shuffle(4, seed=3))
    assert all(pos >= v - 3 for pos, v in enumerate(out))


def test_shuffle_graph_seed():
    g = tf.Graph()
    with g.as_default():
        g.seed = 5
        a = ints(Dataset.range(30).shuffle(30))
    g2 = tf.Graph()
    with g2.as_default():
        g2.seed = 5
        b = ints(Dataset.range(30).shuffle(30))
    assert a == b


def _prefetch_threads():
    return [t for t in threading.enumerate() if t.name == "tw-data-prefetch" and t.is_alive()]


def test_prefetch_values_and_thread_stops_when_session_closes():
    before = len(_prefetch_threads())
    nx = Dataset.range(1000).map(lambda x: x + 1).prefetch(3).make_one_shot_iterator().get_next()
    sess = tf.Session()
    assert [int(sess.run(nx)) for _ in range(5)] == [1, 2, 3, 4, 5]
    assert len(_prefetch_threads()) == before + 1
    sess.close()
    assert len(_prefetch_threads()) == before
    assert ints(Dataset.range(7).prefetch(2)) == list(range(7))


def test_prefetch_thread_stops_on_reinitialize_and_end():
    it = Dataset.range(100).prefetch(1).make_initializable_iterator()
    nx = it.get_next()
    before = len(_prefetch_threads())
    with tf.Session() as s:
        s.run(it.initializer)
        s.run(nx)
        s.run(it.initializer)
        assert len(_prefetch_threads()) == before + 1
        assert len(drain(s, nx)) == 100
        assert len(_prefetch_threads()) == before


def test_prefetch_passes_errors_through():
    def bad(v):
        if v == 2:
            raise ValueError("boom")
        return v

    ds = Dataset.range(5).map(lambda x: tf.py_func(bad, [x], tf.int64)).prefetch(2)
    nx = ds.make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert [int(s.run(nx)) for _ in range(2)] == [0, 1]
        with pytest.raises(tf.errors.InvalidArgumentError, match="element 2"):
            s.run(nx)


def test_parallel_map_threads_stop_when_session_closes():
    def alive():
        return [t for t in threading.enumerate() if t.name.startswith("tw-data-map")]

    before = len(alive())
    nx = Dataset.range(100).map(lambda x: x + 1, num_parallel_calls=3) \
        .make_one_shot_iterator().get_next()
    sess = tf.Session()
    assert int(sess.run(nx)) == 1
    assert len(alive()) > before
    sess.close()
    assert len(alive()) == before


def test_file_cache_persists_across_graphs_and_skips_partial_passes(tmp_path):
    import numpy as np

    import tensorweave as tf

    path = str(tmp_path / "cache")

    def values(ds, limit=None):
        nxt = tf.data.make_one_shot_iterator(ds).get_next()
        out = []
        with tf.Session() as s:
            try:
                while limit is None or len(out) < limit:
                    out.append(s.run(nxt))
            except tf.errors.OutOfRangeError:
                pass
        return out

    with tf.Graph().as_default():
        partial = values(tf.data.Dataset.range(5).cache(path), limit=2)
    assert len(partial) == 2 and not (tmp_path / "cache").exists()  # nothing half-written
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices(
            ({"n": np.arange(4)}, [b"a", b"bb", b"c", b"d"])).cache(path)
        first = values(ds)
    assert (tmp_path / "cache").exists()
    with tf.Graph().as_default():  # a different input: the cache file wins, as in TF
        ds = tf.data.Dataset.from_tensor_slices(
            ({"n": np.arange(10, 14)}, [b"x", b"y", b"z", b"w"])).cache(path)
        again = values(ds)
    assert [(e[0]["n"], e[1]) for e in again] == [(e[0]["n"], e[1]) for e in first]
    assert again[1][1] == b"bb"
