"""tf.train.Saver: the graph it builds, save/restore, checkpoint bookkeeping, errors, atomicity."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.formats.checkpoint import bundle
from tensorweave.formats.checkpoint.bundle import BundleReader
from tensorweave.formats.checkpoint.state import get_checkpoint_state, latest_checkpoint
from tensorweave.training import saver as saver_lib
from tensorweave.training.saver import Saver


def _vars():
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="dense/kernel")
    b = tf.Variable(np.float16([0.5, -1.0, 2.0]), name="dense/bias")
    s = tf.Variable(np.array([b"a", b"bc"], dtype=object), name="names")
    step = tf.Variable(np.int64(7), name="global_step")
    return [w, b, s, step]


def _init(sess, variables):
    sess.run([v.initializer for v in variables])


def _op_names(prefix="save"):
    return [(op.name, op.type) for op in tf.get_default_graph().get_operations()
            if op.name.startswith(prefix + "/")]


def test_graph_layout_is_tensorflows():
    _vars()
    saver = Saver()
    d = saver.saver_def
    assert (d.filename_tensor_name, d.save_tensor_name, d.restore_op_name) == \
        ("save/Const:0", "save/control_dependency:0", "save/restore_all")
    assert d.max_to_keep == 5 and d.keep_checkpoint_every_n_hours == 10000 and d.version == 2
    names = _op_names()
    assert names[:5] == [("save/filename/input", "Const"),
                         ("save/filename", "PlaceholderWithDefault"),
                         ("save/Const", "PlaceholderWithDefault"),
                         ("save/SaveV2/tensor_names", "Const"),
                         ("save/SaveV2/shape_and_slices", "Const")]
    assert ("save/SaveV2", "SaveV2") in names and ("save/RestoreV2", "RestoreV2") in names
    assert [n for n, t in names if t == "Assign"] == ["save/Assign", "save/Assign_1",
                                                      "save/Assign_2", "save/Assign_3"]
    g = tf.get_default_graph()
    save_op = g.get_operation_by_name("save/SaveV2")
    # NOTE: sorted by name; the variables' ref tensors feed SaveV2, as in TF's graphs
    assert [t.name for t in save_op.inputs[3:]] == ["dense/bias:0", "dense/kernel:0",
                                                    "global_step:0", "names:0"]
    assert g.get_operation_by_name("save/RestoreV2").device.endswith("CPU:0")


def test_second_saver_gets_its_own_scope():
    _vars()
    Saver()
    second = Saver(name=None)
    assert second.saver_def.restore_op_name == "save_1/restore_all"


def test_save_restore_round_trip_all_dtypes(tmp_path):
    variables = _vars()
    saver = Saver()
    with tf.Session() as sess:
        _init(sess, variables)
        want = sess.run(variables)
        path = saver.save(sess, str(tmp_path / "model"), global_step=12)
        assert path == str(tmp_path / "model-12")
        assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model-12.data-00000-of-00001",
                                               "model-12.index", "model-12.meta"]
        sess.run([v.assign(np.zeros_like(x) if x.dtype != object else
                           np.array([b"", b""], dtype=object)) for v, x in zip(variables, want)])
        saver.restore(sess, path)
        for got, w in zip(sess.run(variables), want):
            assert np.asarray(got).dtype == np.asarray(w).dtype
            assert np.asarray(got).tolist() == np.asarray(w).tolist()
    with BundleReader(path) as r:
        assert r.names() == ["dense/bias", "dense/kernel", "global_step", "names"]
        assert r.dtype("dense/bias") == tf.float16


def test_global_step_from_tensor_and_padding(tmp_path):
    variables = _vars()
    saver = Saver(pad_step_number=True)
    with tf.Session() as sess:
        _init(sess, variables)
        assert saver.save(sess, str(tmp_path / "m"), global_step=variables[3]) == \
            str(tmp_path / "m-00000007")
        assert saver.save(sess, str(tmp_path / "m"), global_step="global_step:0",
                          write_meta_graph=False) == str(tmp_path / "m-00000007")


def test_var_list_as_dict_renames_checkpoint_keys(tmp_path):
    w = tf.Variable(np.ones(3, np.float32), name="w")
    saver = Saver({"layer/weights": w})
    with tf.Session() as sess:
        sess.run(w.initializer)
        path = saver.save(sess, str(tmp_path / "m"), write_meta_graph=False)
    assert BundleReader(path).names() == ["layer/weights"]


def test_var_list_errors():
    w = tf.Variable(1.0, name="w")
    with pytest.raises(TypeError, match="dict or a list"):
        Saver(var_list=w)
    with pytest.raises(TypeError, match="not a Variable"):
        Saver([tf.constant(1.0)])
    with pytest.raises(ValueError, match="two names"):
        Saver({"a": w, "b": w})
    with pytest.raises(ValueError, match="same name"):
        Saver([w, w._ref()])
    with pytest.raises(ValueError, match="cannot be deferred"):
        Saver([w], defer_build=True)


def test_no_variables(tmp_path):
    with pytest.raises(ValueError, match="No variables to save"):
        Saver()
    empty = Saver(allow_empty=True)
    with tf.Session() as sess:
        assert empty.save(sess, str(tmp_path / "m")) is None
        empty.restore(sess, str(tmp_path / "m"))  # NOTE: nothing to restore: no error


def test_defer_build(tmp_path):
    w = tf.Variable(2.0, name="w")
    saver = Saver(defer_build=True)
    with tf.Session() as sess:
        sess.run(w.initializer)
        with pytest.raises(RuntimeError, match="build"):
            saver.save(sess, str(tmp_path / "m"))
        saver.build()
        assert saver.save(sess, str(tmp_path / "m")) == str(tmp_path / "m")


def test_latest_filename_checks(tmp_path):
    w = tf.Variable(2.0, name="w")
    saver = Saver()
    with tf.Session() as sess:
        sess.run(w.initializer)
        with pytest.raises(ValueError, match="path components"):
            saver.save(sess, str(tmp_path / "m"), latest_filename="a/b")
        with pytest.raises(ValueError, match="collides"):
            saver.save(sess, str(tmp_path / "checkpoint"))
        with pytest.raises(TypeError, match="Session"):
            saver.save(object(), str(tmp_path / "m"))
        saver.save(sess, str(tmp_path / "m"), latest_filename="mystate", write_meta_graph=False)
    assert latest_checkpoint(str(tmp_path), "mystate") == str(tmp_path / "m")


# -- keeping and deleting checkpoints --------------------------------------------------------
def _save_steps(saver, sess, tmp_path, steps):
    return [saver.save(sess, str(tmp_path / "m"), global_step=s) for s in steps]


def test_max_to_keep_deletes_oldest_and_state_file_follows(tmp_path):
    w = tf.Variable(1.0, name="w")
    saver = Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(w.initializer)
        paths = _save_steps(saver, sess, tmp_path, [1, 2, 3])
    assert saver.last_checkpoints == paths[1:]
    assert not any(f.startswith("m-1.") for f in os.listdir(tmp_path))
    assert {f for f in os.listdir(tmp_path) if f.startswith("m-3.")} == {
        "m-3.index", "m-3.data-00000-of-00001", "m-3.meta"}
    ckpt = get_checkpoint_state(str(tmp_path))
    assert ckpt.model_checkpoint_path == paths[2]
    assert list(ckpt.all_model_checkpoint_paths) == paths[1:]


def test_max_to_keep_zero_keeps_everything(tmp_path):
    w = tf.Variable(1.0, name="w")
    saver = Saver(max_to_keep=0)
    with tf.Session() as sess:
        sess.run(w.initializer)
        paths = _save_steps(saver, sess, tmp_path, [1, 2, 3])
    assert all(os.path.exists(p + ".index") for p in paths)
    assert saver.last_checkpoints == []
    assert list(get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths) == paths[2:]


def test_saving_same_path_twice_is_kept_once(tmp_path):
    w = tf.Variable(1.0, name="w")
    saver = Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(w.initializer)
        paths = _save_steps(saver, sess, tmp_path, [1, 1, 2])
    assert saver.last_checkpoints == [paths[0], paths[2]]


def test_keep_checkpoint_every_n_hours_keeps_old_ones(tmp_path):
    w = tf.Variable(1.0, name="w")
    saver = Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1e-7)  # 0.36 ms
    with tf.Session() as sess:
        sess.run(w.initializer)
        time.sleep(0.01)
        paths = _save_steps(saver, sess, tmp_path, [1, 2])
    assert os.path.exists(paths[0] + ".index")  # NOTE: kept by the hours rule
    assert saver.last_checkpoints == [paths[1]]


def test_recover_and_set_last_checkpoints(tmp_path):
    w = tf.Variable(1.0, name="w")
    first = Saver(max_to_keep=5)
    with tf.Session() as sess:
        sess.run(w.initializer)
        paths = _save_steps(first, sess, tmp_path, [1, 2])
        second = Saver(max_to_keep=2)
        second.recover_last_checkpoints(paths + [str(tmp_path / "m-99")])
        assert second.last_checkpoints == paths
        second.save(sess, str(tmp_path / "m"), global_step=3)
        assert not os.path.exists(paths[0] + ".index")
        second.set_last_checkpoints_with_time([(paths[1], 1.0)])
        assert second.last_checkpoints == [paths[1]]
        second.set_last_checkpoints(["x"])
        assert second.last_checkpoints == ["x"]
        with pytest.raises(AssertionError):
            second.set_last_checkpoints("x")


def test_save_relative_paths(tmp_path):
    w = tf.Variable(1.0, name="w")
    saver = Saver(save_relative_paths=True)
    with tf.Session() as sess:
        sess.run(w.initializer)
        _save_steps(saver, sess, tmp_path, [1, 2])
    assert (tmp_path / "checkpoint").read_text() == (
        'model_checkpoint_path: "m-2"\n'
        'all_model_checkpoint_paths: "m-1"\n'
        'all_model_checkpoint_paths: "m-2"\n')
    moved = tmp_path.parent / (tmp_path.name + "_moved")
    os.rename(tmp_path, moved)
    assert latest_checkpoint(str(moved)) == str(moved / "m-2")


def test_relative_save_path_in_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = tf.Variable(1.0, name="w")
    saver = Saver()
    with tf.Session() as sess:
        sess.run(w.initializer)
        assert saver.save(sess, "model", global_step=4) == "model-4"
    assert (tmp_path / "checkpoint").read_text().startswith('model_checkpoint_path: "model-4"')
    assert latest_checkpoint(".") == "./model-4"


# -- where a save may go (as TF 2.21's Saver) -------------------------------------------------
def test_save_under_a_missing_parent_is_value_error_and_creates_nothing(tmp_path):
    """TF's SaveV2 creates only the checkpoint's own directory; the Saver turns the op's
    NotFound into ValueError when `save_path`'s parent is missing (or is a file)."""
    w = tf.Variable(1.0, name="w")
    saver = Saver()
    with tf.Session() as sess:
        sess.run(w.initializer)
        deep = tmp_path / "no" / "such" / "m"
        with pytest.raises(ValueError, match=f"^Parent directory of {deep} doesn't exist, "
                                             "can't save.$"):
            saver.save(sess, str(deep))
        assert not (tmp_path / "no").exists()
        (tmp_path / "file").write_bytes(b"")
        with pytest.raises(ValueError, match="Parent directory of .*file/m doesn't exist"):
            saver.save(sess, str(tmp_path / "file" / "m"))
        # NOTE: the save op's own directory, one level, is created (TF: SaveV2 -> CreateDir)
        assert saver.save(sess, str(tmp_path / "m_temp" / "m")) == str(tmp_path / "m_temp/m")


