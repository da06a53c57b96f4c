"""Session.run: fetch structures, feeds, errors, callables, metadata, lifetime."""

import collections

import numpy as np
import pytest

import tensorweave as tf


def _add_graph():
    a = tf.placeholder(tf.float32, [None, 3], name="a")
    b = a + 1.0
    return a, b


def test_fetch_structures_come_back_in_shape():
    a, b = _add_graph()
    P = collections.namedtuple("P", "x y")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Session() as s:
        out = s.run({"b": b, "pair": P(a, [b, (a,)])}, {a: x})
    assert isinstance(out["pair"], P)
    np.testing.assert_array_equal(out["b"], x + 1)
    np.testing.assert_array_equal(out["pair"].x, x)
    assert isinstance(out["pair"].y, list) and isinstance(out["pair"].y[1], tuple)


def test_fetch_by_name_and_feed_by_name():
    a, b = _add_graph()
    with tf.Session() as s:
        got = s.run("add:0", {"a:0": np.zeros((1, 3))})
    np.testing.assert_array_equal(got, np.ones((1, 3), np.float32))
    assert got.dtype == np.float32


def test_operation_fetch_returns_none():
    a, b = _add_graph()
    with tf.Session() as s:
        assert s.run(b.op, {a: np.zeros((1, 3))}) is None


def test_scalar_result_is_numpy_scalar():
    c = tf.constant(2.0) + 1.0
    with tf.Session() as s:
        v = s.run(c)
    assert isinstance(v, np.float32) and v == 3.0


def test_any_tensor_can_be_fed_and_prunes_its_inputs():
    a, b = _add_graph()
    c = b + 2.0
    with tf.Session() as s:
        # a is not fed: feeding b cuts it off, so no placeholder error
        np.testing.assert_array_equal(s.run(c, {b: np.ones((2, 3))}), 3 * np.ones((2, 3)))


def test_unknown_fetch_is_value_error_with_tfs_message():
    """TF 2.21's classes and messages (the graph's KeyError becomes a ValueError, its text
    quoted once)."""
    _add_graph()
    with tf.Session() as s:
        with pytest.raises(ValueError) as e:
            s.run("nope:0")
        assert str(e.value) == (
            "Argument `fetch` = nope:0 cannot be interpreted as a Tensor. (\"The name "
            "'nope:0' refers to a Tensor which does not exist. The operation, 'nope', does "
            "not exist in the graph.\")")
        with pytest.raises(ValueError, match=r"^Argument `fetch` = nope cannot be interpreted "
                                             r"as a Tensor. \(\"The name 'nope' refers to an "
                                             r"Operation not in the graph.\"\)$"):
            s.run(["a:0", "nope"])
        with pytest.raises(TypeError, match=r'^Argument `fetch` = 3.5 has invalid type "float" '
                                            r"must be a string or Tensor. \(Can not convert a "
                                            r"float into a Tensor or Operation.\)$"):
            s.run(3.5)
        with pytest.raises(TypeError, match='^Argument `fetch` = None has invalid type '
                                            '"NoneType". Cannot be None$'):
            s.run(None)


def test_feed_shape_mismatch_is_value_error():
    a, b = _add_graph()
    with tf.Session() as s, pytest.raises(ValueError, match=r"Cannot feed value of shape"):
        s.run(b, {a: np.zeros((2, 4))})


def test_feed_value_converted_to_dtype():
    a, b = _add_graph()
    with tf.Session() as s:
        out = s.run(b, {a: [[1, 2, 3]]})
    assert out.dtype == np.float32


def test_feed_tensor_value_rejected():
    a, b = _add_graph()
    with tf.Session() as s, pytest.raises(TypeError, match="cannot be a tf.Tensor"):
        s.run(b, {a: b})


def test_unfed_placeholder_names_it_and_the_chain():
    a, b = _add_graph()
    c = tf.identity(b, name="out")
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError) as e:
        s.run(c)
    msg = str(e.value)
    assert "placeholder tensor 'a'" in msg
    assert "a (Placeholder) -> add (AddV2) -> out (Identity) -> (fetch)" in msg
    assert "test_session.py" in msg  # where the user created it


