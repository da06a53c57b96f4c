"""Partitioned variables: partitioners, `get_variable(partitioner=...)`, PartitionedVariable,
and checkpoints of them in TensorFlow's slice format (both ways).

`fixtures/partitioned/` was written by TensorFlow (`make_partitioned_ckpt.py`): a checkpoint
of `emb` (4 parts), `layer/w` (2 parts along axis 1) and a plain `b`, their full values, and
what TF's partitioners return for a table of cases.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.formats.checkpoint.bundle import BundleReader, BundleWriter
from tensorweave.formats.checkpoint.slices import Slice, parse_shape_and_slice

FIX = Path(__file__).resolve().parent / "fixtures" / "partitioned"
TF_CKPT = str(FIX / "model.ckpt")
VALUES = {k.replace("__", "/"): v for k, v in np.load(FIX / "values.npz").items()}
PEER = Path.home() / ".cache" / "tensorweave-tf-peer" / "bin" / "python"


def _tf_graph():
    """The variables of make_partitioned_ckpt.py, built here."""
    emb = tf.get_variable("emb", initializer=tf.constant(VALUES["emb"]),
                          partitioner=tf.fixed_size_partitioner(4))
    with tf.variable_scope("layer", partitioner=tf.fixed_size_partitioner(2, axis=1)):
        w = tf.get_variable("w", initializer=tf.constant(VALUES["layer/w"]))
    b = tf.get_variable("b", initializer=tf.constant(VALUES["b"]))
    return emb, w, b


def _full(sess, pv):
    return sess.run(tf.convert_to_tensor(pv))


# -- the format ------------------------------------------------------------------------------
def test_slice_keys_are_tfs_encode_tensor_name_slice():
    keys = BundleReader(TF_CKPT).keys()
    mine = [Slice(((o, 3 if o < 6 else 2), (0, 3))).key("emb") for o in (0, 3, 6, 8)] + \
        [Slice(((0, 5), (o, 2))).key("layer/w") for o in (0, 2)]
    assert sorted(k.encode("utf-8", "surrogateescape") for k in keys if k[0] == "\x00") == \
        sorted(mine)
    # OrderedCode's signed numbers, TF's own examples; a whole dimension is (0, -1)
    assert Slice(((0x424242, -0x800),)).key("a")[-6:] == bytes.fromhex("f0424242") + \
        bytes.fromhex("3800")
    assert Slice(((0, -1),)).key("x\x00y") == b"\x00x\x00\xffy\x00\x01\x01\x01\x80\x7f"


def test_reads_tf_partitioned_checkpoint_as_full_tensors():
    reader = BundleReader(TF_CKPT)
    assert reader.names() == ["b", "emb", "layer/w"]
    for name, value in VALUES.items():
        np.testing.assert_array_equal(reader.get_tensor(name), value)
    np.testing.assert_array_equal(reader.get_slice("emb", "10 3 2,5:-"), VALUES["emb"][2:7])
    assert tf.train.list_variables(TF_CKPT) == [("b", [3]), ("emb", [10, 3]),
                                                ("layer/w", [5, 4])]


def test_a_slice_reads_only_the_saved_slices_it_overlaps(monkeypatch):
    reader = BundleReader(TF_CKPT)
    read = []
    original = reader.get_tensor
    monkeypatch.setattr(reader, "get_tensor", lambda n, **k: read.append(n) or original(n))
    np.testing.assert_array_equal(reader.get_slice("emb", "10 3 4,3:1,2"),
                                  VALUES["emb"][4:7, 1:3])
    assert [k.encode("utf-8", "surrogateescape") for k in read] == [
        Slice(((3, 3), (0, 3))).key("emb"), Slice(((6, 2), (0, 3))).key("emb")]


def test_inspect_shows_the_full_variables_as_tf(capsys):
    from tensorweave.cli.main import main

    assert main(["inspect", TF_CKPT]) == 0
    assert capsys.readouterr().out.splitlines()[:3] == [
        "b (DT_FLOAT) [3]", "emb (DT_FLOAT) [10,3]", "layer/w (DT_DOUBLE) [5,4]"]


def test_saver_writes_the_bytes_tf_writes(tmp_path):
    with tf.Graph().as_default(), tf.Session() as sess:
        _tf_graph()
        sess.run(tf.global_variables_initializer())
        tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"), write_meta_graph=False,
                              write_state=False)
    for suffix in (".index", ".data-00000-of-00001"):
        assert (tmp_path / f"model.ckpt{suffix}").read_bytes() == \
            (FIX / f"model.ckpt{suffix}").read_bytes(), suffix


def test_writer_rejects_a_slice_of_the_wrong_shape_or_a_clash(tmp_path):
    with BundleWriter(str(tmp_path / "c")) as w:
        with pytest.raises(tf.errors.InvalidArgumentError, match="shape_and_slice says"):
            w.add_slice("t", "4 2 0,2:-", np.zeros((3, 2), np.float32))
        w.add("whole", np.zeros(2, np.float32))
        with pytest.raises(tf.errors.InvalidArgumentError, match="disagree"):
            w.add_slice("whole", "2 0,1", np.zeros(1, np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="outside"):
        parse_shape_and_slice("4 3,2")


def test_missing_slice_coverage_is_data_loss(tmp_path):
    with BundleWriter(str(tmp_path / "c")) as w:
        w.add_slice("t", "4 0,2", np.ones(2, np.float32))
    with pytest.raises(tf.errors.DataLossError, match="cover 2 of the 4"):
        BundleReader(str(tmp_path / "c")).get_tensor("t")


# -- restoring -------------------------------------------------------------------------------
@pytest.mark.parametrize("parts", [4, 3, 1])
def test_saver_restores_tf_checkpoint_into_any_partitioning(parts):
    with tf.Graph().as_default(), tf.Session() as sess:
        emb = tf.get_variable("emb", [10, 3], partitioner=tf.fixed_size_partitioner(parts))
        with tf.variable_scope("layer", partitioner=tf.fixed_size_partitioner(2, axis=1)):
            w = tf.get_variable("w", [5, 4], tf.float64)
        tf.train.Saver([emb, w]).restore(sess, TF_CKPT)
        np.testing.assert_array_equal(_full(sess, emb), VALUES["emb"])
        np.testing.assert_array_equal(_full(sess, w), VALUES["layer/w"])


def test_whole_variable_restores_from_slices_and_parts_from_a_whole_tensor(tmp_path):
    with tf.Graph().as_default(), tf.Session() as sess:
        whole = tf.get_variable("emb", [10, 3])
        tf.train.Saver([whole]).restore(sess, TF_CKPT)
        np.testing.assert_array_equal(sess.run(whole), VALUES["emb"])
        tf.train.Saver([whole]).save(sess, str(tmp_path / "whole"))
    with tf.Graph().as_default(), tf.Session() as sess:
        emb = tf.get_variable("emb", [10, 3], partitioner=tf.fixed_size_partitioner(4))
        tf.train.Saver().restore(sess, str(tmp_path / "whole"))
        np.testing.assert_array_equal(_full(sess, emb), VALUES["emb"])


def test_dict_entry_names_a_partitioned_variable(tmp_path):
    with tf.Graph().as_default(), tf.Session() as sess:
        emb, _, _ = _tf_graph()
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver({"table": emb}).save(sess, str(tmp_path / "d"))
        assert tf.train.list_variables(path) == [("table", [10, 3])]
        sess.run([v.assign(tf.zeros_like(v)) for v in emb])
        tf.train.Saver({"table": list(emb)}).restore(sess, path)
        np.testing.assert_array_equal(_full(sess, emb), VALUES["emb"])


def test_restore_names_a_full_shape_mismatch():
    with tf.Graph().as_default(), tf.Session() as sess:
        emb = tf.get_variable("emb", [12, 3], partitioner=tf.fixed_size_partitioner(2))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \[12, 3\] in the graph"):
            tf.train.Saver([emb]).restore(sess, TF_CKPT)


def test_sharded_save_joins_the_slices_of_parts_on_several_devices(tmp_path):
    count = iter(range(100))

    def per_part(op):
        return f"/device:CPU:{next(count) % 3}" if op.type == "VariableV2" else op.device

    config = tf.ConfigProto(device_count={"CPU": 3})
    with tf.Graph().as_default(), tf.Session(config=config) as sess:
        with tf.device(per_part):
            emb, w, b = _tf_graph()
        assert len({v.device for v in emb}) == 3
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver(sharded=True).save(sess, str(tmp_path / "s"))
        reader = BundleReader(path)
        assert reader.num_shards == 3
        for name, value in VALUES.items():
            np.testing.assert_array_equal(reader.get_tensor(name), value)
        sess.run([v.assign(tf.zeros_like(v)) for v in [*emb, *w, b]])
        tf.train.Saver(sharded=True).restore(sess, path)
        np.testing.assert_array_equal(_full(sess, emb), VALUES["emb"])


def test_meta_graph_keeps_slice_info_and_its_saver_restores(tmp_path):
    with tf.Graph().as_default(), tf.Session() as sess:
        _tf_graph()
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(path + ".meta")
        parts = [v for v in tf.global_variables() if v.op.name.startswith("emb/")]
        assert [v._get_save_slice_info().spec for v in parts] == [
            "10 3 0,3:0,3", "10 3 3,3:0,3", "10 3 6,2:0,3", "10 3 8,2:0,3"]
        saver.restore(sess, path)
        np.testing.assert_array_equal(np.concatenate(sess.run(parts)), VALUES["emb"])


def test_tf_meta_graph_imports_with_its_parts_and_restores():
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(TF_CKPT + ".meta")
        specs = {v.op.name: (v._get_save_slice_info().full_name, v._get_save_slice_info().spec)
                 for v in tf.global_variables() if v._get_save_slice_info()}
        assert specs["emb/part_3"] == ("emb", "10 3 8,2:0,3")
        assert specs["layer/w/part_1"] == ("layer/w", "5 4 0,5:2,2")
        saver.restore(sess, TF_CKPT)
        parts = sess.run([f"emb/part_{i}:0" for i in range(4)])
        np.testing.assert_array_equal(np.concatenate(parts), VALUES["emb"])
        sess.run(tf.global_variables_initializer())  # TF's initializers: its Slice ops
        np.testing.assert_array_equal(np.concatenate(
            sess.run([f"layer/w/part_{i}:0" for i in range(2)]), axis=1), VALUES["layer/w"])


def test_init_from_checkpoint_fills_partitioned_variables():
    with tf.Graph().as_default(), tf.Session() as sess:
        emb = tf.get_variable("emb", [10, 3], partitioner=tf.fixed_size_partitioner(3))
        with tf.variable_scope("layer", partitioner=tf.fixed_size_partitioner(2, axis=1)):
            w = tf.get_variable("w", [5, 4], tf.float64)
        tf.train.init_from_checkpoint(TF_CKPT, {"emb": "emb", "layer/": "layer/"})
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(_full(sess, emb), VALUES["emb"])
        np.testing.assert_array_equal(_full(sess, w), VALUES["layer/w"])


# -- partitioners and get_variable -----------------------------------------------------------
CASES = json.loads((FIX / "partitions.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['fn']}-{c['shape']}")
def test_partitioners_and_parts_match_tf(case):
    make = getattr(tf, case["fn"])
    dtype = tf.as_dtype(case["dtype"])
    assert make(**case["kwargs"])(shape=tf.TensorShape(case["shape"]), dtype=dtype) == \
        case["partitions"]
    with tf.Graph().as_default():
        v = tf.get_variable("v", case["shape"], dtype, partitioner=make(**case["kwargs"]))
        assert [p.shape.as_list() for p in v] == case["parts"]
        assert [p.op.name for p in v] == [f"v/part_{i}" for i in range(len(case["parts"]))]


def test_partitioned_variable_api():
    with tf.Graph().as_default(), tf.Session() as sess:
        emb = tf.get_variable("emb", [10, 3], initializer=tf.ones_initializer(),
                              partitioner=tf.fixed_size_partitioner(4))
        assert (emb.name, emb.get_shape().as_list(), emb.dtype) == ("emb", [10, 3],
                                                                    tf.float32)
        assert emb._get_partitions() == [4, 1] and len(emb) == 4
        assert emb in tf.global_variables() or all(p in tf.global_variables() for p in emb)
        assert {p.op.name for p in tf.trainable_variables()} == {f"emb/part_{i}"
                                                                 for i in range(4)}
        total = tf.reduce_sum(emb)  # converts to the concatenated tensor
        sess.run(tf.global_variables_initializer())
        assert sess.run(total) == 30.0
        with pytest.raises(NotImplementedError, match="reference"):
            tf.convert_to_tensor(emb, as_ref=True)


def test_get_variable_reuse_rules():
    with tf.Graph().as_default():
        p = tf.fixed_size_partitioner(2)
        a = tf.get_variable("a", [4, 2], partitioner=p)
        with tf.variable_scope("", reuse=True):
            assert tf.get_variable("a", [4, 2], partitioner=p) is a
            with pytest.raises(ValueError, match="partitions"):
                tf.get_variable("a", [4, 2], partitioner=tf.fixed_size_partitioner(4))
        with tf.variable_scope("", reuse=tf.AUTO_REUSE):
            assert tf.get_variable("a", [4, 2], partitioner=p) is a
            assert len(tf.get_variable("fresh", [4, 2], partitioner=p)) == 2
        with pytest.raises(ValueError, match="already exists"):
            tf.get_variable("a", [4, 2], partitioner=p)
        with pytest.raises(ValueError, match="partitioned version"):
            tf.get_variable("a", [4, 2])
        tf.get_variable("plain", [4, 2])
        with pytest.raises(ValueError, match="unpartitioned version"):
            tf.get_variable("plain", [4, 2], partitioner=p)
        with pytest.raises(ValueError, match="fully defined"):
            tf.get_variable("u", [None, 2], partitioner=p)
        with pytest.raises(ValueError, match="one dimension"):
            tf.get_variable("two", [4, 4], partitioner=lambda shape, dtype: [2, 2])


def test_default_initializer_scales_by_the_full_shape():
    """glorot_uniform of each part uses the full variable's fans (TF's partition_info)."""
    with tf.Graph().as_default(), tf.Session() as sess:
        v = tf.get_variable("v", [400, 2], partitioner=tf.fixed_size_partitioner(4))
        sess.run(tf.global_variables_initializer())
        limit = np.sqrt(6.0 / (400 + 2))
        values = _full(sess, v)
        assert np.abs(values).max() <= limit and np.abs(values).max() > 0.8 * limit


# -- lookups, training, placement ------------------------------------------------------------
@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_embedding_lookup_on_a_partitioned_variable(strategy):
    ids = np.array([[0, 9], [4, 5], [7, 3]])
    with tf.Graph().as_default(), tf.Session() as sess:
        emb, _, _ = _tf_graph()
        rows = tf.nn.embedding_lookup(emb, ids, partition_strategy=strategy)
        sess.run(tf.global_variables_initializer())
        parts, got = sess.run([list(emb), rows])
    if strategy == "mod":  # id i lives in part i % 4 at row i // 4
        table = np.stack([parts[i % 4][i // 4] for i in range(10)])
    else:  # the parts' contiguous ranges
        table = np.concatenate(parts)
    np.testing.assert_array_equal(got, table[ids])


V, D, CLASSES, BATCH = 1001, 4, 5, 8


def _word2vec(partitioner, device_fn=None):
    """Embedding (V x D) → logits over CLASSES → softmax loss, SGD; returns (step, feeds,
    embedding)."""
    init = np.random.RandomState(0).uniform(-1, 1, (V, D)).astype(np.float32)
    with tf.device(device_fn) if device_fn else contextlib.nullcontext():
        emb = tf.get_variable("emb", initializer=tf.constant(init), partitioner=partitioner)
        out_w = tf.get_variable("out_w", initializer=tf.constant(
            np.random.RandomState(1).normal(size=(D, CLASSES)).astype(np.float32)))
    x = tf.placeholder(tf.int64, [BATCH])
    y = tf.placeholder(tf.int64, [BATCH])
    logits = tf.matmul(tf.nn.embedding_lookup(emb, x, partition_strategy="div"), out_w)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    grads = tf.gradients(loss, list(emb) if partitioner else [emb])
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    return step, x, y, emb, grads


def _batches():
    rng = np.random.RandomState(2)
    return [(rng.randint(0, V, BATCH), rng.randint(0, CLASSES, BATCH)) for _ in range(5)]


def test_word2vec_with_a_partitioned_embedding_trains_sparsely_on_each_part():
    count = iter(range(100))

    def per_part(op):
        return f"/device:CPU:{next(count) % 4}" if op.type == "VariableV2" else op.device

    config = tf.ConfigProto(device_count={"CPU": 4})
    with tf.Graph().as_default() as g, tf.Session(config=config) as sess:
        step, x, y, emb, grads = _word2vec(tf.fixed_size_partitioner(4), per_part)
        assert all(isinstance(gr, tf.IndexedSlices) for gr in grads)
        sess.run(tf.global_variables_initializer())
        md = tf.RunMetadata()
        for ids, labels in _batches():
            sess.run(step, {x: ids, y: labels}, run_metadata=md,
                     options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
        trained = _full(sess, emb)
        part_devices = {p.op.name: p.device for p in emb}
        scatter = {op.name: op for op in g.get_operations() if op.type == "ScatterSub"}
    assert len(scatter) == 4
    # each part's sparse update runs on that part's device
    ran = {n.node_name: d.device for d in md.step_stats.dev_stats for n in d.node_stats}
    for name, op in scatter.items():
        assert ran[name].endswith(part_devices[op.inputs[0].op.name]), (name, ran[name])
    # no node but the parts themselves (and their snapshots) holds a value shaped like the
    # whole embedding or a whole part: no dense gradient, no concatenated table
    big = {(V, D)} | {(V // 4 + (i < V % 4), D) for i in range(4)}
    own = set(part_devices) | {f"{n}/read" for n in part_devices}
    dense = [n.node_name for d in md.step_stats.dev_stats for n in d.node_stats
             for o in n.output if n.node_name not in own
             and tuple(s.size for s in o.tensor_description.shape.dim) in big]
    assert not dense
    with tf.Graph().as_default(), tf.Session() as sess:  # the same model, one table
        step, x, y, emb, _ = _word2vec(None)
        sess.run(tf.global_variables_initializer())
        for ids, labels in _batches():
            sess.run(step, {x: ids, y: labels})
        np.testing.assert_allclose(trained, sess.run(emb), rtol=1e-6, atol=1e-6)


def test_replica_device_setter_places_parts_round_robin_over_ps_tasks():
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            emb = tf.get_variable("emb", [10, 3], partitioner=tf.fixed_size_partitioner(4))
            other = tf.get_variable("other", [3])
    assert [p.device for p in emb] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0",
                                       "/job:ps/task:1"]
    assert other.device == "/job:ps/task:0"
    assert [p.initializer.device for p in emb] == [p.device for p in emb]


@pytest.mark.slow
def test_partitioned_embedding_on_a_two_ps_cluster_trains_and_saves(tmp_path):
    workers, ps = tf.test.create_local_cluster(num_workers=1, num_ps=2)
    try:
        with tf.Graph().as_default():
            with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
                step, x, y, emb, _ = _word2vec(tf.fixed_size_partitioner(4))
            saver = tf.train.Saver(sharded=True)
            with tf.Session(workers[0].target) as sess:
                sess.run(tf.global_variables_initializer())
                for ids, labels in _batches():
                    sess.run(step, {x: ids, y: labels})
                trained = _full(sess, emb)
                path = saver.save(sess, str(tmp_path / "c"))
        assert [p.device for p in emb] == ["/job:ps/task:0", "/job:ps/task:1"] * 2
        assert BundleReader(path).num_shards == 2
        np.testing.assert_array_equal(BundleReader(path).get_tensor("emb"), trained)
    finally:
        for server in workers + ps:
            server.stop()


# -- TensorFlow restores ours ----------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(not PEER.exists(), reason="the TensorFlow peer is not installed")
def test_tf_restores_our_checkpoint_into_its_own_partitioning(tmp_path):
    with tf.Graph().as_default(), tf.Session() as sess:
        emb, w, _ = _tf_graph()
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver([emb, w]).save(sess, str(tmp_path / "ours"))
    script = Path(__file__).resolve().parent / "tf_restore_partitioned.py"
    out = subprocess.run([str(PEER), str(script), path], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    np.testing.assert_array_equal(np.array(got["emb"], np.float32), VALUES["emb"])
    np.testing.assert_array_equal(np.array(got["layer/w"]), VALUES["layer/w"])
    assert got["list_variables"] == [["emb", [10, 3]], ["layer/w", [5, 4]]]


def test_slots_of_parts_save_as_slices_of_the_full_slot(tmp_path):
    """Adam's m/v of `emb/part_i` are parts of `emb/Adam`, `emb/Adam_1` (TF 2.21 lists the
    same names for this program)."""
    with tf.Graph().as_default(), tf.Session() as sess:
        emb = tf.get_variable("emb", [10, 3], partitioner=tf.fixed_size_partitioner(4))
        loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, [1, 2, 7]))
        step = tf.train.AdamOptimizer(0.1).minimize(loss)
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        path = tf.train.Saver().save(sess, str(tmp_path / "adam"))
        m = np.concatenate(sess.run([v for v in tf.global_variables()
                                     if v.op.name.endswith("/Adam")]))
    assert tf.train.list_variables(path) == [
        ("beta1_power", []), ("beta2_power", []), ("emb", [10, 3]), ("emb/Adam", [10, 3]),
        ("emb/Adam_1", [10, 3])]
    np.testing.assert_array_equal(tf.train.load_variable(path, "emb/Adam"), m)


def test_create_partitioned_variables_names_parts_as_tf():
    """Names and specs as TF 2.21 gives them for the same calls."""
    with tf.Graph().as_default():
        parts = tf.create_partitioned_variables([10, 4], [2, 1], tf.ones_initializer(),
                                                name="my1")
        assert [v.op.name for v in parts] == ["my1/part_0", "my1/part_1"]
        assert [v._get_save_slice_info().spec for v in parts] == ["10 4 0,5:0,4",
                                                                  "10 4 5,5:0,4"]
        unnamed = tf.create_partitioned_variables([6, 4], [1, 3], tf.ones_initializer())
        assert [v.op.name for v in unnamed] == [f"PartitionedVariable/part_{i}"
                                                for i in range(3)]
        with pytest.raises(ValueError, match="must have the length"):
            tf.create_partitioned_variables([6, 4], [2], tf.ones_initializer())
