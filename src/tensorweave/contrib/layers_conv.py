"""`tf.contrib.layers` convolution, pooling, dropout, one-hot and the `repeat` / `stack`
combinators (TF 1.15's contrib/layers layers.py), built on the core `tf.layers` classes.

`conv2d(x, 32, [5, 5])` creates `Conv/weights` [5, 5, in, 32] and `Conv/biases`;
`max_pool2d` / `avg_pool2d` default to stride 2 and VALID padding under `MaxPool2D` /
`AvgPool2D`; `repeat(x, 2, conv2d, 64, [3, 3], scope='conv1')` names its layers
`conv1/conv1_1`, `conv1/conv1_2`.
"""

from __future__ import annotations

from tensorweave.contrib.arg_scope import add_arg_scope
from tensorweave.contrib.layers import (
    _XAVIER,
    _ZEROS,
    _add_variable_to_collections,
    _build_variable_getter,
    _model_variable_getter,
    _relu,
    collect_named_outputs,
)
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import variable_scope as vs

_FORMATS = {None: "channels_last", "NHWC": "channels_last", "NCHW": "channels_first"}


def _data_format(data_format) -> str:
    if data_format not in _FORMATS:
        raise ValueError("data_format has to be either NCHW or NHWC.")
    return _FORMATS[data_format]


@add_arg_scope
def convolution2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME",
                  data_format=None, rate=1, activation_fn=_relu, normalizer_fn=None,
                  normalizer_params=None, weights_initializer=_XAVIER,
                  weights_regularizer=None, biases_initializer=_ZEROS,
                  biases_regularizer=None, reuse=None, variables_collections=None,
                  outputs_collections=None, trainable=True, scope=None):
    """`activation_fn(normalizer_fn(conv2d(inputs, weights) + biases))` under the variable
    scope `Conv` (`<scope>/weights`, `<scope>/biases`; no biases with a normalizer).

    Raises:
      ValueError: an unknown data_format.
    """
    from tensorweave.training.layers.convolutional import Conv2D

    getter = _build_variable_getter({"bias": "biases", "kernel": "weights"})
    with vs.variable_scope(scope, "Conv", [inputs], reuse=reuse, custom_getter=getter) as sc:
        inputs = convert_to_tensor(inputs)
        layer = Conv2D(filters=num_outputs, kernel_size=kernel_size, strides=stride,
                       padding=padding, data_format=_data_format(data_format),
                       dilation_rate=rate, activation=None,
                       use_bias=bool(not normalizer_fn and biases_initializer),
                       kernel_initializer=weights_initializer,
                       bias_initializer=biases_initializer,
                       kernel_regularizer=weights_regularizer,
                       bias_regularizer=biases_regularizer, trainable=trainable,
                       name=sc.name, dtype=inputs.dtype.base_dtype, _scope=sc, _reuse=reuse)
        outputs = layer.apply(inputs)
        _add_variable_to_collections(layer.kernel, variables_collections, "weights")
        if layer.bias is not None:
            _add_variable_to_collections(layer.bias, variables_collections, "biases")
        if normalizer_fn is not None:
            outputs = normalizer_fn(outputs, **(normalizer_params or {}))
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


conv2d = convolution2d


