"""The TF1 symbols issue 18 added outside the op families, doing what TF 2.21 does:
tf.profiler.profile's counts and tf.train.experimental's loss scaling against TensorFlow's
numbers (tests/data/symbol_expected.json, from make_symbol_expected.py); guarantee_const,
the eager/v2 switches, tf.autograph and the library loaders against TF's behaviour."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tests.compat import symbol_cases

EXPECTED = json.loads((Path(__file__).resolve().parent.parent / "data" /
                       "symbol_expected.json").read_text())


def test_profile_counts_match_tensorflow(capsys):
    got = json.loads(json.dumps(symbol_cases.profile_numbers(tf)))
    assert got == EXPECTED["profile"]
    out = capsys.readouterr().out
    assert "conv/kernel (108/108 params)" in out and "_TFProfRoot (--/192 params)" in out


def test_profile_reads_run_metadata_and_writes_files(tmp_path):
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, symbol_cases.X.shape)
        loss = symbol_cases.model(tf, x)
        md = tf.RunMetadata()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(loss, {x: symbol_cases.X}, run_metadata=md,
                     options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
        out = tmp_path / "prof.txt"
        opts = (tf.profiler.ProfileOptionBuilder(
            tf.profiler.ProfileOptionBuilder.time_and_memory(min_micros=0, min_bytes=0))
            .with_file_output(str(out)).with_node_names(show_name_regexes=["dense/.*"]).build())
        root = tf.profiler.profile(g, run_meta=md, options=opts)
    shown = [c.name for c in root.children]
    assert "dense/MatMul" in shown and all(n.startswith("dense/") for n in shown)
    matmul = next(c for c in root.children if c.name == "dense/MatMul")
    assert matmul.run_count == 1 and matmul.float_ops == 320
    assert root.total_exec_micros == sum(c.total_exec_micros for c in root.children)
    assert "dense/MatMul" in out.read_text()
    with pytest.raises(tf.errors.InvalidArgumentError, match="unknown cmd"):
        tf.profiler.profile(g, cmd="nope")


def test_loss_scaled_optimizer_steps_match_tensorflow():
    got = symbol_cases.loss_scale_steps(tf)
    want = EXPECTED["loss_scale_steps"]
    assert [s[::3] for s in got] == [[w[0], w[3]] for w in want]   # scale, global step
    assert [s[1] for s in got] == [w[1] for w in want]             # good steps
    np.testing.assert_allclose([s[2] for s in got], [w[2] for w in want], rtol=1e-6)


def test_mixed_precision_rewrite_refuses_what_tf_refuses():
    opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(
        tf.train.AdamOptimizer(), loss_scale=128)
    assert isinstance(opt, tf.mixed_precision.MixedPrecisionLossScaleOptimizer)
    with pytest.raises(ValueError, match="must not already be"):
        tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
    with pytest.raises(ValueError, match="must be an instance"):
        tf.train.experimental.enable_mixed_precision_graph_rewrite(object())


def test_guarantee_const_is_identity_without_gradient():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        y = tf.guarantee_const(x)
        assert y.op.type == "GuaranteeConst" and y.op.op_def.is_stateful
        with tf.Session() as sess:
            assert sess.run(y).tolist() == [1.0, 2.0]
        with pytest.raises(LookupError, match="GuaranteeConst"):
            tf.gradients(tf.reduce_sum(y * x), x)


def test_eager_switches():
    tf.disable_v2_behavior()   # TF1 already: nothing to do
    with pytest.raises(NotImplementedError, match="no eager mode"):
        tf.enable_eager_execution()
    assert not tf.executing_eagerly()


def test_autograph_passes_graph_code_through_and_refuses_tensor_control_flow():
    @tf.autograph.experimental.do_not_convert
    def plain(x):
        return x * 2.0

    def branchy(x):
        return x if x > 0 else -x

    with tf.Graph().as_default():
        x = tf.constant(3.0)
        assert plain is tf.autograph.experimental.do_not_convert()(plain)
        with tf.Session() as sess:
            assert sess.run(tf.autograph.to_graph(plain)(x)) == 6.0
        with pytest.raises(NotImplementedError, match="no AutoGraph converter"):
            tf.autograph.to_graph(branchy)(x)


def test_load_op_library_runs_a_python_op_library(tmp_path):
    # NOTE: the op is named Test*: it stays in the process's registry, and the op harness
    # skips such test-registered ops (it failed when this test ran first)
    lib = tmp_path / "twice_ops.py"
    lib.write_text(
        "import tensorweave as tf\n"
        "tf.register_op('TestTwiceIssue18', inputs=['x: T'], outputs=['y: T'],\n"
        "               attrs=['T: {float, double}'], shape_fn=lambda ctx: ctx.input_shape(0))\n"
        "tf.register_kernel('TestTwiceIssue18')(lambda node: lambda x: x * 2)\n")
    module = tf.load_op_library(str(lib))
    assert tf.load_op_library(str(lib)) is module
    with tf.Graph().as_default():
        y = module.test_twice_issue18(tf.constant([1.5, -2.0]))
        with tf.Session() as sess:
            assert sess.run(y).tolist() == [3.0, -4.0]


def test_library_loaders_name_why_they_cannot_load(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        tf.load_op_library(str(tmp_path / "missing.so"))
    so = tmp_path / "kernels.so"
    so.write_bytes(b"\x7fELF")
    with pytest.raises(tf.errors.NotFoundError, match="C\\+\\+ ABI"):
        tf.load_op_library(str(so))
    with pytest.raises(tf.errors.NotFoundError, match="C\\+\\+ ABI"):
        tf.load_file_system_library(str(so))