def _read_only_dir(tmp_path, monkeypatch):
    """A directory writes into fail with EACCES: chmod 0555, or, for root (which ignores
    modes), the bundle writer's open refusing paths in it."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    if os.geteuid() == 0:
        real = open

        def refusing(path, *args, **kwargs):
            if os.path.dirname(os.fspath(path)) == str(ro):
                raise PermissionError(13, "Permission denied", os.fspath(path))
            return real(path, *args, **kwargs)

        monkeypatch.setattr(bundle, "open", refusing, raising=False)
    return ro


def test_save_into_a_read_only_directory_is_permission_denied(tmp_path, monkeypatch):
    w = tf.Variable(1.0, name="w")
    saver = Saver()
    ro = _read_only_dir(tmp_path, monkeypatch)
    try:
        with tf.Session() as sess:
            sess.run(w.initializer)
            with pytest.raises(errors.PermissionDeniedError, match="Permission denied"):
                saver.save(sess, str(ro / "m"))
    finally:
        ro.chmod(0o755)


# -- atomicity -------------------------------------------------------------------------------
def test_failed_save_never_becomes_latest(tmp_path, monkeypatch):
    w = tf.Variable(1.0, name="w")
    saver = Saver()
    with tf.Session() as sess:
        sess.run(w.initializer)
        good = saver.save(sess, str(tmp_path / "m"), global_step=1)
        state_before = (tmp_path / "checkpoint").read_text()

        def crash(self, *a, **k):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(bundle, "write_index", crash)
        with pytest.raises(errors.ResourceExhaustedError, match="No space"):
            saver.save(sess, str(tmp_path / "m"), global_step=2)
    assert (tmp_path / "checkpoint").read_text() == state_before
    assert latest_checkpoint(str(tmp_path)) == good
    assert not os.path.exists(tmp_path / "m-2.index")
    assert not [f for f in os.listdir(tmp_path) if "tempstate" in f]


# -- restore ---------------------------------------------------------------------------------
def _saved(tmp_path):
    variables = _vars()
    saver = Saver()
    with tf.Session() as sess:
        _init(sess, variables)
        path = saver.save(sess, str(tmp_path / "m"), write_meta_graph=False)
    tf.reset_default_graph()
    return path


def test_restore_lists_every_missing_variable_with_closest_names(tmp_path):
    path = _saved(tmp_path)
    tf.Variable(np.zeros((2, 3), np.float32), name="dense/kernal")
    tf.Variable(np.zeros(3, np.float32), name="dense/biass")
    tf.Variable(np.int64(0), name="global_step")
    saver = Saver()
    with tf.Session() as sess, pytest.raises(errors.NotFoundError) as e:
        saver.restore(sess, path)
    msg = str(e.value)
    assert "2 keys not found" in msg
    assert "dense/kernal (closest in checkpoint: dense/kernel" in msg
    assert "dense/biass (closest in checkpoint: dense/bias" in msg


def test_restore_names_both_sides_of_shape_and_dtype_mismatches(tmp_path):
    path = _saved(tmp_path)
    tf.Variable(np.zeros((3, 2), np.float32), name="dense/kernel")
    tf.Variable(np.zeros(3, np.float32), name="dense/bias")
    saver = Saver()
    with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError) as e:
        saver.restore(sess, path)
    msg = str(e.value)
    assert "variable dense/kernel: shape [3, 2] in the graph, [2, 3] in the checkpoint" in msg
    assert "variable dense/bias: dtype float32 in the graph, float16 in the checkpoint" in msg


def test_restore_op_itself_reports_missing_keys(tmp_path):
    """Running save/restore_all without the Saver's checks (as a TF client would)."""
    path = _saved(tmp_path)
    tf.Variable(np.zeros((2, 3), np.float32), name="other")
    saver = Saver()
    with tf.Session() as sess, pytest.raises(errors.NotFoundError, match="Key other not found"):
        sess.run(saver.saver_def.restore_op_name, {saver.saver_def.filename_tensor_name: path})


