"""tf.estimator: a custom model_fn trained, resumed, evaluated and used to predict; specs,
RunConfig and input_fn errors; canned estimators with TF's variable names."""

import json
import os

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.RandomState(0)
X = RNG.randn(120, 3).astype(np.float32)
Y = (X @ np.array([1.0, -2.0, 0.5]) > 0).astype(np.int64)


def _input(batch=20, epochs=None, shuffle=True, x=X, y=Y):
    return tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=batch,
                                              num_epochs=epochs, shuffle=shuffle)


def model_fn(features, labels, mode, params, config):
    logits = tf.layers.dense(tf.layers.dense(features["x"], 8, tf.nn.relu), 2)
    classes = tf.argmax(logits, 1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"classes": classes})
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    step = tf.train.AdamOptimizer(params["lr"]).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=step,
        eval_metric_ops={"accuracy": tf.metrics.accuracy(labels, classes)})


def test_train_resume_evaluate_predict(tmp_path):
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), params={"lr": 0.05})
    est.train(_input(), steps=30)
    assert est.latest_checkpoint().endswith("model.ckpt-30")
    est.train(_input(), steps=20)                      # resumes: 50
    est.train(_input(), max_steps=40)                  # already past: no-op
    assert est.get_variable_value("global_step") == 50
    res = est.evaluate(_input(epochs=1, shuffle=False, batch=40))
    assert res["global_step"] == 50 and res["accuracy"] > 0.9 and "loss" in res
    preds = list(est.predict(tf.estimator.inputs.numpy_input_fn(
        {"x": X[:7]}, batch_size=3, shuffle=False)))
    assert len(preds) == 7 and set(preds[0]) == {"classes"}
    assert os.listdir(tmp_path / "eval")            # eval events for TensorBoard
    assert any(f.startswith("events.out.tfevents") for f in os.listdir(tmp_path))
    assert "dense/kernel" in est.get_variable_names()


def test_evaluate_steps_and_name(tmp_path):
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), params={"lr": 0.05})
    est.train(_input(), steps=5)
    res = est.evaluate(_input(batch=10), steps=2, name="val")
    assert res["global_step"] == 5
    assert os.listdir(tmp_path / "eval_val")


def test_model_fn_returning_wrong_thing_is_a_type_error(tmp_path):
    est = tf.estimator.Estimator(lambda features, labels, mode: {"loss": 1},
                                 model_dir=str(tmp_path))
    with pytest.raises(TypeError, match="should return an EstimatorSpec"):
        est.train(_input(), steps=1)


def test_spec_checks():
    with tf.Graph().as_default():
        loss = tf.constant(1.0)
        with pytest.raises(ValueError, match="Missing train_op"):
            tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=loss)
        with pytest.raises(TypeError, match="loss must be a scalar Tensor"):
            tf.estimator.EstimatorSpec("eval", loss=tf.constant([1.0, 2.0]))
        with pytest.raises(TypeError, match="eval_metric_ops"):
            tf.estimator.EstimatorSpec("eval", loss=loss, eval_metric_ops={"a": loss})
        with pytest.raises(TypeError, match="predictions must be Tensor"):
            tf.estimator.EstimatorSpec("infer", predictions={"a": 3})


def test_train_argument_errors(tmp_path):
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), params={"lr": 0.1})
    with pytest.raises(ValueError, match="both steps and max_steps"):
        est.train(_input(), steps=1, max_steps=2)
    with pytest.raises(ValueError, match="shuffle must be provided explicitly"):
        tf.estimator.inputs.numpy_input_fn({"x": X}, Y)
    with pytest.raises(ValueError, match="must include features"):
        tf.estimator.Estimator(lambda x: x)


