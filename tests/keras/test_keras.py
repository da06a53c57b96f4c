"""tf.keras behaviour in graph mode: names, functional graphs and layer sharing, Sequential
building, fit/evaluate/predict and callbacks, saving, Keras layers in a plain TF1 loop."""

import numpy as np
import pytest

import tensorweave as tf

keras = tf.keras
K = keras.backend


@pytest.fixture(autouse=True)
def _fresh():
    K.clear_session()
    yield
    K.clear_session()


def _digits(n=400):
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    return (x[:n] / 16.0).astype(np.float32), y[:n]


def test_layer_and_variable_names_are_keras_names():
    x = keras.Input(shape=(4,))
    hidden = keras.layers.Dense(5, activation="relu")
    y = keras.layers.Dense(3)(hidden(x))
    model = keras.Model(x, y)
    assert [layer.name for layer in model.layers] == ["input_1", "dense", "dense_1"]
    assert [w.name for w in model.weights] == ["dense/kernel:0", "dense/bias:0",
                                               "dense_1/kernel:0", "dense_1/bias:0"]
    assert K.int_shape(y) == (None, 3)


def test_shared_layers_and_calling_a_model_on_new_inputs_reuse_weights():
    dense = keras.layers.Dense(2, kernel_initializer="ones", bias_initializer="zeros")
    a, b = keras.Input(shape=(3,)), keras.Input(shape=(3,))
    model = keras.Model([a, b], keras.layers.add([dense(a), dense(b)]))
    assert len(model.weights) == 2
    c = tf.placeholder(tf.float32, [None, 3])
    again = model([c, c])
    sess = K.get_session()
    got = sess.run(again, {c: np.ones((1, 3), np.float32)})
    np.testing.assert_allclose(got, [[6.0, 6.0]])
    np.testing.assert_allclose(model.predict([np.ones((2, 3)), np.zeros((2, 3))]),
                               np.full((2, 2), 3.0))


def test_a_disconnected_graph_is_refused():
    a, b = keras.Input(shape=(3,)), keras.Input(shape=(3,))
    with pytest.raises(ValueError, match="Graph disconnected"):
        keras.Model(a, keras.layers.Dense(1)(b))


def test_sequential_fit_learns_digits_and_reports_history(capsys):
    x, y = _digits()
    model = keras.Sequential([keras.layers.Dense(32, activation="relu", input_shape=(64,)),
                              keras.layers.Dropout(0.1),
                              keras.layers.Dense(10, activation="softmax")])
    model.compile(optimizer=keras.optimizers.Adam(0.01),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=8, batch_size=32, validation_split=0.25, verbose=1)
    assert set(history.history) == {"loss", "acc", "val_loss", "val_acc"}  # TF 1.x's names
    assert history.history["loss"][-1] < history.history["loss"][0] * 0.5
    assert history.history["val_acc"][-1] > 0.8
    out = capsys.readouterr().out
    assert "Epoch 8/8" in out and "300/300 [==============================]" in out
    loss, acc = model.evaluate(x, y, verbose=0)
    assert acc > 0.85 and model.metrics_names == ["loss", "acc"]
    assert model.predict(x[:5]).shape == (5, 10)


def test_dropout_and_batch_norm_follow_the_learning_phase():
    x = keras.Input(shape=(6,))
    y = keras.layers.BatchNormalization()(keras.layers.Dropout(0.5)(x))
    model = keras.Model(x, y)
    data = np.random.default_rng(0).standard_normal((64, 6)).astype(np.float32) + 3
    np.testing.assert_allclose(model.predict(data), data / np.sqrt(1 + 1e-3), rtol=1e-5)
    model.compile("sgd", "mse")
    moving = model.layers[-1].weights[2]
    before = K.get_value(moving)
    model.train_on_batch(data, data)
    assert not np.allclose(K.get_value(moving), before)   # training updated the moving mean


def test_callbacks_early_stopping_checkpoint_scheduler_csv(tmp_path):
    x, y = _digits(200)
    model = keras.Sequential([keras.layers.Dense(10, activation="softmax", input_shape=(64,))])
    model.compile(keras.optimizers.SGD(0.5), "sparse_categorical_crossentropy",
                  metrics=["acc"])
    seen = []
    cbs = [keras.callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=10.0),
           keras.callbacks.ModelCheckpoint(str(tmp_path / "w.{epoch:02d}.h5"),
                                           save_weights_only=True),
           keras.callbacks.LearningRateScheduler(lambda epoch: 0.1 / (epoch + 1)),
           keras.callbacks.CSVLogger(str(tmp_path / "log.csv")),
           keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(e))]
    history = model.fit(x, y, epochs=10, verbose=0, callbacks=cbs)
    assert len(history.epoch) == 2 and seen == [0, 1]     # stopped: no 10.0 improvement
    assert (tmp_path / "w.01.h5").exists() and (tmp_path / "w.02.h5").exists()
    assert np.isclose(K.get_value(model.optimizer.lr), 0.05)
    rows = (tmp_path / "log.csv").read_text().splitlines()
    assert rows[0].split(",")[:2] == ["epoch", "acc"] and len(rows) == 3