def test_restore_accepts_file_paths_and_rejects_non_checkpoints(tmp_path):
    path = _saved(tmp_path)
    w = tf.Variable(np.zeros((2, 3), np.float32), name="dense/kernel")
    saver = Saver([w])
    with tf.Session() as sess:
        for p in (path + ".index", path + ".data-00000-of-00001"):
            sess.run(w.initializer)
            saver.restore(sess, p)
            assert sess.run(w).tolist() == [[0, 1, 2], [3, 4, 5]]
        with pytest.raises(ValueError, match="not a valid checkpoint"):
            saver.restore(sess, str(tmp_path / "nope"))
        with pytest.raises(ValueError, match="None"):
            saver.restore(sess, None)


def test_restore_corrupt_checkpoint_is_data_loss(tmp_path):
    path = _saved(tmp_path)
    data = path + ".data-00000-of-00001"
    raw = bytearray(open(data, "rb").read())
    raw[-1] ^= 0xFF
    open(data, "wb").write(bytes(raw))
    variables = _vars()
    saver = Saver()
    with tf.Session() as sess, pytest.raises(errors.DataLossError, match="data-00000-of-00001"):
        saver.restore(sess, path)
    del variables


def test_reshape_restores_into_other_shapes(tmp_path):
    path = _saved(tmp_path)
    w = tf.Variable(np.zeros((3, 2), np.float32), name="dense/kernel")
    saver = Saver([w], reshape=True)
    with tf.Session() as sess:
        sess.run(w.initializer)
        saver.restore(sess, path)
        assert sess.run(w).tolist() == [[0, 1], [2, 3], [4, 5]]