def test_run_config_reads_tf_config(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": {"chief": ["h:1"], "worker": ["h:2", "h:3"], "ps": ["h:4"]},
        "task": {"type": "worker", "index": 1}}))
    cfg = tf.estimator.RunConfig(save_checkpoints_steps=10)
    assert (cfg.task_type, cfg.task_id, cfg.is_chief) == ("worker", 1, False)
    assert cfg.master == "grpc://h:3" and cfg.num_ps_replicas == 1
    assert cfg.num_worker_replicas == 3 and cfg.save_checkpoints_secs is None
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"chief": ["h:1"]},
                                                "task": {"type": "chief", "index": 0}}))
    assert tf.estimator.RunConfig().is_chief
    with pytest.raises(ValueError, match="both save_checkpoints_steps"):
        tf.estimator.RunConfig(save_checkpoints_steps=5, save_checkpoints_secs=5)


def test_checkpoint_every_n_steps_and_keep_max(tmp_path):
    cfg = tf.estimator.RunConfig(save_checkpoints_steps=4, keep_checkpoint_max=2)
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), config=cfg,
                                 params={"lr": 0.05})
    est.train(_input(), steps=12)
    kept = sorted(f for f in os.listdir(tmp_path) if f.endswith(".index"))
    assert kept == ["model.ckpt-12.index", "model.ckpt-8.index"]


def test_train_and_evaluate(tmp_path):
    cfg = tf.estimator.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=10)
    est = tf.estimator.Estimator(model_fn, config=cfg, params={"lr": 0.05})
    metrics, _ = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(_input(), max_steps=25),
        tf.estimator.EvalSpec(_input(batch=40, epochs=1, shuffle=False), steps=None))
    assert metrics["global_step"] == 25 and metrics["accuracy"] > 0.8
    with pytest.raises(TypeError, match="TrainSpec"):
        tf.estimator.train_and_evaluate(est, None, None)


def test_export_saved_model_serves_the_predict_graph(tmp_path):
    from tensorweave.saved_model import loader

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "m"), params={"lr": 0.05})
    with pytest.raises(ValueError, match="Couldn't find trained model"):
        est.export_saved_model(str(tmp_path / "export"), lambda: None)
    est.train(_input(), steps=30)
    want = [p["classes"] for p in est.predict(_input(epochs=1, shuffle=False))]
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 3])})
    path = est.export_saved_model(str(tmp_path / "export"), receiver).decode()
    assert os.path.dirname(path) == str(tmp_path / "export")
    with tf.Session(graph=tf.Graph()) as sess:
        meta = loader.load(sess, ["serve"], path)
        sig = meta.signature_def["serving_default"]
        got = sess.run(sig.outputs["classes"].name, {sig.inputs["x"].name: X})
    np.testing.assert_array_equal(got, want)


def _receiver():
    return tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 3])})


def test_train_and_evaluate_runs_the_exporters_after_each_evaluation(tmp_path):
    from tensorweave.saved_model import loader

    cfg = tf.estimator.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=4)
    est = tf.estimator.Estimator(model_fn, config=cfg, params={"lr": 0.05})
    exporters = [tf.estimator.LatestExporter("latest", _receiver(), exports_to_keep=1),
                 tf.estimator.BestExporter("best", _receiver()),
                 tf.estimator.FinalExporter("final", _receiver())]
    metrics, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(_input(), max_steps=8),
        tf.estimator.EvalSpec(_input(batch=40, epochs=1, shuffle=False), steps=None,
                              exporters=exporters))
    assert metrics["global_step"] == 8 and len(exports) == 3
    latest, best, final = exports
    export = tmp_path / "export"
    assert os.listdir(export / "latest") == [os.path.basename(latest.decode())]  # 1 kept
    assert os.listdir(export / "final") == [os.path.basename(final.decode())]    # once
    assert best is None or os.path.dirname(best.decode()) == str(export / "best")
    assert len(os.listdir(export / "best")) >= 1  # the first evaluation is the best so far
    with tf.Session(graph=tf.Graph()) as sess:
        sig = loader.load(sess, ["serve"], final.decode()).signature_def["serving_default"]
        got = sess.run(sig.outputs["classes"].name, {sig.inputs["x"].name: X})
    np.testing.assert_array_equal(
        got, [p["classes"] for p in est.predict(_input(epochs=1, shuffle=False))])
    # a new BestExporter reads the best result back from the eval events: no worse export
    worse = dict(metrics, loss=metrics["loss"] + 1.0)
    again = tf.estimator.BestExporter("best", _receiver())
    assert again.export(est, str(export / "best"), est.latest_checkpoint(), worse,
                        False) is None


