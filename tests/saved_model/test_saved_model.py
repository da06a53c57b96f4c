"""SavedModel: builder/loader/simple_save round trips, TF's own SavedModel (tf_saved_model/,
written by make_tf_saved_model.py with the TF peer) loading here, and ours loading in TF."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.proto import saved_model_pb2

HERE = Path(__file__).resolve().parent
TF_MODEL = HERE / "tf_saved_model"
EXPECTED = np.load(HERE / "tf_saved_model.expected.npz")


def _example(row) -> bytes:
    return tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=row))})).SerializeToString()


def _dense_model(sess):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.get_variable("w", initializer=np.arange(6, dtype=np.float32).reshape(3, 2))
    b = tf.get_variable("b", initializer=np.array([0.5, -0.5], np.float32))
    y = tf.nn.softmax(tf.matmul(x, w) + b, name="y")
    sess.run(tf.global_variables_initializer())
    return x, y, sess.run(y, {x: EXPECTED["x"]})


def test_simple_save_round_trip(tmp_path):
    export = str(tmp_path / "m")
    with tf.Graph().as_default(), tf.Session() as sess:
        x, y, want = _dense_model(sess)
        tf.saved_model.simple_save(sess, export, {"x": x}, {"y": y})
    assert sorted(os.listdir(tmp_path / "m" / "variables")) == [
        "variables.data-00000-of-00001", "variables.index"]
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export)
        sig = meta.signature_def[tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        assert sig.method_name == "tensorflow/serving/predict"
        assert list(sig.inputs["x"].tensor_shape.dim[1:]) and sig.inputs["x"].name == "x:0"
        got = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: EXPECTED["x"]})
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_builder_two_meta_graphs_and_tags(tmp_path):
    export = str(tmp_path / "m")
    builder = tf.saved_model.builder.SavedModelBuilder(export)
    with pytest.raises(AssertionError, match="has not been saved yet"):
        builder.add_meta_graph(["eval"])
    with tf.Session() as sess:
        x, y, want = _dense_model(sess)
        sig = tf.saved_model.predict_signature_def({"x": x}, {"y": y})
        builder.add_meta_graph_and_variables(sess, ["serve"], {"serving_default": sig})
        with pytest.raises(AssertionError, match="already been saved"):
            builder.add_meta_graph_and_variables(sess, ["serve"])
        doubled = tf.multiply(y, 2.0, name="doubled")
        builder.add_meta_graph(["eval", "gpu"], {"d": tf.saved_model.predict_signature_def(
            {"x": x}, {"d": doubled})})
    assert builder.save().endswith(b"saved_model.pb")
    model = saved_model_pb2.SavedModel.FromString((tmp_path / "m" / "saved_model.pb").read_bytes())
    assert model.saved_model_schema_version == 1
    assert [list(m.meta_info_def.tags) for m in model.meta_graphs] == [["serve"], ["eval", "gpu"]]
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["gpu", "eval"], export)
        got = sess.run("doubled:0", {"x:0": EXPECTED["x"]})
    np.testing.assert_allclose(got, 2 * want, rtol=1e-6)
    with tf.Graph().as_default(), tf.Session() as sess, \
            pytest.raises(RuntimeError, match="could not be found in SavedModel"):
        tf.saved_model.loader.load(sess, ["train"], export)
    assert meta.meta_info_def.tags == ["eval", "gpu"]


def test_builder_refuses_a_non_empty_directory(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(AssertionError, match="already exists, and isn't empty"):
        tf.saved_model.builder.SavedModelBuilder(str(tmp_path))


def test_load_without_saved_model_is_an_os_error(tmp_path):
    with tf.Session() as sess, pytest.raises(OSError, match="SavedModel file does not exist"):
        tf.saved_model.loader.load(sess, ["serve"], str(tmp_path))
    assert not tf.saved_model.loader.maybe_saved_model_directory(str(tmp_path))
    assert tf.saved_model.contains_saved_model(str(TF_MODEL))


def test_assets_are_copied_and_fed_to_the_main_op(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    export = str(tmp_path / "m")
    with tf.Session() as sess:
        asset = tf.constant(str(vocab), name="asset_filepath")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
        path = tf.Variable(asset, trainable=False, name="path",
                           collections=[tf.GraphKeys.LOCAL_VARIABLES])
        builder = tf.saved_model.builder.SavedModelBuilder(export)
        builder.add_meta_graph_and_variables(
            sess, ["serve"], assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
            main_op=tf.saved_model.main_op.main_op())
        builder.save()
        assert path.name == "path:0"
    assert (tmp_path / "m" / "assets" / "vocab.txt").read_text() == "a\nb\n"
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["serve"], export)
        got = sess.run("path/read:0").decode()
    assert got == os.path.join(export, "assets", "vocab.txt")


def test_signature_def_utils_check_their_inputs():
    x = tf.placeholder(tf.float32, [None, 2])
    s = tf.placeholder(tf.string, [None])
    with pytest.raises(ValueError, match="Prediction inputs cannot be None or empty"):
        tf.saved_model.predict_signature_def({}, {"y": x})
    with pytest.raises(ValueError, match="examples must be a string"):
        tf.saved_model.classification_signature_def(x, None, x)
    with pytest.raises(ValueError, match="cannot both be None"):
        tf.saved_model.classification_signature_def(s, None, None)
    with pytest.raises(ValueError, match="predictions must be a float"):
        tf.saved_model.regression_signature_def(s, s)
    sig = tf.saved_model.regression_signature_def(s, x)
    assert sig.method_name == "tensorflow/serving/regress" and sig.inputs["inputs"].dtype == 7
    assert tf.saved_model.is_valid_signature(sig)
    bad = tf.saved_model.build_signature_def({"inputs": tf.saved_model.build_tensor_info(x)},
                                             sig.outputs, sig.method_name)
    assert not tf.saved_model.is_valid_signature(bad)
    assert tf.saved_model.get_tensor_from_tensor_info(sig.outputs["outputs"]) is x


def test_tensorflow_saved_model_loads_and_runs_here():
    with tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(TF_MODEL))
        sig = meta.signature_def["serving_default"]
        probs, logits = sess.run([sig.outputs["probs"].name, sig.outputs["logits"].name],
                                 {sig.inputs["x"].name: EXPECTED["x"]})
        examples = [_example(r) for r in EXPECTED["x"]]
        cls, reg = meta.signature_def["classify"], meta.signature_def["regress"]
        scores = sess.run(cls.outputs["scores"].name, {cls.inputs["inputs"].name: examples})
        regress = sess.run(reg.outputs["outputs"].name, {reg.inputs["inputs"].name: examples})
        path = sess.run(meta.signature_def["asset"].outputs["path"].name).decode()
    for got, key in [(probs, "probs"), (logits, "logits"), (scores, "scores"),
                     (regress, "regress")]:
        np.testing.assert_allclose(got, EXPECTED[key], rtol=1e-5, atol=1e-6)
    assert path == os.path.join(str(TF_MODEL), "assets", "vocab.txt")


@pytest.mark.slow
def test_our_saved_model_runs_in_tensorflow(tmp_path, tf_peer):
    export = str(tmp_path / "m")
    with tf.Session() as sess:
        x, y, want = _dense_model(sess)
        builder = tf.saved_model.Builder(export)
        builder.add_meta_graph_and_variables(sess, ["serve"], {
            "serving_default": tf.saved_model.predict_signature_def({"x": x}, {"y": y})},
            main_op=tf.saved_model.main_op.main_op())
        builder.save()
    np.savez(tmp_path / "in.npz", x=EXPECTED["x"])
    cmd = [tf_peer, str(HERE / "tf_run_saved_model.py"), export, "serving_default",
           str(tmp_path / "in.npz"), str(tmp_path / "out.npz")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["y"], want, rtol=1e-5)
    assert sys.executable
