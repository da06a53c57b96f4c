"""Stage 1: sources, map/batch/repeat/take/skip, one-shot and initializable iterators."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.data.iterator import Iterator
from tests.data_pipeline.helpers import Dataset, drain, values


def test_range_forms():
    assert [int(v) for v in values(Dataset.range(5))] == [0, 1, 2, 3, 4]
    assert [int(v) for v in values(Dataset.range(2, 11, 3))] == [2, 5, 8]
    assert values(Dataset.range(3)) and values(Dataset.range(3))[0].dtype == np.int64


def test_from_tensor_slices_tuple_and_dict():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = np.array([1, 2, 3, 4], dtype=np.int32)
    out = values(Dataset.from_tensor_slices((x, y)))
    assert len(out) == 4
    for i, (a, b) in enumerate(out):
        np.testing.assert_array_equal(a, x[i])
        assert b == y[i] and b.dtype == np.int32
    d = values(Dataset.from_tensor_slices({"b": y, "a": x}))
    assert set(d[2]) == {"a", "b"} and d[2]["b"] == 3
    np.testing.assert_array_equal(d[2]["a"], x[2])


def test_output_types_and_shapes():
    ds = Dataset.from_tensor_slices((np.zeros((5, 2, 3), np.float32), np.zeros(5, np.int64)))
    assert ds.output_types == (tf.float32, tf.int64)
    assert ds.output_shapes[0].as_list() == [2, 3] and ds.output_shapes[1].as_list() == []
    b = ds.batch(2, drop_remainder=True)
    assert b.output_shapes[0].as_list() == [2, 2, 3]
    assert ds.batch(2).output_shapes[0].as_list() == [None, 2, 3]


def test_from_tensors_single_element():
    out = values(Dataset.from_tensors(np.array([1, 2, 3])))
    assert len(out) == 1
    np.testing.assert_array_equal(out[0], [1, 2, 3])


def test_map_batch_against_python():
    ds = Dataset.range(10).map(lambda x: x * 2 + 1).batch(4)
    out = values(ds)
    expect = [2 * i + 1 for i in range(10)]
    assert [list(b) for b in out] == [expect[0:4], expect[4:8], expect[8:10]]
    dropped = values(Dataset.range(10).batch(4, drop_remainder=True))
    assert len(dropped) == 2


def test_map_with_captured_outer_tensor_and_structure():
    offset = tf.constant(100, dtype=tf.int64)
    scale = tf.placeholder(tf.int64, [])
    ds = Dataset.range(4).map(lambda x: {"v": x + offset, "w": (x * scale, x)})
    it = ds.make_initializable_iterator()
    nx = it.get_next()
    with tf.Session() as s:
        s.run(it.initializer, feed_dict={scale: 3})
        out = drain(s, nx)
    assert [int(o["v"]) for o in out] == [100, 101, 102, 103]
    assert [int(o["w"][0]) for o in out] == [0, 3, 6, 9]


def test_repeat_take_skip():
    assert [int(v) for v in values(Dataset.range(3).repeat(2))] == [0, 1, 2, 0, 1, 2]
    assert [int(v) for v in values(Dataset.range(3).repeat().take(7))] == [0, 1, 2, 0, 1, 2, 0]
    assert [int(v) for v in values(Dataset.range(6).skip(4))] == [4, 5]
    assert values(Dataset.range(6).skip(-1)) == []
    assert [int(v) for v in values(Dataset.range(6).take(-1))] == list(range(6))
    assert values(Dataset.range(0).repeat()) == []


def test_out_of_range_at_end_and_after():
    nx = Dataset.range(2).make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert s.run(nx) == 0 and s.run(nx) == 1
        for _ in range(2):
            with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
                s.run(nx)


def test_initializable_iterator_reinitialized_with_new_feeds():
    x = tf.placeholder(tf.float32, [None, 2])
    it = Dataset.from_tensor_slices(x).map(lambda r: r * 2.0).make_initializable_iterator()
    nx = it.get_next()
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    b = np.ones((2, 2), np.float32)
    with tf.Session() as s:
        with pytest.raises(tf.errors.FailedPreconditionError):
            s.run(nx)
        s.run(it.initializer, feed_dict={x: a})
        first = s.run(nx)
        np.testing.assert_array_equal(first, a[0] * 2)
        s.run(it.initializer, feed_dict={x: b})
        out = drain(s, nx)
    np.testing.assert_array_equal(np.stack(out), b * 2)


def test_fed_arrays_never_enter_graph_def():
    big = np.random.RandomState(0).rand(1000, 10).astype(np.float32)
    x = tf.placeholder(tf.float32, big.shape)
    it = Dataset.from_tensor_slices(x).batch(100).make_initializable_iterator()
    nx = it.get_next()
    gd = tf.get_default_graph().as_graph_def()
    assert len(gd.SerializeToString()) < 20000
    with tf.Session() as s:
        s.run(it.initializer, feed_dict={x: big})
        np.testing.assert_array_equal(np.concatenate(drain(s, nx)), big)


def test_parallel_map_keeps_order():
    import time

    def slow(x):
        # later elements finish first: a sloppy map would reorder them
        return tf.py_func(lambda v: (time.sleep(0.002 * (5 - v % 5)), v)[1], [x], tf.int64)

    ds = Dataset.range(20).map(slow, num_parallel_calls=4)
    assert [int(v) for v in values(ds)] == list(range(20))
    auto = Dataset.range(20).map(lambda x: x * 3, num_parallel_calls=-1)
    assert [int(v) for v in values(auto)] == [3 * i for i in range(20)]


def test_map_error_names_element_position():
    x = tf.placeholder(tf.int64, [None])

    def check(v):
        return tf.py_func(lambda a: a if a != 7 else np.int64(1) // 0 and a, [v], tf.int64)

    def boom(a):
        if a == 3:
            raise ValueError("bad value")
        return a

    it = Dataset.from_tensor_slices(x).map(
        lambda v: tf.py_func(boom, [v], tf.int64)).make_initializable_iterator()
    nx = it.get_next()
    with tf.Session() as s:
        s.run(it.initializer, feed_dict={x: np.arange(6)})
        assert [int(s.run(nx)) for _ in range(3)] == [0, 1, 2]
        with pytest.raises(tf.errors.InvalidArgumentError, match="element 3"):
            s.run(nx)
    del check


def test_iterator_from_structure_reused_across_datasets():
    it = Iterator.from_structure(tf.int64, [])
    nx = it.get_next()
    init_a = it.make_initializer(Dataset.range(3))
    init_b = it.make_initializer(Dataset.range(10, 12))
    with tf.Session() as s:
        s.run(init_a)
        assert [int(v) for v in drain(s, nx)] == [0, 1, 2]
        s.run(init_b)
        assert [int(v) for v in drain(s, nx)] == [10, 11]
    with pytest.raises(TypeError):
        it.make_initializer(Dataset.from_tensors(np.float32(1)))


def test_shared_name_iterator_shared_between_ops():
    ds = Dataset.range(4)
    it1 = ds.make_initializable_iterator(shared_name="shared_it")
    it2 = Iterator.from_structure(tf.int64, [], shared_name="shared_it")
    with tf.Session() as s:
        s.run(it1.initializer)
        assert s.run(it1.get_next()) == 0
        assert s.run(it2.get_next()) == 1
