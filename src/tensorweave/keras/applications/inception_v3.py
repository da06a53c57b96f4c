"""Inception V3 (Szegedy et al., "Rethinking the Inception Architecture for Computer Vision",
2015) as `tf.keras.applications.InceptionV3` lays it out: the same layers, order and names
(`mixed0` ... `mixed10`, `avg_pool`, `predictions`), so Keras's weight files load by order.
23,851,784 parameters with the 1000-class top."""

from __future__ import annotations

import numpy as np

from tensorweave.keras import backend as K
from tensorweave.keras import layers
from tensorweave.keras.engine.input_layer import Input
from tensorweave.keras.engine.training import Model
from tensorweave.keras.utils import get_file

WEIGHTS = "inception_v3_weights_tf_dim_ordering_tf_kernels.h5"
WEIGHTS_NO_TOP = "inception_v3_weights_tf_dim_ordering_tf_kernels_notop.h5"


def _conv_bn(x, filters, rows, cols, padding="same", strides=(1, 1)):
    """Convolution without bias, batch norm without scale, ReLU."""
    x = layers.Conv2D(filters, (rows, cols), strides=strides, padding=padding,
                      use_bias=False)(x)
    x = layers.BatchNormalization(axis=3, scale=False)(x)
    return layers.Activation("relu")(x)


def _pool_branch(x, filters):
    x = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x)
    return _conv_bn(x, filters, 1, 1)


def _block_35(x, pool_filters, name):
    a = _conv_bn(x, 64, 1, 1)
    b = _conv_bn(_conv_bn(x, 48, 1, 1), 64, 5, 5)
    c = _conv_bn(_conv_bn(_conv_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3)
    return layers.concatenate([a, b, c, _pool_branch(x, pool_filters)], axis=3, name=name)


def _reduce_35(x):
    a = _conv_bn(x, 384, 3, 3, strides=(2, 2), padding="valid")
    b = _conv_bn(_conv_bn(_conv_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3, strides=(2, 2),
                 padding="valid")
    c = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    return layers.concatenate([a, b, c], axis=3, name="mixed3")


def _block_17(x, width, name):
    a = _conv_bn(x, 192, 1, 1)
    b = _conv_bn(_conv_bn(_conv_bn(x, width, 1, 1), width, 1, 7), 192, 7, 1)
    c = _conv_bn(x, width, 1, 1)
    for rows, cols in ((7, 1), (1, 7), (7, 1)):
        c = _conv_bn(c, width, rows, cols)
    c = _conv_bn(c, 192, 1, 7)
    return layers.concatenate([a, b, c, _pool_branch(x, 192)], axis=3, name=name)


def _reduce_17(x):
    a = _conv_bn(_conv_bn(x, 192, 1, 1), 320, 3, 3, strides=(2, 2), padding="valid")
    b = _conv_bn(_conv_bn(_conv_bn(x, 192, 1, 1), 192, 1, 7), 192, 7, 1)
    b = _conv_bn(b, 192, 3, 3, strides=(2, 2), padding="valid")
    c = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    return layers.concatenate([a, b, c], axis=3, name="mixed8")


def _split_3x3(x, k):
    return layers.concatenate([_conv_bn(x, 384, 1, 3), _conv_bn(x, 384, 3, 1)], axis=3,
                              name=k)


def _block_8(x, i):
    a = _conv_bn(x, 320, 1, 1)
    b = _split_3x3(_conv_bn(x, 384, 1, 1), f"mixed9_{i}")
    c = layers.concatenate([_conv_bn(d, 384, r, s) for d in [_conv_bn(
        _conv_bn(x, 448, 1, 1), 384, 3, 3)] for r, s in ((1, 3), (3, 1))], axis=3)
    return layers.concatenate([a, b, c, _pool_branch(x, 192)], axis=3, name=f"mixed{9 + i}")


def InceptionV3(include_top=True, weights="imagenet", input_tensor=None,  # noqa: N802
                input_shape=None, pooling=None, classes=1000, **kwargs):
    """The Inception V3 model (channels last; inputs of at least 75x75).

    Raises:
      ValueError: bad `weights`, `classes` or input shape.
      FileNotFoundError: `weights="imagenet"` without Keras's weight file in its cache.
    """
    if not (weights in ("imagenet", None) or (isinstance(weights, str))):
        raise ValueError("The `weights` argument should be either `None`, `imagenet`, or the "
                         "path to the weights file to be loaded.")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError('If using `weights` as `"imagenet"` with `include_top` as true, '
                         "`classes` should be 1000")
    shape = tuple(input_shape) if input_shape else ((299, 299, 3) if include_top else
                                                   (None, None, 3))
    if include_top and input_shape and shape[:2] != (299, 299):
        raise ValueError("When setting `include_top=True`, `input_shape` should be "
                         f"(299, 299, 3). Received: input_shape={shape}")
    if any(d is not None and d < 75 for d in shape[:2]):
        raise ValueError(f"Input size must be at least 75x75; got `input_shape={shape}`")
    img = Input(shape=shape) if input_tensor is None else input_tensor
    x = _conv_bn(img, 32, 3, 3, strides=(2, 2), padding="valid")
    x = _conv_bn(x, 32, 3, 3, padding="valid")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(_conv_bn(x, 64, 3, 3))
    x = _conv_bn(_conv_bn(x, 80, 1, 1, padding="valid"), 192, 3, 3, padding="valid")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    for k, pool_filters in enumerate((32, 64, 64)):
        x = _block_35(x, pool_filters, f"mixed{k}")
    x = _reduce_35(x)
    for k, width in zip(range(4, 8), (128, 160, 160, 192)):
        x = _block_17(x, width, f"mixed{k}")
    x = _reduce_17(x)
    for i in range(2):
        x = _block_8(x, i)
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        x = layers.Dense(classes, activation="softmax", name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D()(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D()(x)
    model = Model(img, x, name="inception_v3")
    if weights == "imagenet":
        model.load_weights(get_file(WEIGHTS if include_top else WEIGHTS_NO_TOP,
                                    cache_subdir="models"))
    elif weights is not None:
        model.load_weights(weights)
    return model


def preprocess_input(x, data_format=None, mode="tf"):
    """Scales pixels from [0, 255] to [-1, 1], as Inception V3 was trained."""
    return np.asarray(x, dtype=K.floatx()) / 127.5 - 1.0


def decode_predictions(preds, top=5):
    """The top classes of ImageNet predictions (needs Keras's class index file cached)."""
    import json

    with open(get_file("imagenet_class_index.json", cache_subdir="models")) as f:
        index = json.load(f)
    return [[(*index[str(i)], float(row[i])) for i in np.argsort(row)[::-1][:top]]
            for row in np.asarray(preds)]