def test_save_and_load_weights_h5_and_checkpoint_and_whole_model(tmp_path):
    x, y = _digits(100)
    inputs = keras.Input(shape=(64,))
    outputs = keras.layers.Dense(10, activation="softmax")(
        keras.layers.Dense(16, activation="relu")(inputs))
    model = keras.Model(inputs, outputs)
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=1, verbose=0)
    want = model.predict(x)
    model.save_weights(str(tmp_path / "w.h5"))
    model.save_weights(str(tmp_path / "ckpt"))
    model.save(str(tmp_path / "model.h5"))
    config = model.to_json()
    K.clear_session()
    clone = keras.models.model_from_json(config)
    clone.load_weights(str(tmp_path / "w.h5"))
    np.testing.assert_allclose(clone.predict(x), want, rtol=1e-6)
    K.clear_session()
    clone = keras.models.model_from_json(config)
    clone.load_weights(str(tmp_path / "ckpt"))
    np.testing.assert_allclose(clone.predict(x), want, rtol=1e-6)
    K.clear_session()
    loaded = keras.models.load_model(str(tmp_path / "model.h5"))
    np.testing.assert_allclose(loaded.predict(x), want, rtol=1e-6)
    assert loaded.metrics_names == ["loss", "acc"]


def test_keras_layers_in_a_plain_tf1_training_loop():
    x = tf.placeholder(tf.float32, [None, 64])
    labels = tf.placeholder(tf.int64, [None])
    hidden = keras.layers.Dense(32, activation="relu")(x)
    logits = keras.layers.Dense(10)(hidden)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                         logits=logits))
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    data, target = _digits()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: data, labels: target})
        for _ in range(60):
            sess.run(train, {x: data, labels: target})
        assert sess.run(loss, {x: data, labels: target}) < first * 0.3


def test_subclassed_model_and_lstm_learn():
    class Classifier(keras.Model):
        def __init__(self):
            super().__init__()
            self.lstm = keras.layers.LSTM(16)
            self.out = keras.layers.Dense(2, activation="softmax")

        def call(self, inputs):
            return self.out(self.lstm(inputs))

    rng = np.random.default_rng(0)
    seqs = rng.standard_normal((96, 7, 3)).astype(np.float32)
    labels = (seqs[:, :, 0].sum(axis=1) > 0).astype(np.int64)
    inputs = keras.Input(shape=(7, 3))
    net = Classifier()
    model = keras.Model(inputs, net(inputs))
    assert sorted(w.name for w in net.weights) == [
        "classifier/dense/bias:0", "classifier/dense/kernel:0", "classifier/lstm/bias:0",
        "classifier/lstm/kernel:0", "classifier/lstm/recurrent_kernel:0"]
    model.compile(keras.optimizers.Adam(0.03), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(seqs, labels, epochs=15, batch_size=32, verbose=0)
    assert history.history["acc"][-1] > 0.85


def test_bad_input_gets_keras_errors():
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(np.ones((4, 3)), np.ones((4, 2)))
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match="expected dense_input to have shape"):
        model.fit(np.ones((4, 5)), np.ones((4, 2)), verbose=0)
    with pytest.raises(ValueError, match="Unknown loss function"):
        model.compile("sgd", "no_such_loss")
    with pytest.raises(ValueError, match="Could not interpret optimizer"):
        model.compile("no_such_optimizer", "mse")


# Symbols of the 17 public TF1 codebases (../shared/reference) not built yet, with the reason.
NOT_YET = {
    "keras.estimator.model_to_estimator": "needs tf.estimator (the training-loop issue)",
}


def test_every_keras_symbol_of_the_tf1_codebases_exists():
    import csv
    from pathlib import Path

    table = Path(__file__).resolve().parents[3] / "shared" / "reference" / \
        "tf_v1_symbol_usage.tsv"
    if not table.exists():
        pytest.skip(f"{table} not found")
    with table.open() as f:
        symbols = [row["symbol"] for row in csv.DictReader(f, delimiter="\t")
                   if row["symbol"].split(".")[0] == "keras"]
    missing = []
    for symbol in symbols:
        obj = tf
        for part in symbol.split("."):
            obj = getattr(obj, part, None)
        if obj is None and symbol not in NOT_YET:
            missing.append(symbol)
    assert len(symbols) > 20 and missing == []


def test_noise_layers_act_in_training_only():
    x = keras.Input(shape=(5,))
    model = keras.Model(x, keras.layers.GaussianNoise(1.0)(keras.layers.SpatialDropout1D(0.5)(
        keras.layers.Reshape((5, 1))(x))))
    data = np.ones((3, 5), np.float32)
    np.testing.assert_array_equal(model.predict(data), data[..., None])
    noisy = K.get_session().run(model.call(model.inputs[0], training=True),
                                {model.inputs[0]: data})
    assert not np.allclose(noisy, data[..., None])


