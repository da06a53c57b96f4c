"""Every Keras layer family builds with TF 1.15's output shapes and weight names, and a model
of them trains one step (gradients reach every weight)."""

import numpy as np
import pytest

import tensorweave as tf

keras = tf.keras
L = keras.layers


@pytest.fixture(autouse=True)
def _fresh():
    keras.backend.clear_session()
    yield
    keras.backend.clear_session()


CASES = [  # (layer factory, input shape without batch, output shape without batch, weights)
    (lambda: L.Conv1D(4, 3), (10, 2), (8, 4), ["kernel", "bias"]),
    (lambda: L.Conv2D(3, 2, strides=2, padding="same"), (6, 6, 2), (3, 3, 3),
     ["kernel", "bias"]),
    (lambda: L.Conv2DTranspose(3, 2, strides=2), (3, 3, 2), (6, 6, 3), ["kernel", "bias"]),
    (lambda: L.DepthwiseConv2D(3, depth_multiplier=2), (6, 6, 2), (4, 4, 4),
     ["depthwise_kernel", "bias"]),
    (lambda: L.SeparableConv2D(5, 3, padding="same"), (6, 6, 2), (6, 6, 5),
     ["depthwise_kernel", "pointwise_kernel", "bias"]),
    (lambda: L.SeparableConv1D(5, 3), (8, 2), (6, 5),
     ["depthwise_kernel", "pointwise_kernel", "bias"]),
    (lambda: L.GaussianNoise(0.1), (4,), (4,), []),
    (lambda: L.GaussianDropout(0.2), (4,), (4,), []),
    (lambda: L.AlphaDropout(0.2), (4,), (4,), []),
    (lambda: L.SpatialDropout1D(0.2), (5, 4), (5, 4), []),
    (lambda: L.SpatialDropout2D(0.2), (3, 3, 4), (3, 3, 4), []),
    (lambda: L.MaxPooling1D(2), (10, 3), (5, 3), []),
    (lambda: L.AveragePooling2D(), (6, 6, 2), (3, 3, 2), []),
    (lambda: L.GlobalAveragePooling2D(), (4, 4, 5), (5,), []),
    (lambda: L.GlobalMaxPooling1D(), (7, 5), (5,), []),
    (lambda: L.ZeroPadding2D(1), (3, 3, 2), (5, 5, 2), []),
    (lambda: L.Cropping2D(((1, 0), (0, 1))), (4, 4, 2), (3, 3, 2), []),
    (lambda: L.UpSampling2D(), (3, 3, 2), (6, 6, 2), []),
    (lambda: L.Reshape((4, 3)), (12,), (4, 3), []),
    (lambda: L.Permute((2, 1)), (4, 3), (3, 4), []),
    (lambda: L.RepeatVector(3), (5,), (3, 5), []),
    (lambda: L.Flatten(), (2, 3, 4), (24,), []),
    (lambda: L.Embedding(20, 4), (6,), (6, 4), ["embeddings"]),
    (lambda: L.SimpleRNN(5, return_sequences=True), (6, 3), (6, 5),
     ["kernel", "recurrent_kernel", "bias"]),
    (lambda: L.GRU(5), (6, 3), (5,), ["kernel", "recurrent_kernel", "bias"]),
    (lambda: L.LSTM(5, return_sequences=True, go_backwards=True), (6, 3), (6, 5),
     ["kernel", "recurrent_kernel", "bias"]),
    (lambda: L.Bidirectional(L.LSTM(4)), (6, 3), (8,), None),
    (lambda: L.TimeDistributed(L.Dense(2)), (5, 3), (5, 2), None),
    (lambda: L.BatchNormalization(), (4,), (4,),
     ["gamma", "beta", "moving_mean", "moving_variance"]),
    (lambda: L.LayerNormalization(), (4,), (4,), ["gamma", "beta"]),
    (lambda: L.LeakyReLU(), (4,), (4,), []),
    (lambda: L.PReLU(), (4,), (4,), ["alpha"]),
    (lambda: L.Activation("tanh"), (4,), (4,), []),
    (lambda: L.Lambda(lambda t: t * 2), (4,), (4,), []),
]


@pytest.mark.parametrize("make, shape, out_shape, weights", CASES,
                         ids=[f"case{i}" for i in range(len(CASES))])
def test_layer_shapes_names_and_one_training_step(make, shape, out_shape, weights):
    layer = make()
    dtype = "int32" if isinstance(layer, L.Embedding) else "float32"
    inputs = keras.Input(shape=shape, dtype=dtype)
    outputs = layer(inputs)
    assert tuple(outputs.shape.as_list()[1:]) == out_shape
    if weights is not None:
        assert [w.name.split("/", 1)[1][:-2] for w in layer.weights] == weights
        assert all(w.name.startswith(layer.name + "/") for w in layer.weights)
    head = L.Dense(1)(L.Flatten()(outputs) if len(out_shape) > 1 else outputs)
    model = keras.Model(inputs, head)
    model.compile(keras.optimizers.SGD(0.1), "mse")
    rng = np.random.default_rng(0)
    x = rng.integers(0, 20, (4, *shape)) if dtype == "int32" else \
        rng.standard_normal((4, *shape)).astype(np.float32)
    before = model.get_weights()
    model.train_on_batch(x, np.ones((4, 1), np.float32))
    after = model.get_weights()
    trainable = {id(w) for w in model.trainable_weights}
    for w, a, b in zip(model.weights, before, after):
        if id(w) in trainable:
            assert not np.array_equal(a, b), f"{w.name} got no gradient"


def test_merge_layers():
    a, b = keras.Input(shape=(3,)), keras.Input(shape=(3,))
    outs = [L.add([a, b]), L.subtract([a, b]), L.multiply([a, b]), L.average([a, b]),
            L.maximum([a, b]), L.minimum([a, b]), L.concatenate([a, b]), L.dot([a, b], 1)]
    model = keras.Model([a, b], outs)
    x, y = np.array([[1.0, -2.0, 3.0]]), np.array([[2.0, 2.0, -1.0]])
    got = model.predict([x, y])
    want = [x + y, x - y, x * y, (x + y) / 2, np.maximum(x, y), np.minimum(x, y),
            np.concatenate([x, y], 1), (x * y).sum(1, keepdims=True)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
