"""DynamicStitch / DynamicPartition / ReverseSequence: API, static shapes, errors."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.sequence_ops import reverse_sequence
from tensorweave.ops.shape_inference import constant_value
from tensorweave.ops.stitch_ops import dynamic_partition, dynamic_stitch


def _run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_dynamic_stitch_doc_example_and_last_wins():
    with tf.Graph().as_default():
        merged = dynamic_stitch([6, [4, 1], [[5, 2], [0, 3]]],
                                [[61., 62.], [[41., 42.], [11., 12.]],
                                 [[[51., 52.], [21., 22.]], [[1., 2.], [31., 32.]]]])
        assert merged.shape.as_list() == [7, 2]
        assert merged.op.name == "DynamicStitch"
        np.testing.assert_array_equal(_run(merged), [[1, 2], [11, 12], [21, 22], [31, 32],
                                                     [41, 42], [51, 52], [61, 62]])
        dup = dynamic_stitch([[0, 1], [1]], [[1., 2.], [9.]])
        np.testing.assert_array_equal(_run(dup), [1., 9.])


def test_dynamic_stitch_constant_folds_reduced_shape():
    """TF's reduced_shape: stitch([range(rank), axes], [shape, ones]) → shape with 1s."""
    with tf.Graph().as_default():
        out = dynamic_stitch([tf.range(3), tf.constant([1])],
                             [tf.constant([2, 5, 7]), tf.constant([1])])
        np.testing.assert_array_equal(constant_value(out), [2, 1, 7])
        x = tf.placeholder(tf.float32, [None, 5, 7])
        r = tf.reshape(tf.reduce_sum(x, 1), dynamic_stitch(
            [tf.range(3), tf.constant([1])], [tf.shape(x), tf.constant([1])]))
        assert _run(r, {x: np.ones([2, 5, 7])}).shape == (2, 1, 7)


def test_dynamic_stitch_unknown_index_gives_unknown_first_dim():
    with tf.Graph().as_default():
        i = tf.placeholder(tf.int32, [3])
        out = dynamic_stitch([i, [0]], [tf.zeros([3, 4]), tf.zeros([1, 4])])
        assert out.shape.as_list() == [None, 4]
        got = _run(out, {i: [2, 1, 4]})
        assert got.shape == (5, 4)


def test_dynamic_stitch_shape_errors_at_construction():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="DynamicStitch"):
            dynamic_stitch([[0, 1], [2]], [tf.zeros([2, 3]), tf.zeros([1, 4])])
        with pytest.raises(ValueError, match="must be equal"):
            dynamic_stitch([[0, 1]], [tf.zeros([3, 3])])


def test_dynamic_stitch_runtime_errors():
    with tf.Graph().as_default():
        i = tf.placeholder(tf.int32)
        out = dynamic_stitch([i], [tf.placeholder_with_default(np.ones([2, 3], np.float32),
                                                                None)])
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not start with"):
            _run(out, {i: [0, 1, 2]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
            _run(out, {i: [0, -1]})


def test_dynamic_stitch_gradient_gathers_rows():
    with tf.Graph().as_default():
        a, b = tf.constant([[1., 2.], [3., 4.]]), tf.constant([[5., 6.]])
        merged = dynamic_stitch([[2, 0], [1]], [a, b])
        ga, gb = tf.gradients(merged * [[1.], [10.], [100.]], [a, b])
        ga, gb = _run([ga, gb])
        np.testing.assert_array_equal(ga, [[100, 100], [1, 1]])
        np.testing.assert_array_equal(gb, [[10, 10]])


def test_dynamic_partition_roundtrip_with_stitch():
    with tf.Graph().as_default():
        data = tf.constant(np.arange(10, dtype=np.float32))
        parts = tf.constant([0, 2, 1, 0, 2, 2, 1, 0, 0, 1])
        outs = dynamic_partition(data, parts, 3)
        assert len(outs) == 3 and outs[0].shape.as_list() == [None]
        idx = dynamic_partition(tf.range(10), parts, 3)
        back = dynamic_stitch(idx, outs)
        got = _run(outs + [back])
        np.testing.assert_array_equal(got[0], [0, 3, 7, 8])
        np.testing.assert_array_equal(got[3], np.arange(10))
        bad = dynamic_partition(data, tf.placeholder(tf.int32, [10]), 3)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"partitions\[2\] = 3"):
            _run(bad, {bad[0].op.inputs[1]: [0, 1, 3, 0, 0, 0, 0, 0, 0, 0]})


def test_reverse_sequence_api_and_errors():
    with tf.Graph().as_default():
        x = tf.constant([[1, 2, 3, 4, 5, 0, 0, 0], [1, 2, 0, 0, 0, 0, 0, 0],
                         [1, 2, 3, 4, 0, 0, 0, 0], [1, 2, 3, 4, 5, 6, 7, 8]])
        out = reverse_sequence(x, [7, 2, 3, 5], seq_axis=1, batch_axis=0)
        assert out.op.type == "ReverseSequence" and out.op.get_attr("Tlen") == tf.int64
        np.testing.assert_array_equal(_run(out), [[0, 0, 5, 4, 3, 2, 1, 0],
                                                  [2, 1, 0, 0, 0, 0, 0, 0],
                                                  [3, 2, 1, 4, 0, 0, 0, 0],
                                                  [5, 4, 3, 2, 1, 6, 7, 8]])
        with pytest.raises(ValueError, match="Dimension"):
            reverse_sequence(x, [1, 2, 3], seq_axis=1, batch_axis=0)
        with pytest.raises(ValueError, match="seq_dim must be < input rank"):
            reverse_sequence(x, [1, 2, 3, 4], seq_axis=2, batch_axis=0)
        with pytest.raises(ValueError, match="Cannot specify both"):
            reverse_sequence(x, [1, 2, 3, 4], seq_axis=1, seq_dim=1)
        n = tf.placeholder(tf.int64, [4])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"seq_lens\(1\) > input"):
            _run(reverse_sequence(x, n, 1, 0), {n: [1, 9, 1, 1]})


def test_runs_a_tf_written_sum_gradient_graph_with_dynamic_stitch():
    """tests/data/sum_grad_stitch.pb (make_stitch_expected.py): TF's reduce_sum gradient on an
    unknown-shape input uses DynamicStitch for `reduced_shape`."""
    from pathlib import Path

    from tensorweave.ops.importer import import_graph_def
    from tensorweave.proto import graph_pb2

    data = Path(__file__).resolve().parents[1] / "data"
    gd = graph_pb2.GraphDef()
    gd.ParseFromString((data / "sum_grad_stitch.pb").read_bytes())
    assert "DynamicStitch" in {n.op for n in gd.node}
    want = np.load(data / "sum_grad_stitch.npz")
    with tf.Graph().as_default():
        import_graph_def(gd, name="")
        with tf.Session() as sess:
            got = sess.run("g:0", {"x:0": want["x"], "axes:0": want["axes"]})
    np.testing.assert_allclose(got, want["g"], rtol=1e-6)
