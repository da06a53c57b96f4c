"""Queue semantics: FIFO order, blocking with deadlines, close, shuffle and padding queues."""

import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.data.queues import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from tensorweave.runtime.kernels.cpu import queues as _kernels  # noqa: F401

FAST = tf.RunOptions(timeout_in_ms=200)


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_fifo_order_names_and_shapes(graph):
    q = FIFOQueue(10, [tf.float32, tf.int32], shapes=[[2], []])
    enq = q.enqueue_many([np.arange(6, dtype=np.float32).reshape(3, 2), [7, 8, 9]])
    x, y = q.dequeue()
    xs, ys = q.dequeue_many(2)
    assert q.name == "fifo_queue"
    assert enq.name == "fifo_queue_EnqueueMany" and x.op.name == "fifo_queue_Dequeue"
    assert x.shape.as_tuple() == (2,) and xs.shape.as_tuple() == (2, 2)
    with tf.Session() as s:
        s.run(enq)
        assert s.run(q.size()) == 3
        a, b = s.run([x, y])
        np.testing.assert_array_equal(a, [0, 1])
        assert b == 7
        a, b = s.run([xs, ys])
        np.testing.assert_array_equal(a, [[2, 3], [4, 5]])
        np.testing.assert_array_equal(b, [8, 9])
        assert s.run(q.size()) == 0


def test_single_component_and_names(graph):
    q = FIFOQueue(5, tf.int32, shapes=[[]])
    d = q.dequeue()
    assert isinstance(d, tf.Tensor)
    qn = FIFOQueue(5, [tf.int32, tf.float32], names=["a", "b"], name="named")
    en = qn.enqueue({"a": 1, "b": 2.0})
    dn = qn.dequeue()
    with tf.Session() as s:
        s.run(q.enqueue(4))
        assert s.run(d) == 4
        s.run(en)
        out = s.run(dn)
        assert out["a"] == 1 and out["b"] == 2.0


def test_empty_dequeue_honours_deadline(graph):
    q = FIFOQueue(2, tf.int32)
    d = q.dequeue()
    with tf.Session() as s:
        t0 = time.monotonic()
        with pytest.raises(errors.DeadlineExceededError):
            s.run(d, options=FAST)
        assert time.monotonic() - t0 < 2.0


def test_full_enqueue_blocks_until_dequeue(graph):
    q = FIFOQueue(2, tf.int32, shapes=[[]])
    enq = q.enqueue_many([[1, 2]])
    one = q.enqueue(3)
    d = q.dequeue()
    with tf.Session() as s:
        s.run(enq)
        with pytest.raises(errors.DeadlineExceededError):
            s.run(one, options=FAST)
        th = threading.Thread(target=lambda: s.run(one, options=tf.RunOptions(
            timeout_in_ms=5000)))
        th.start()
        time.sleep(0.1)
        assert s.run(d) == 1
        th.join(5)
        assert not th.is_alive()
        assert [s.run(d), s.run(d)] == [2, 3]


def test_closed_and_drained_raises_out_of_range(graph):
    q = FIFOQueue(5, tf.int32, shapes=[[]])
    enq = q.enqueue_many([[1, 2, 3]])
    d, dm, du = q.dequeue(), q.dequeue_many(2), q.dequeue_up_to(2)
    with tf.Session() as s:
        s.run(enq)
        s.run(q.close())
        assert s.run(q.is_closed())
        with pytest.raises(errors.CancelledError, match="is closed"):
            s.run(enq)
        np.testing.assert_array_equal(s.run(dm), [1, 2])
        with pytest.raises(errors.OutOfRangeError, match=r"requested 2, current size 1"):
            s.run(dm)
        np.testing.assert_array_equal(s.run(du), [3])
        with pytest.raises(errors.OutOfRangeError) as ex:
            s.run(d)
        assert ("FIFOQueue '_" in ex.value.message and "_fifo_queue' is closed and has "
                "insufficient elements (requested 1, current size 0)" in ex.value.message)


def test_close_wakes_blocked_dequeue(graph):
    q = FIFOQueue(5, tf.int32)
    d = q.dequeue()
    c = q.close()
    seen = []
    with tf.Session() as s:
        def worker():
            try:
                s.run(d, options=tf.RunOptions(timeout_in_ms=5000))
            except errors.OpError as e:
                seen.append(type(e))
        th = threading.Thread(target=worker)
        th.start()
        time.sleep(0.1)
        s.run(c)
        th.join(5)
    assert seen == [errors.OutOfRangeError]


def test_cancel_pending_enqueues(graph):
    q = FIFOQueue(1, tf.int32, shapes=[[]])
    e1, e2 = q.enqueue(1), q.enqueue(2)
    seen = []
    with tf.Session() as s:
        s.run(e1)

        def worker():
            try:
                s.run(e2, options=tf.RunOptions(timeout_in_ms=5000))
            except errors.OpError as e:
                seen.append(type(e))
        th = threading.Thread(target=worker)
        th.start()
        time.sleep(0.1)
        s.run(q.close(cancel_pending_enqueues=True))
        th.join(5)
        assert s.run(q.size()) == 1
    assert seen == [errors.CancelledError]