def _pool2d(layer_cls, default_name, inputs, kernel_size, stride, padding, data_format,
            outputs_collections, scope):
    with name_scope(scope, default_name, [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        layer = layer_cls(pool_size=kernel_size, strides=stride, padding=padding,
                          data_format=_data_format(data_format), _scope=sc)
        outputs = layer.apply(inputs)
        return collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    """Max pooling over `kernel_size` windows moved by `stride`, under `MaxPool2D`."""
    from tensorweave.training.layers.pooling import MaxPooling2D

    return _pool2d(MaxPooling2D, "MaxPool2D", inputs, kernel_size, stride, padding,
                   data_format, outputs_collections, scope)


@add_arg_scope
def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    """Average pooling over `kernel_size` windows moved by `stride`, under `AvgPool2D`."""
    from tensorweave.training.layers.pooling import AveragePooling2D

    return _pool2d(AveragePooling2D, "AvgPool2D", inputs, kernel_size, stride, padding,
                   data_format, outputs_collections, scope)


@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True,
            outputs_collections=None, scope=None, seed=None):
    """Keeps each element with probability `keep_prob` (scaled by 1/keep_prob) while
    `is_training` (a bool or a bool tensor); the identity otherwise. Scope `Dropout`."""
    from tensorweave.training.layers.core import Dropout

    with vs.variable_scope(scope, "Dropout", [inputs],
                           custom_getter=_model_variable_getter) as sc:
        inputs = convert_to_tensor(inputs)
        layer = Dropout(rate=1 - keep_prob, noise_shape=noise_shape, seed=seed,
                        name=sc.name, _scope=sc)
        outputs = layer.apply(inputs, training=is_training)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def one_hot_encoding(labels, num_classes, on_value=1.0, off_value=0.0,
                     outputs_collections=None, scope=None):
    """`tf.one_hot(labels, num_classes)` (int32 labels are cast to int64) under
    `OneHotEncoding`."""
    from tensorweave import dtypes
    from tensorweave.ops import gather_ops, math_ops

    with name_scope(scope, "OneHotEncoding", [labels, num_classes]) as sc:
        labels = convert_to_tensor(labels)
        if labels.dtype == dtypes.int32:
            labels = math_ops.cast(labels, dtypes.int64)
        outputs = gather_ops.one_hot(labels, num_classes, on_value=on_value,
                                    off_value=off_value)
        return collect_named_outputs(outputs_collections, sc, outputs)


def _layer_name(layer) -> str:
    if hasattr(layer, "__name__"):
        return layer.__name__
    if hasattr(layer, "func") and hasattr(layer.func, "__name__"):
        return layer.func.__name__
    return "repeat"


def repeat(inputs, repetitions, layer, *args, **kwargs):
    """Applies `layer(outputs, *args, **kwargs)` `repetitions` times, the i-th under the
    scope `<scope>/<scope>_<i>` (scope: kwargs' `scope`, else the layer's name)."""
    scope = kwargs.pop("scope", None)
    with vs.variable_scope(scope, "Repeat", [inputs]):
        outputs = convert_to_tensor(inputs)
        scope = scope or _layer_name(layer)
        for i in range(repetitions):
            kwargs["scope"] = f"{scope}_{i + 1}"
            outputs = layer(outputs, *args, **kwargs)
        return outputs


def stack(inputs, layer, stack_args, **kwargs):
    """Applies `layer` once per entry of `stack_args` (its positional arguments), the i-th
    under `<scope>/<scope>_<i>`: `stack(x, fully_connected, [32, 64], scope='fc')`.

    Raises:
      ValueError: `stack_args` is not a list or tuple.
    """
    scope = kwargs.pop("scope", None)
    if not isinstance(stack_args, (list, tuple)):
        raise ValueError("stack_args need to be a list or tuple")
    with vs.variable_scope(scope, "Stack", [inputs]):
        outputs = convert_to_tensor(inputs)
        scope = scope or _layer_name(layer)
        for i, layer_args in enumerate(stack_args):
            kwargs["scope"] = f"{scope}_{i + 1}"
            if not isinstance(layer_args, (list, tuple)):
                layer_args = [layer_args]
            outputs = layer(outputs, *layer_args, **kwargs)
        return outputs


@add_arg_scope
def softmax(logits, scope=None):
    """Softmax over the last axis of an N-D `logits`, under the variable scope `softmax`."""
    from tensorweave.ops import nn_ops

    with vs.variable_scope(scope, "softmax", [logits]):
        logits = convert_to_tensor(logits)
        return nn_ops.softmax(logits)


def embed_sequence(ids, vocab_size=None, embed_dim=None, unique=False, initializer=None,
                   regularizer=None, trainable=True, scope=None, reuse=None):
    """[batch, time] ids → [batch, time, embed_dim] through the model variable
    `EmbedSequence/embeddings` [vocab_size, embed_dim].

    Raises:
      ValueError: vocab_size or embed_dim missing while not reusing.
    """
    from tensorweave import dtypes
    from tensorweave.contrib.variables import model_variable
    from tensorweave.ops import embedding_ops

    if not (reuse or (vocab_size and embed_dim)):
        raise ValueError(f"Must specify vocab size and embedding dimension when not reusing. "
                         f"Got vocab_size={vocab_size} and embed_dim={embed_dim}")
    with vs.variable_scope(scope, "EmbedSequence", [ids], reuse=reuse):
        embeddings = model_variable("embeddings", shape=[vocab_size, embed_dim],
                                    dtype=dtypes.float32, initializer=initializer,
                                    regularizer=regularizer, trainable=trainable)
        return embedding_ops.embedding_lookup(embeddings, ids)


def _finish(outputs, normalizer_fn, normalizer_params, activation_fn, outputs_collections,
            alias):
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return collect_named_outputs(outputs_collections, alias, outputs)


@add_arg_scope
def convolution2d_transpose(inputs, num_outputs, kernel_size, stride=1, padding="SAME",
                            data_format="NHWC", activation_fn=_relu, normalizer_fn=None,
                            normalizer_params=None, weights_initializer=_XAVIER,
                            weights_regularizer=None, biases_initializer=_ZEROS,
                            biases_regularizer=None, reuse=None, variables_collections=None,
                            outputs_collections=None, trainable=True, scope=None):
    """Transposed convolution under `Conv2d_transpose` (`weights` [kh, kw, out, in],
    `biases`)."""
    from tensorweave.training.layers.convolutional import Conv2DTranspose

    getter = _build_variable_getter({"bias": "biases", "kernel": "weights"})
    with vs.variable_scope(scope, "Conv2d_transpose", [inputs], reuse=reuse,
                           custom_getter=getter) as sc:
        inputs = convert_to_tensor(inputs)
        layer = Conv2DTranspose(
            filters=num_outputs, kernel_size=kernel_size, strides=stride, padding=padding,
            data_format=_data_format(data_format), activation=None,
            use_bias=bool(not normalizer_fn and biases_initializer),
            kernel_initializer=weights_initializer, bias_initializer=biases_initializer,
            kernel_regularizer=weights_regularizer, bias_regularizer=biases_regularizer,
            trainable=trainable, name=sc.name, dtype=inputs.dtype.base_dtype, _scope=sc,
            _reuse=reuse)
        outputs = layer.apply(inputs)
        _add_variable_to_collections(layer.kernel, variables_collections, "weights")
        if layer.bias is not None:
            _add_variable_to_collections(layer.bias, variables_collections, "biases")
        return _finish(outputs, normalizer_fn, normalizer_params, activation_fn,
                       outputs_collections, sc.name)


conv2d_transpose = convolution2d_transpose


def _pair(value):
    return tuple(value) if isinstance(value, (list, tuple)) else (value, value)


def _depthwise(inputs, kernel_size, depth_multiplier, stride, padding, data_format, rate,
               weights_initializer, weights_regularizer, biases_initializer,
               biases_regularizer, normalizer_fn, variables_collections, trainable):
    """The `num_outputs=None` branch: a depthwise convolution with `depthwise_weights`."""
    from tensorweave.contrib.layers_norm import _collections
    from tensorweave.contrib.variables import model_variable
    from tensorweave.ops import nn_conv, nn_ops

    dtype = inputs.dtype.base_dtype
    first = data_format.startswith("NC")
    channels = inputs.shape.as_list()[1 if first else -1]
    (kh, kw), (sh, sw) = _pair(kernel_size), _pair(stride)
    weights = model_variable("depthwise_weights", shape=[kh, kw, channels, depth_multiplier],
                             dtype=dtype, initializer=weights_initializer,
                             regularizer=weights_regularizer, trainable=trainable,
                             collections=_collections(variables_collections, "weights"))
    strides = [1, 1, sh, sw] if first else [1, sh, sw, 1]
    outputs = nn_conv.depthwise_conv2d(inputs, weights, strides, padding, rate=_pair(rate),
                                       data_format=data_format)
    if normalizer_fn is None and biases_initializer is not None:
        biases = model_variable("biases", shape=[depth_multiplier * channels], dtype=dtype,
                                initializer=biases_initializer,
                                regularizer=biases_regularizer, trainable=trainable,
                                collections=_collections(variables_collections, "biases"))
        outputs = nn_ops.bias_add(outputs, biases, data_format=data_format)
    return outputs


@add_arg_scope
def separable_convolution2d(inputs, num_outputs, kernel_size, depth_multiplier=1, stride=1,
                            padding="SAME", data_format="NHWC", rate=1, activation_fn=_relu,
                            normalizer_fn=None, normalizer_params=None,
                            weights_initializer=_XAVIER, pointwise_initializer=None,
                            weights_regularizer=None, biases_initializer=_ZEROS,
                            biases_regularizer=None, reuse=None, variables_collections=None,
                            outputs_collections=None, trainable=True, scope=None):
    """Depthwise-separable convolution under `SeparableConv2d` (`depthwise_weights`,
    `pointwise_weights`, `biases`); with `num_outputs=None` only the depthwise part
    (MobileNet's blocks)."""
    from tensorweave.training.layers.separable import SeparableConv2D

    rename = {"bias": "biases", "depthwise_kernel": "depthwise_weights",
              "pointwise_kernel": "pointwise_weights"}
    with vs.variable_scope(scope, "SeparableConv2d", [inputs], reuse=reuse,
                           custom_getter=_build_variable_getter(rename)) as sc:
        inputs = convert_to_tensor(inputs)
        if num_outputs is None:
            outputs = _depthwise(inputs, kernel_size, depth_multiplier, stride, padding,
                                 data_format, rate, weights_initializer, weights_regularizer,
                                 biases_initializer, biases_regularizer, normalizer_fn,
                                 variables_collections, trainable)
        else:
            layer = SeparableConv2D(
                filters=num_outputs, kernel_size=kernel_size, strides=_pair(stride),
                padding=padding, data_format=_data_format(data_format),
                dilation_rate=_pair(rate), activation=None, depth_multiplier=depth_multiplier,
                use_bias=bool(not normalizer_fn and biases_initializer),
                depthwise_initializer=weights_initializer,
                pointwise_initializer=pointwise_initializer or weights_initializer,
                bias_initializer=biases_initializer, depthwise_regularizer=weights_regularizer,
                pointwise_regularizer=weights_regularizer,
                bias_regularizer=biases_regularizer, trainable=trainable, name=sc.name,
                dtype=inputs.dtype.base_dtype, _scope=sc, _reuse=reuse)
            outputs = layer.apply(inputs)
            _add_variable_to_collections(layer.depthwise_kernel, variables_collections,
                                         "weights")
            _add_variable_to_collections(layer.pointwise_kernel, variables_collections,
                                         "weights")
            if layer.bias is not None:
                _add_variable_to_collections(layer.bias, variables_collections, "biases")
        return _finish(outputs, normalizer_fn, normalizer_params, activation_fn,
                       outputs_collections, sc.name)


separable_conv2d = separable_convolution2d
