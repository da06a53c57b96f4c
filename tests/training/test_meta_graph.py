"""Meta graphs: export/import of the GraphDef, collections (TF's encodings), the SaverDef and
the op list; TensorFlow's own .meta file; resuming training from a .meta without the code."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.proto import meta_graph_pb2, variable_pb2
from tensorweave.training import meta_graph
from tensorweave.training.meta_graph import export_meta_graph, import_meta_graph
from tensorweave.training.saver import Saver

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "ckpt")
FIXTURE = os.path.join(DATA, "model.ckpt-1234")


def _model():
    w = tf.Variable(np.ones((2, 3), np.float32), name="dense/kernel")
    b = tf.Variable(np.zeros(3, np.float32), name="dense/bias", trainable=False)
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.add(tf.matmul(x, w), b, name="y")
    return w, b, x, y


def test_collections_use_tfs_encodings():
    w, b, x, y = _model()
    tf.add_to_collection("outputs", y)
    tf.add_to_collection("outputs_ops", y.op)
    tf.add_to_collection("sizes", 3)
    tf.add_to_collection("rates", 0.5)
    tf.add_to_collection("tags", "train")
    meta = export_meta_graph()
    cols = meta.collection_def
    assert cols["outputs"].node_list.value == ["y:0"]
    assert cols["outputs_ops"].node_list.value == ["y"]
    assert list(cols["sizes"].int64_list.value) == [3]
    assert list(cols["rates"].float_list.value) == [0.5]
    assert list(cols["tags"].bytes_list.value) == [b"train"]
    defs = [variable_pb2.VariableDef.FromString(v) for v in cols["variables"].bytes_list.value]
    assert defs[0] == variable_pb2.VariableDef(
        variable_name="dense/kernel:0", initializer_name="dense/kernel/Assign",
        snapshot_name="dense/kernel/read:0", initial_value_name="dense/kernel/initial_value:0",
        trainable=True)
    assert not defs[1].trainable
    assert len(cols["trainable_variables"].bytes_list.value) == 1


def test_variable_def_bytes_equal_tfs():
    """Re-exporting TF's meta graph gives the very bytes TF wrote for each VariableDef."""
    tf_meta = meta_graph.read_meta_graph_file(FIXTURE + ".meta")
    import_meta_graph(tf_meta)
    ours = export_meta_graph()
    assert list(ours.collection_def["variables"].bytes_list.value) == \
        list(tf_meta.collection_def["variables"].bytes_list.value)


# TF 2.21's export_meta_graph of FIFOQueue "q" with one QueueRunner (queue_runner.py's to_proto)
_TF_QUEUE_RUNNER_DEF = b"\n\001q\022\tq_enqueue\032\007q_Close\"\tq_Close_1*\001\013"


def test_queue_runners_are_stored_as_tfs_queue_runner_defs():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, tf.float32, name="q")
        tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(tf.constant(1.0))]))
        meta = export_meta_graph()
        q.dequeue(name="take")
        with_dequeue = export_meta_graph()
    assert list(meta.collection_def["queue_runners"].bytes_list.value) == [_TF_QUEUE_RUNNER_DEF]
    with tf.Graph().as_default() as g:
        import_meta_graph(with_dequeue, import_scope="imp")
        (runner,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert [op.name for op in runner.enqueue_ops] == ["imp/q_enqueue"]
        assert runner.queue_closed_exception_types == (tf.errors.OutOfRangeError,)
        with tf.Session() as sess:   # the imported runner's threads fill the imported queue
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            assert sess.run(g.get_tensor_by_name("imp/take:0")) == 1.0
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)


def test_unserializable_collections_are_skipped():
    _model()
    tf.add_to_collection("weird", object())
    tf.add_to_collection("mixed", 1)
    tf.add_to_collection("mixed", "a")
    cols = export_meta_graph().collection_def
    assert "weird" not in cols and "mixed" not in cols and "variables" in cols