def test_queue_shared_by_name_within_session(graph):
    a = FIFOQueue(5, tf.int32, shapes=[[]], shared_name="shared")
    b = FIFOQueue(5, tf.int32, shapes=[[]], shared_name="shared", name="other")
    with tf.Session() as s:
        s.run(a.enqueue(42))
        assert s.run(b.dequeue()) == 42
    with tf.Session() as s:   # a new session holds a new queue
        assert s.run(b.size()) == 0


def test_enqueue_shape_checked_at_construction(graph):
    q = FIFOQueue(5, tf.float32, shapes=[[2]])
    with pytest.raises(ValueError):
        q.enqueue(np.zeros(3, np.float32))


def test_random_shuffle_min_after_dequeue(graph):
    q = RandomShuffleQueue(10, 3, tf.int32, shapes=[[]], seed=7)
    enq = q.enqueue_many([np.arange(5, dtype=np.int32)])
    dm = q.dequeue_many(2)
    with tf.Session() as s:
        s.run(enq)
        first = list(s.run(dm))
        with pytest.raises(errors.DeadlineExceededError):   # 3 left = min_after_dequeue
            s.run(q.dequeue(), options=FAST)
        s.run(q.close())
        rest = list(s.run(q.dequeue_up_to(10)))
        assert sorted(first + rest) == [0, 1, 2, 3, 4]
        with pytest.raises(errors.OutOfRangeError, match="RandomShuffleQueue"):
            s.run(q.dequeue())


def test_random_shuffle_actually_shuffles_and_is_seeded(graph):
    def draw():
        with tf.Graph().as_default():
            q = RandomShuffleQueue(100, 0, tf.int32, shapes=[[]], seed=3)
            enq = q.enqueue_many([np.arange(50, dtype=np.int32)])
            with tf.Session() as s:
                s.run(enq)
                return list(s.run(q.dequeue_many(50)))
    a, b = draw(), draw()
    assert sorted(a) == list(range(50)) and a != list(range(50))
    assert a == b


def test_padding_fifo_queue_pads(graph):
    q = PaddingFIFOQueue(5, [tf.int32, tf.string], shapes=[[None], []])
    e1 = q.enqueue([[1, 2, 3], "a"])
    e2 = q.enqueue([[4], "b"])
    x, y = q.dequeue_many(2)
    assert x.shape.as_tuple() == (2, None)
    with tf.Session() as s:
        s.run([e1])
        s.run([e2])
        xv, yv = s.run([x, y])
    np.testing.assert_array_equal(xv, [[1, 2, 3], [4, 0, 0]])
    assert list(yv) == [b"a", b"b"]
    with pytest.raises(ValueError):
        PaddingFIFOQueue(5, [tf.int32], shapes=None)


def test_session_close_cancels_waiters(graph):
    q = FIFOQueue(5, tf.int32)
    d = q.dequeue()
    seen = []
    s = tf.Session()

    def worker():
        try:
            s.run(d, options=tf.RunOptions(timeout_in_ms=5000))
        except errors.OpError as e:
            seen.append(type(e))
    th = threading.Thread(target=worker)
    th.start()
    time.sleep(0.2)
    s.close()
    th.join(5)
    assert not th.is_alive()
    assert seen == [errors.CancelledError]


# -- shapes as TF reads them (data_flow_ops._as_shape_list; messages from TF 2.21) ----------
def test_a_flat_list_of_ints_is_one_shape(graph):
    assert FIFOQueue(4, tf.float32, shapes=[28, 28]).shapes == [tf.TensorShape([28, 28])]
    assert FIFOQueue(4, tf.float32, shapes=[]).shapes == [tf.TensorShape([])]
    assert RandomShuffleQueue(4, 1, tf.float32, shapes=[3]).shapes == [tf.TensorShape([3])]
    q = FIFOQueue(4, tf.float32, shapes=[28, 28])
    assert q.dequeue().shape.as_tuple() == (28, 28)
    two = FIFOQueue(4, [tf.float32, tf.int32], shapes=[[2], []])
    assert two.shapes == [tf.TensorShape([2]), tf.TensorShape([])]


def test_queue_shape_errors_are_tfs(graph):
    with pytest.raises(ValueError, match=r"^Queue shapes must have the same length as dtypes, "
                                         r"received len\(shapes\)=1, len\(dtypes\)=2$"):
        FIFOQueue(4, [tf.float32, tf.int32], shapes=[28, 28])
    with pytest.raises(ValueError, match=r"^All shapes must be fully defined: "
                                         r"\[TensorShape\(\[None\]\)\]$"):
        FIFOQueue(4, tf.float32, shapes=[None])
    for shapes in ([28], [None], []):
        with pytest.raises(ValueError, match="^When providing partial shapes, a list of "
                                             "shapes must be provided.$"):
            PaddingFIFOQueue(4, tf.float32, shapes=shapes)
    assert PaddingFIFOQueue(4, tf.float32, shapes=[[None]]).shapes == [tf.TensorShape([None])]
    with pytest.raises(TypeError, match="shapes must be a TensorShape or a list"):
        FIFOQueue(4, tf.float32, shapes=3)
