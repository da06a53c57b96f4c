"""The export hook an Estimator calls: a serving graph with the trained variables restored,
written to a timestamped directory (via temp-<ts>) that `tensorweave serve` can serve."""

import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.saved_model import export
from tensorweave.serving.servable import Servable


def _train(ckpt_dir) -> str:
    with tf.Graph().as_default(), tf.Session() as sess:
        w = tf.get_variable("w", initializer=np.zeros((3, 1), np.float32))
        sess.run(tf.assign(w, [[1.0], [2.0], [3.0]]))
        return tf.train.Saver().save(sess, os.path.join(ckpt_dir, "model"), global_step=7)


def _serving_graph():
    receiver = export.build_parsing_serving_input_receiver_fn(
        {"x": tf.FixedLenFeature([3], tf.float32)})()
    w = tf.get_variable("w", [3, 1])
    y = tf.matmul(receiver.features["x"], w)
    return receiver.receiver_tensors, {
        "serving_default": export.RegressionOutput(y),
        "predict": export.PredictOutput({"y": y}),
    }


def test_export_saved_model_restores_the_checkpoint(tmp_path):
    ckpt = _train(str(tmp_path / "ckpt"))
    path = export.export_saved_model(str(tmp_path / "export"), _serving_graph, ckpt).decode()
    assert os.path.dirname(path) == str(tmp_path / "export")
    assert os.path.basename(path).isdigit() and os.listdir(tmp_path / "export") == [
        os.path.basename(path)]
    servable = Servable(1, path)
    example = tf.train.Example(features=tf.train.Features(feature={"x": tf.train.Feature(
        float_list=tf.train.FloatList(value=[1.0, 1.0, 2.0]))})).SerializeToString()
    out = servable.run("predict", {"examples": np.array([example], object)})
    np.testing.assert_allclose(out["y"], [[9.0]])
    assert servable.signature(None).method_name == "tensorflow/serving/regress"
    servable.unload()


def test_export_outputs_check_their_receivers():
    x = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(ValueError, match="single string Tensor"):
        export.ClassificationOutput(scores=x).as_signature_def({"x": x})
    with pytest.raises(ValueError, match="At least one of scores and classes"):
        export.ClassificationOutput()
    with pytest.raises(ValueError, match="Couldn't find trained model"):
        export.export_saved_model("/tmp/nowhere", _serving_graph, None)