def test_saver_def_op_list_and_shapes():
    _model()
    saver = Saver()
    meta = saver.export_meta_graph()
    assert meta.saver_def == saver.saver_def
    ops = [o.name for o in meta.meta_info_def.stripped_op_list.op]
    assert ops == sorted(ops) and {"MatMul", "SaveV2", "RestoreV2", "VariableV2"} <= set(ops)
    assign = next(o for o in meta.meta_info_def.stripped_op_list.op if o.name == "Assign")
    assert assign.allows_uninitialized_input and assign.input_arg[0].is_ref
    assert [a.name for a in assign.attr] == ["T", "validate_shape", "use_locking"]
    save = next(o for o in meta.meta_info_def.stripped_op_list.op if o.name == "SaveV2")
    assert save.is_stateful and save.attr[0].has_minimum and save.attr[0].minimum == 1
    node = next(n for n in meta.graph_def.node if n.name == "y")
    assert "_output_shapes" in node.attr


def test_round_trip_through_file_text_and_binary(tmp_path):
    w, b, x, y = _model()
    tf.add_to_collection("outputs", y)
    saver = Saver()
    for as_text, name in ((False, "m.meta"), (True, "m.pbtxt")):
        saver.export_meta_graph(str(tmp_path / name), as_text=as_text)
        assert meta_graph.read_meta_graph_file(str(tmp_path / name)) == saver.export_meta_graph()
    tf.reset_default_graph()
    restored_saver = import_meta_graph(str(tmp_path / "m.pbtxt"))
    assert restored_saver.saver_def == saver.saver_def
    g = tf.get_default_graph()
    assert tf.get_collection("outputs")[0] is g.get_tensor_by_name("y:0")
    variables = tf.global_variables()
    assert [v.op.name for v in variables] == ["dense/kernel", "dense/bias"]
    assert tf.trainable_variables()[0] is variables[0]  # NOTE: one object per VariableDef
    with tf.Session() as sess:
        sess.run([v.initializer for v in variables])
        out = sess.run("y:0", {"x:0": np.ones((1, 2), np.float32)})
    assert out.tolist() == [[2.0, 2.0, 2.0]]


def test_read_meta_graph_file_errors(tmp_path):
    with pytest.raises(OSError, match="does not exist"):
        meta_graph.read_meta_graph_file(str(tmp_path / "none.meta"))
    (tmp_path / "bad.meta").write_bytes(b"\xff\xfe not a proto {{{")
    with pytest.raises(ValueError, match="not a MetaGraphDef"):
        meta_graph.read_meta_graph_file(str(tmp_path / "bad.meta"))


def test_import_scope_and_clear_devices():
    with tf.device("/cpu:0"):
        _model()
    saver = Saver()
    meta = saver.export_meta_graph()
    assert any(n.device for n in meta.graph_def.node)
    tf.reset_default_graph()
    s2 = import_meta_graph(meta, import_scope="imported", clear_devices=True)
    g = tf.get_default_graph()
    assert g.get_operation_by_name("imported/dense/kernel").device == ""
    assert s2.saver_def.restore_op_name == "imported/save/restore_all"
    assert [v.op.name for v in tf.global_variables()] == ["imported/dense/kernel",
                                                          "imported/dense/bias"]


def test_export_scope_strips_names():
    with tf.name_scope("tower"):
        w = tf.Variable(np.ones(2, np.float32), name="w")
        tf.identity(w, name="out")
    tf.Variable(1.0, name="outside")
    meta = export_meta_graph(export_scope="tower")
    names = {n.name for n in meta.graph_def.node}
    assert {"w", "w/read", "out"} <= names and "outside" not in names
    var_defs = meta.collection_def["variables"].bytes_list.value
    assert [variable_pb2.VariableDef.FromString(v).variable_name for v in var_defs] == ["w:0"]