def test_saver_from_saver_def_checks_via_the_graph(tmp_path):
    path = _saved(tmp_path)
    variables = _vars()
    built = Saver()
    again = Saver(saver_def=built.saver_def)
    items = saver_lib._restore_items_from_graph(tf.get_default_graph(),
                                                again.saver_def.restore_op_name)
    assert sorted(i.key for i in items) == ["dense/bias", "dense/kernel", "global_step", "names"]
    with tf.Session() as sess:
        _init(sess, variables)
        again.restore(sess, path)
        assert sess.run(variables[0]).tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="save_tensor_name"):
        Saver(saver_def=tf.train.SaverDef() if hasattr(tf.train, "SaverDef") else
              saver_lib.SaverDef())


# -- sharded ---------------------------------------------------------------------------------
def _two_device_vars():
    with tf.device("/cpu:0"):
        a = tf.Variable(np.ones(3, np.float32), name="a")
    with tf.device("/cpu:1"):
        b = tf.Variable(np.arange(4, dtype=np.int64), name="b")
    return a, b


_SHARDED_CONFIG = {"device_count": {"CPU": 2}}


def test_sharded_save_merges_per_device_parts(tmp_path):
    a, b = _two_device_vars()
    saver = Saver(sharded=True)
    assert saver.saver_def.sharded and saver.saver_def.save_tensor_name == "save/Identity:0"
    types = {t for _, t in _op_names()}
    assert {"StringJoin", "ShardedFilename", "MergeV2Checkpoints", "SaveV2"} <= types
    with tf.Session(config=_SHARDED_CONFIG) as sess:
        sess.run([a.initializer, b.initializer])
        path = saver.save(sess, str(tmp_path / "m"), global_step=1)
        assert sorted(os.listdir(tmp_path)) == [
            "checkpoint", "m-1.data-00000-of-00002", "m-1.data-00001-of-00002", "m-1.index",
            "m-1.meta"]
        sess.run(b.assign(np.zeros(4, np.int64)))
        saver.restore(sess, path)
        assert sess.run(b).tolist() == [0, 1, 2, 3]
    with BundleReader(path) as r:
        assert r.num_shards == 2 and {r.entry("a").shard_id, r.entry("b").shard_id} == {0, 1}