def test_inception_v3_has_kerass_layout_and_parameter_count():
    model = keras.applications.InceptionV3(weights=None)
    assert model.count_params() == 23_851_784           # Keras's figure for the 1000-class top
    names = [layer.name for layer in model.layers]
    assert [n for n in names if n.startswith("mixed")][:3] == ["mixed0", "mixed1", "mixed2"]
    assert names[-2:] == ["avg_pool", "predictions"] and "mixed10" in names
    assert K.int_shape(model.output) == (None, 1000)
    with pytest.raises(FileNotFoundError, match="does not download"):
        keras.applications.InceptionV3(weights="imagenet", include_top=False)
    small = keras.applications.InceptionV3(weights=None, include_top=False,
                                           input_shape=(75, 75, 3), pooling="avg")
    assert K.int_shape(small.output) == (None, 2048)


def test_masks_from_embedding_hold_the_lstm_state_over_padding():
    """An LSTM over [ids..., 0, 0] with mask_zero gives the output it gives over [ids...];
    a masked mean ignores the padding too."""
    ids = keras.Input(shape=(None,), dtype="int32")
    embedded = keras.layers.Embedding(10, 4, mask_zero=True)(ids)
    last = keras.layers.LSTM(3)(embedded)
    mean = keras.layers.GlobalAveragePooling1D()(embedded)
    model = keras.Model(ids, [last, mean])
    short = np.array([[3, 5, 7]])
    padded = np.array([[3, 5, 7, 0, 0]])
    for got, want in zip(model.predict(padded), model.predict(short)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    unmasked = keras.Model(ids, keras.layers.LSTM(3)(keras.layers.Embedding(10, 4)(ids)))
    a, b = unmasked.predict(padded), unmasked.predict(short)
    assert not np.allclose(a, b)


def test_savedmodel_export_serves_and_loads_back(tmp_path):
    from tensorweave.saved_model import loader

    x, y = _digits(64)
    model = keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(64,)),
                              keras.layers.Dropout(0.5),
                              keras.layers.Dense(10, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=1, verbose=0)
    want = model.predict(x)
    model.save(str(tmp_path / "sm"))
    K.clear_session()
    with tf.Session(graph=tf.Graph()) as sess:
        meta = loader.load(sess, ["serve"], str(tmp_path / "sm"))
        sig = meta.signature_def["serving_default"]
        (name, info), = sig.inputs.items()
        (_, out), = sig.outputs.items()
        got = sess.run(out.name, {info.name: x})
    assert name == "dense_input"
    np.testing.assert_allclose(got, want, rtol=1e-5)    # dropout off in the served graph
    loaded = keras.models.load_model(str(tmp_path / "sm"))
    np.testing.assert_allclose(loaded.predict(x), want, rtol=1e-5)
    assert loaded.metrics_names == ["loss", "acc"]


def test_model_to_estimator_trains_from_the_keras_weights(tmp_path):
    x, y = _digits(300)
    model = keras.Sequential([keras.layers.Dense(32, activation="relu", input_shape=(64,),
                                                 name="hidden"),
                              keras.layers.Dense(10, activation="softmax", name="probs")])
    model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(x, y, epochs=5, verbose=0)
    keras_acc = model.evaluate(x, y, verbose=0)[1]
    estimator = keras.estimator.model_to_estimator(keras_model=model,
                                                   model_dir=str(tmp_path / "est"))
    predict_fn = tf.estimator.inputs.numpy_input_fn({"hidden_input": x}, shuffle=False)
    probs = np.stack([p["probs"] for p in estimator.predict(predict_fn)])
    assert (probs.argmax(1) == y).mean() == pytest.approx(keras_acc, abs=1e-6)  # warm start
    train_fn = tf.estimator.inputs.numpy_input_fn({"hidden_input": x}, y.astype(np.float32),
                                                  batch_size=32, num_epochs=None,
                                                  shuffle=True)
    estimator.train(train_fn, steps=30)
    eval_fn = tf.estimator.inputs.numpy_input_fn({"hidden_input": x}, y.astype(np.float32),
                                                 shuffle=False)
    metrics = estimator.evaluate(eval_fn)
    assert metrics["global_step"] == 30 and metrics["loss"] < 0.5


def test_weight_regularizers_reach_the_loss_in_every_layer_family():
    """kernel/recurrent/depthwise/bias regularizers add REGULARIZATION_LOSSES (none ignored)."""
    reg = keras.regularizers.l2(0.1)
    x = keras.Input(shape=(6, 6, 2))
    y = keras.layers.DepthwiseConv2D(3, depthwise_regularizer=reg, bias_regularizer=reg)(x)
    y = keras.layers.SeparableConv2D(2, 3, pointwise_regularizer=reg)(y)
    y = keras.layers.Reshape((2, 2))(y)
    y = keras.layers.LSTM(3, kernel_regularizer=reg, recurrent_regularizer=reg)(y)
    model = keras.Model(x, y)
    assert len(model.losses) == 5
    with pytest.raises(NotImplementedError, match="reset_after"):
        keras.layers.GRU(3, reset_after=True)