def test_strip_default_attrs():
    _model()
    plain = export_meta_graph()
    stripped = export_meta_graph(strip_default_attrs=True)
    node = next(n for n in stripped.graph_def.node if n.name == "dense/kernel")
    full = next(n for n in plain.graph_def.node if n.name == "dense/kernel")
    assert "container" in full.attr and "container" not in node.attr
    assert stripped.meta_info_def.stripped_default_attrs


def test_tf_meta_graph_imports_and_restores():
    saver = import_meta_graph(FIXTURE + ".meta")
    expected = np.load(os.path.join(DATA, "expected_values.npz"), allow_pickle=True)
    assert saver.saver_def.restore_op_name == "save/restore_all"
    with tf.Session() as sess:
        saver.restore(sess, FIXTURE)
        for v in tf.global_variables():
            got = sess.run(v)
            assert np.array_equal(got, expected[v.op.name.replace("/", "__")]), v.op.name


def test_no_saver_def_gives_default_saver_or_none():
    _model()
    meta = export_meta_graph()
    assert not meta.HasField("saver_def")
    tf.reset_default_graph()
    assert isinstance(import_meta_graph(meta), Saver)
    tf.reset_default_graph()
    tf.constant(1.0, name="c")
    empty = export_meta_graph()
    tf.reset_default_graph()
    assert import_meta_graph(empty) is None


def test_import_rejects_unknown_ops():
    meta = meta_graph_pb2.MetaGraphDef()
    node = meta.graph_def.node.add()
    node.name, node.op = "x", "NoSuchOpAnywhere"
    with pytest.raises(ValueError, match="NoSuchOpAnywhere"):
        import_meta_graph(meta)


def test_saver_collection_round_trips():
    _model()
    saver = Saver()
    tf.add_to_collection(tf.GraphKeys.SAVERS, saver)
    meta = export_meta_graph()
    assert len(meta.collection_def["savers"].bytes_list.value) == 1
    tf.reset_default_graph()
    import_meta_graph(meta)
    (restored,) = tf.get_collection(tf.GraphKeys.SAVERS)
    assert restored.saver_def == saver.saver_def


def test_resume_training_from_meta_graph_alone(tmp_path):
    """Save mid-training, forget the Python model, import the .meta, restore, continue: the
    result equals training straight through."""
    train_lib = pytest.importorskip("tensorweave.training.optimizers")
    if not hasattr(train_lib, "AdamOptimizer"):
        pytest.skip("optimizers are not available")
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((16, 4)).astype(np.float32)
    ys = rng.standard_normal((16, 1)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.get_variable("dense/kernel", [4, 1], initializer=tf.ones_initializer())
    b = tf.get_variable("dense/bias", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y), name="loss")
    step = tf.train.get_or_create_global_step()
    train = train_lib.AdamOptimizer(0.1).minimize(loss, global_step=step)
    tf.add_to_collection("train_op", train)
    saver = Saver()
    feed = {x: xs, y: ys}
    with tf.Session() as sess:
        sess.run([v.initializer for v in tf.global_variables()])
        for _ in range(3):
            sess.run(train, feed)
        path = saver.save(sess, str(tmp_path / "model"), global_step=step)
        for _ in range(3):
            sess.run(train, feed)
        want = sess.run(w)
    names = {v.op.name for v in tf.global_variables()}
    assert {"dense/kernel/Adam", "dense/kernel/Adam_1", "beta1_power", "global_step"} <= names
    tf.reset_default_graph()
    resumed = import_meta_graph(path + ".meta")
    train2 = tf.get_collection("train_op")[0]
    with tf.Session() as sess:
        resumed.restore(sess, path)
        assert sess.run("global_step:0") == 3
        for _ in range(3):
            sess.run(train2, {"x:0": xs, "y:0": ys})
        np.testing.assert_array_equal(sess.run("dense/kernel:0"), want)
        assert sess.run("global_step:0") == 6