def test_exporter_arguments_are_checked_as_tf_does():
    with pytest.raises(ValueError, match="best_eval_result"):
        tf.estimator.BestExporter(compare_fn=lambda a, b: True)
    with pytest.raises(ValueError, match="exports_to_keep"):
        tf.estimator.LatestExporter("l", _receiver(), exports_to_keep=0)
    with pytest.raises(TypeError, match="Exporter"):
        tf.estimator.EvalSpec(_input(), exporters=["not an exporter"])
    with pytest.raises(ValueError, match="unique names"):
        tf.estimator.EvalSpec(_input(), exporters=[tf.estimator.FinalExporter("x", None)] * 2)
    from tensorweave.estimator.exporter import _loss_smaller

    assert _loss_smaller({"loss": 2.0}, {"loss": 1.0}) and not _loss_smaller({"loss": 1.0},
                                                                             {"loss": 2.0})
    with pytest.raises(ValueError, match="no loss"):
        _loss_smaller({"loss": 1.0}, {"accuracy": 1.0})


def _iris_like():
    x = RNG.rand(90, 2).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 1).astype(np.int64)
    return {"a": x[:, 0], "b": x[:, 1], "c": np.where(y == 1, "hi", "lo").astype(object)}, y


@pytest.mark.parametrize("kind", ["dnn", "linear", "combined", "dnn_regressor",
                                  "linear_regressor"])
def test_canned_estimators_have_tf_variable_names(tmp_path, kind):
    fc = tf.feature_column
    num = [fc.numeric_column("a"), fc.numeric_column("b")]
    cat = fc.categorical_column_with_vocabulary_list("c", ["hi", "lo"])
    make = {
        "dnn": lambda: tf.estimator.DNNClassifier(
            [4, 3], num + [fc.embedding_column(cat, 2)], model_dir=str(tmp_path)),
        "linear": lambda: tf.estimator.LinearClassifier(num + [cat], model_dir=str(tmp_path)),
        "combined": lambda: tf.estimator.DNNLinearCombinedClassifier(
            model_dir=str(tmp_path), linear_feature_columns=[cat], dnn_feature_columns=num,
            dnn_hidden_units=[3]),
        "dnn_regressor": lambda: tf.estimator.DNNRegressor([3], num, model_dir=str(tmp_path)),
        "linear_regressor": lambda: tf.estimator.LinearRegressor(num,
                                                                 model_dir=str(tmp_path)),
    }
    est = make[kind]()
    x, y = _iris_like()
    est.train(tf.estimator.inputs.numpy_input_fn(x, y.astype(np.float32) if "regressor" in kind
                                                 else y, batch_size=30, num_epochs=2,
                                                 shuffle=True))
    names = set(est.get_variable_names())
    want = {
        "dnn": {"dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_1/bias", "dnn/logits/kernel",
                "dnn/input_from_feature_columns/input_layer/c_embedding/embedding_weights"},
        "linear": {"linear/linear_model/a/weights", "linear/linear_model/c/weights",
                   "linear/linear_model/bias_weights"},
        "combined": {"dnn/hiddenlayer_0/kernel", "dnn/logits/bias",
                     "linear/linear_model/c/weights", "linear/linear_model/bias_weights"},
        "dnn_regressor": {"dnn/hiddenlayer_0/kernel", "dnn/logits/bias"},
        "linear_regressor": {"linear/linear_model/b/weights"},
    }[kind]
    assert want <= names and "global_step" in names
    res = est.evaluate(tf.estimator.inputs.numpy_input_fn(
        x, y.astype(np.float32) if "regressor" in kind else y, shuffle=False))
    assert res["global_step"] == 6
    keys = {"average_loss", "loss"} | ({"label/mean", "prediction/mean"}
                                       if kind in ("linear", "combined") or "regressor" in kind
                                       else set())
    assert keys <= set(res)
    if kind in ("linear", "combined", "dnn"):
        assert {"accuracy", "auc", "auc_precision_recall", "precision", "recall",
                "accuracy_baseline"} <= set(res)
