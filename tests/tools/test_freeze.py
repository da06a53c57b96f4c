"""Freezing and optimize_for_inference: variables become constants, training nodes and
unused nodes go, inference batch norms fold into the Conv2D, outputs unchanged; TensorFlow
runs the frozen file (slow, peer)."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.tools import optimize_for_inference as ofi

HERE = Path(__file__).resolve().parent
RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 5, 5, 3)).astype(np.float32)


def _conv_bn_model(sess):
    x = tf.placeholder(tf.float32, [None, 5, 5, 3], name="input")
    w = tf.get_variable("w", initializer=RNG.standard_normal((3, 3, 3, 4)).astype(np.float32))
    conv = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
    stats = [tf.get_variable(n, initializer=RNG.uniform(0.5, 1.5, 4).astype(np.float32))
             for n in ("gamma", "beta", "mean", "var")]
    bn, _, _ = tf.nn.fused_batch_norm(conv, *stats[:2], mean=stats[2], variance=stats[3],
                                      is_training=False)
    checked = tf.check_numerics(bn, "bad")
    out = tf.identity(tf.nn.relu(checked) * (tf.constant(2.0) + 1.0), name="output")
    tf.assign(w, w * 2, name="train_step")   # not needed by the output: must go
    sess.run(tf.global_variables_initializer())
    return sess.run(out, {x: X})


def _run(graph_def, feed=X):
    with tf.Graph().as_default() as g, tf.Session(graph=g) as sess:
        tf.import_graph_def(graph_def, name="")
        return sess.run("output:0", {"input:0": feed})


def _ops(graph_def):
    return sorted({n.op for n in graph_def.node})


def test_convert_variables_to_constants(tmp_path):
    with tf.Session() as sess:
        want = _conv_bn_model(sess)
        frozen = tf.graph_util.convert_variables_to_constants(
            sess, sess.graph.as_graph_def(), ["output"])
    assert "VariableV2" not in _ops(frozen) and "Assign" not in _ops(frozen)
    assert "train_step" not in {n.name for n in frozen.node}
    np.testing.assert_allclose(_run(frozen), want, rtol=1e-5)


def test_extract_sub_graph_and_remove_training_nodes():
    a = tf.placeholder(tf.float32, name="a")
    b = tf.identity(tf.check_numerics(a, "x"), name="b")
    tf.identity(b, name="c")
    tf.add(a, 1.0, name="unused")
    graph_def = tf.get_default_graph().as_graph_def()
    sub = tf.graph_util.extract_sub_graph(graph_def, ["c"])
    assert [n.name for n in sub.node] == ["a", "CheckNumerics", "b", "c"]
    with pytest.raises(AssertionError, match="nope is not in graph"):
        tf.graph_util.extract_sub_graph(graph_def, ["nope"])
    with pytest.raises(TypeError):
        tf.graph_util.extract_sub_graph(graph_def, "c")
    stripped = tf.graph_util.remove_training_nodes(sub, protected_nodes=["c"])
    assert [(n.name, list(n.input)) for n in stripped.node] == [("a", []), ("c", ["a"])]


def test_optimize_for_inference_folds_batch_norm_and_constants():
    with tf.Session() as sess:
        want = _conv_bn_model(sess)
        frozen = tf.graph_util.convert_variables_to_constants(
            sess, sess.graph.as_graph_def(), ["output"])
    opt = ofi.optimize_for_inference(frozen, ["input"], ["output"],
                                     tf.float32.as_datatype_enum)
    assert _ops(opt) == ["BiasAdd", "Const", "Conv2D", "Identity", "Mul", "Placeholder", "Relu"]
    assert {n.name: n.op for n in opt.node}["add"] == "Const"   # 2.0 + 1.0 folded
    np.testing.assert_allclose(_run(opt), want, rtol=1e-4, atol=1e-5)


@pytest.mark.slow
def test_frozen_graphs_run_in_tensorflow(tmp_path, tf_peer):
    with tf.Session() as sess:
        want = _conv_bn_model(sess)
        frozen = tf.graph_util.convert_variables_to_constants(
            sess, sess.graph.as_graph_def(), ["output"])
    opt = ofi.optimize_for_inference(frozen, ["input"], ["output"],
                                     tf.float32.as_datatype_enum)
    for name, graph in (("frozen.pb", frozen), ("optimized.pb", opt)):
        (tmp_path / name).write_bytes(graph.SerializeToString())
    np.save(tmp_path / "x.npy", X)
    done = subprocess.run([tf_peer, str(HERE / "tf_run_frozen.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    for name in ("frozen", "optimized"):
        np.testing.assert_allclose(np.load(tmp_path / f"{name}.out.npy"), want, rtol=1e-4,
                                   atol=1e-5)
    assert os.path.exists(tmp_path / "frozen.pb")


def test_freeze_command_from_a_saved_model_and_from_a_checkpoint(tmp_path, capsys):
    from tensorweave.cli.main import main

    with tf.Session() as sess:
        want = _conv_bn_model(sess)
        get = sess.graph.get_tensor_by_name
        tf.saved_model.simple_save(sess, str(tmp_path / "sm"), {"input": get("input:0")},
                                   {"output": get("output:0")})
        ckpt = tf.train.Saver().save(sess, str(tmp_path / "ckpt" / "model"))
        tf.train.write_graph(sess.graph, str(tmp_path), "graph.pbtxt")
    assert main(["freeze", "--input_saved_model_dir", str(tmp_path / "sm"),
                 "--output_node_names", "output", "--output_graph",
                 str(tmp_path / "a.pb"), "--optimize_for_inference",
                 "--input_node_names", "input"]) == 0
    assert main(["freeze", "--input_graph", str(tmp_path / "graph.pbtxt"), "--input_checkpoint",
                 ckpt, "--output_node_names", "output", "--output_graph",
                 str(tmp_path / "b.pbtxt")]) == 0
    assert "wrote" in capsys.readouterr().out
    from tensorweave.training.graph_io import read_graph_def

    for name in ("a.pb", "b.pbtxt"):
        np.testing.assert_allclose(_run(read_graph_def(str(tmp_path / name))), want,
                                   rtol=1e-4, atol=1e-5)
    assert main(["freeze", "--input_graph", str(tmp_path / "graph.pbtxt"),
                 "--output_node_names", "output", "--output_graph", "x.pb"]) == 2
    assert "needs --input_checkpoint" in capsys.readouterr().err
    assert main(["freeze", "--input_saved_model_dir", str(tmp_path / "sm"),
                 "--output_node_names", "nope", "--output_graph", str(tmp_path / "c.pb")]) == 2
    assert "nope is not in graph" in capsys.readouterr().err


def test_freeze_tensorflows_saved_model(tmp_path):
    from tensorweave.cli.main import main
    from tensorweave.training.graph_io import read_graph_def

    sm = HERE.parent / "saved_model"
    expected = np.load(sm / "tf_saved_model.expected.npz")
    out = tmp_path / "probs.pb"
    assert main(["freeze", "--input_saved_model_dir", str(sm / "tf_saved_model"),
                 "--output_node_names", "probs", "--output_graph", str(out),
                 "--optimize_for_inference", "--input_node_names", "x"]) == 0
    graph_def = read_graph_def(str(out))
    assert not {"VariableV2", "Assign", "RestoreV2", "ParseExampleV2"} & set(_ops(graph_def))
    with tf.Graph().as_default() as g, tf.Session(graph=g) as sess:
        tf.import_graph_def(graph_def, name="")
        got = sess.run("probs:0", {"x:0": expected["x"]})
    np.testing.assert_allclose(got, expected["probs"], atol=1e-6)