# -- the ops themselves ----------------------------------------------------------------------
def test_save_and_restore_ops_directly(tmp_path):
    from tensorweave.ops import io_ops

    path = str(tmp_path / "direct")
    v = tf.Variable(np.float32([1, 2, 3]), name="v")
    save = io_ops.save_v2(path, ["v"], [""], [v])
    assert [t.op.name for t in save.inputs[:3]] == ["SaveV2/prefix", "SaveV2/tensor_names",
                                                    "SaveV2/shape_and_slices"]
    (restored,) = io_ops.restore_v2(path, ["v"], [""], [tf.float32])
    (wrong,) = io_ops.restore_v2(path, ["v"], [""], [tf.int32])
    (sliced,) = io_ops.restore_v2(path, ["v"], ["3 1,2"], [tf.float32])
    (bad_shape,) = io_ops.restore_v2(path, ["v"], ["4 0,2"], [tf.float32])
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(save)
        assert sess.run(restored).tolist() == [1, 2, 3]
        with pytest.raises(errors.InvalidArgumentError,
                           match="expected dtype int32 does not equal original dtype float32"):
            sess.run(wrong)
        assert sess.run(sliced).tolist() == [2, 3]  # a slice of a tensor saved whole
        with pytest.raises(errors.InvalidArgumentError, match="does not match the shape"):
            sess.run(bad_shape)
    with pytest.raises(ValueError, match="one per tensor"):
        io_ops.save_v2(path, ["a", "b"], ["", ""], [v])
    with pytest.raises(ValueError, match="rank 0"):
        io_ops.restore_v2([path, path], ["v"], [""], [tf.float32])