def test_fetch_of_fed_tensor_returns_feed():
    a, b = _add_graph()
    x = np.ones((1, 3), np.float32)
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(a, {a: x}), x)


def test_nothing_to_fetch():
    with tf.Session() as s, pytest.raises(TypeError):
        s.run(None)
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError, match="at least one"):
        s.run([])


def test_closed_session_raises():
    s = tf.Session()
    s.close()
    with pytest.raises(RuntimeError, match="closed"):
        s.run(tf.constant(1))


def test_graph_grows_after_run():
    a, b = _add_graph()
    with tf.Session() as s:
        s.run(b, {a: np.zeros((1, 3))})
        c = b + 5.0
        np.testing.assert_array_equal(s.run(c, {a: np.zeros((1, 3))}), 6 * np.ones((1, 3)))


def test_fetched_constant_is_not_aliased():
    c = tf.constant([1.0, 2.0])
    with tf.Session() as s:
        v = s.run(c)
        v[0] = 100.0
        np.testing.assert_array_equal(s.run(c), [1.0, 2.0])


def test_make_callable():
    a, b = _add_graph()
    with tf.Session() as s:
        f = s.make_callable([b], [a])
        out = f(np.ones((2, 3)))
    np.testing.assert_array_equal(out[0], 2 * np.ones((2, 3)))


def test_eval_and_run_use_default_session():
    a, b = _add_graph()
    with tf.Session():
        np.testing.assert_array_equal(b.eval({a: np.zeros((1, 3))}), np.ones((1, 3)))
    with pytest.raises(ValueError, match="No default session"):
        b.eval({a: np.zeros((1, 3))})


def test_interactive_session_installs_itself():
    c = tf.constant(3)
    s = tf.InteractiveSession()
    try:
        assert c.eval() == 3
    finally:
        s.close()


def test_run_metadata_has_step_stats_per_node():
    a, b = _add_graph()
    meta = tf.RunMetadata()
    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session() as s:
        s.run(b, {a: np.zeros((4, 3))}, options=opts, run_metadata=meta)
    nodes = {n.node_name: n for d in meta.step_stats.dev_stats for n in d.node_stats}
    assert "add" in nodes
    out = nodes["add"].output[0].tensor_description
    assert [d.size for d in out.shape.dim] == [4, 3]
    assert out.allocation_description.requested_bytes == 48
    assert nodes["add"].all_start_micros > 0


def test_partition_graphs_in_metadata():
    a, b = _add_graph()
    meta = tf.RunMetadata()
    opts = tf.RunOptions(output_partition_graphs=True)
    with tf.Session() as s:
        s.run(b, {a: np.zeros((1, 3))}, options=opts, run_metadata=meta)
    ops = {n.op for g in meta.partition_graphs for n in g.node}
    assert {"_Arg", "_Retval", "AddV2"} <= ops and "Placeholder" not in ops


def test_list_devices():
    with tf.Session() as s:
        devs = s.list_devices()
    assert devs[0].name == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert devs[0].device_type == "CPU"


def test_config_proto_accepted():
    cfg = tf.ConfigProto(inter_op_parallelism_threads=2, allow_soft_placement=True)
    with tf.Session(config=cfg) as s:
        assert s.run(tf.constant(1) + 1) == 2


def test_a_nested_tuple_key_feeds_each_tensor_from_the_same_structure():
    """TF's nest.flatten_dict_items: an RNN state tuple fed as one key (char-rnn does)."""
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(2) for _ in range(2)])
        state = cell.zero_state(1, tf.float32)
        total = tf.add_n([tf.reduce_sum(t) for t in tf.nest.flatten(state)])
        value = tuple(tf.nn.rnn_cell.LSTMStateTuple(np.full((1, 2), c, np.float32),
                                                    np.full((1, 2), h, np.float32))
                      for c, h in ((1.0, 2.0), (3.0, 4.0)))
        with tf.Session() as sess:
            assert sess.run(total, {state: value}) == 20.0
            with pytest.raises(ValueError, match="Key had 4 elements, but value had 2"):
                sess.run(total, {state: (np.zeros((1, 2)), np.zeros((1, 2)))})
            with pytest.raises(ValueError, match="is not unique"):
                sess.run(total, {state: value, state[0].c: np.zeros((1, 2))})
