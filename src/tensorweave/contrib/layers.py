"""`tf.contrib.layers` (TF 1.15): Xavier / variance-scaling initializers, regularizers and
the layer functions, each `add_arg_scope`-decorated, with TF's scopes and variable names:
`fully_connected/weights`, `fully_connected/biases`, `Conv/weights`, `BatchNorm/beta`,
`BatchNorm/moving_mean`, `LayerNorm/gamma`, ... (also in MODEL_VARIABLES). `fully_connected`
and `conv2d` apply ReLU by default. The convolution, pooling and dropout layers live in
layers_conv.py, the normalizations in layers_norm.py, `optimize_loss` in optimize_loss.py.
"""

from __future__ import annotations

import functools
import math

from tensorweave import dtypes
from tensorweave.contrib.arg_scope import add_arg_scope
from tensorweave.contrib.layers_utils import collect_named_outputs
from tensorweave.framework.graph import (
    GraphKeys,
    add_to_collection,
    get_collection,
)
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import init_ops
from tensorweave.ops import variable_scope as vs
from tensorweave.training.regularizers import (
    apply_regularization,
    l1_l2_regularizer,
    l1_regularizer,
    l2_regularizer,
    sum_regularizer,
)

_MODES = ("FAN_IN", "FAN_OUT", "FAN_AVG")


# -- initializers -----------------------------------------------------------------------------
def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None,
                                 dtype=dtypes.float32):
    """contrib's He initializer: stddev sqrt(factor / n), n the fan-in, fan-out or their
    average (`mode`); uniform in +-sqrt(3 * factor / n) or truncated normal with stddev
    sqrt(1.3 * factor / n). The fans of a [kh, kw, in, out] kernel are kh * kw * in and
    kh * kw * out.

    Raises:
      TypeError: a non-floating dtype or an unknown mode.
    """
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in _MODES:
        raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")

    def _initializer(shape, dtype=dtype, partition_info=None):
        from tensorweave.ops import random_ops

        dtype = dtypes.as_dtype(dtype)
        if not dtype.is_floating:
            raise TypeError("Cannot create initializer for non-floating point type.")
        n = _fan(list(shape), mode)
        if uniform:
            limit = math.sqrt(3.0 * factor / n)
            return random_ops.random_uniform(shape, -limit, limit, dtype, seed=seed)
        stddev = math.sqrt(1.3 * factor / n)
        return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=seed)

    return _initializer


def _fan(shape: list, mode: str) -> float:
    if shape:
        fan_in = float(shape[-2]) if len(shape) > 1 else float(shape[-1])
        fan_out = float(shape[-1])
    else:
        fan_in = fan_out = 1.0
    for dim in shape[:-2]:
        fan_in *= float(dim)
        fan_out *= float(dim)
    return {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[mode]


def xavier_initializer(uniform=True, seed=None, dtype=dtypes.float32):
    """Glorot/Xavier: `variance_scaling_initializer(1.0, "FAN_AVG", uniform)`."""
    return variance_scaling_initializer(factor=1.0, mode="FAN_AVG", uniform=uniform,
                                        seed=seed, dtype=dtype)


xavier_initializer_conv2d = xavier_initializer


# -- layers -----------------------------------------------------------------------------------
@add_arg_scope
def flatten(inputs, outputs_collections=None, scope=None):
    """[batch, ...] → [batch, k] under the name scope `Flatten`."""
    from tensorweave.training.layers.core import flatten as core_flatten

    with name_scope(scope, "Flatten", [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        outputs = core_flatten(inputs)
        return collect_named_outputs(outputs_collections, sc, outputs)


def _model_variable_getter(getter, name, shape=None, dtype=None, initializer=None,
                           regularizer=None, trainable=True, collections=None,
                           caching_device=None, partitioner=None, rename=None,
                           use_resource=None, **_):
    """Renames `.../kernel` → `.../weights` (per `rename`) and adds MODEL_VARIABLES."""
    short = name.split("/")[-1]
    if rename and short in rename:
        name = "/".join(name.split("/")[:-1] + [rename[short]])
    wanted = list(collections or []) + [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    collections = list(dict.fromkeys(wanted))
    return getter(name, shape=shape, dtype=dtype, initializer=initializer,
                  regularizer=regularizer, trainable=trainable, collections=collections,
                  caching_device=caching_device, partitioner=partitioner,
                  use_resource=use_resource, reuse=vs.get_variable_scope().reuse)


def _build_variable_getter(rename):
    def layer_variable_getter(getter, *args, **kwargs):
        kwargs["rename"] = rename
        return _model_variable_getter(getter, *args, **kwargs)

    return layer_variable_getter


def _add_variable_to_collections(variable, collections_set, collections_name) -> None:
    collections = collections_set.get(collections_name) if isinstance(collections_set, dict) \
        else collections_set
    for collection in collections or []:
        if not any(v is variable for v in get_collection(collection)):
            add_to_collection(collection, variable)


class _Relu:
    """The default `activation_fn` (tf.nn.relu, imported when first used)."""

    def __call__(self, features, name=None):
        from tensorweave.ops import nn_ops

        return nn_ops.relu(features, name=name)

    def __repr__(self) -> str:
        return "tf.nn.relu"


_relu = _Relu()
_XAVIER = xavier_initializer()
_ZEROS = init_ops.zeros_initializer()


@add_arg_scope
def fully_connected(inputs, num_outputs, activation_fn=_relu, normalizer_fn=None,
                    normalizer_params=None, weights_initializer=_XAVIER,
                    weights_regularizer=None,
                    biases_initializer=_ZEROS, biases_regularizer=None,
                    reuse=None, variables_collections=None, outputs_collections=None,
                    trainable=True, scope=None):
    """`activation_fn(normalizer_fn(inputs @ weights + biases))` with `<scope>/weights`
    (Xavier uniform by default) and `<scope>/biases` (zeros; none with a normalizer or
    `biases_initializer=None`). `activation_fn` is ReLU unless given (None: linear).

    Raises:
      ValueError: `num_outputs` is not an int.
    """
    from tensorweave.training.layers.core import Dense

    if not isinstance(num_outputs, int):
        raise ValueError(f"num_outputs type should be one of [<class 'int'>], got "
                         f"{type(num_outputs)}.")
    getter = _build_variable_getter({"bias": "biases", "kernel": "weights"})
    with vs.variable_scope(scope, "fully_connected", [inputs], reuse=reuse,
                           custom_getter=getter) as sc:
        inputs = convert_to_tensor(inputs)
        layer = Dense(units=num_outputs, activation=None,
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


from tensorweave.contrib.layers_conv import (  # noqa: E402
    avg_pool2d,
    conv2d,
    conv2d_transpose,
    convolution2d,
    convolution2d_transpose,
    dropout,
    embed_sequence,
    max_pool2d,
    one_hot_encoding,
    repeat,
    separable_conv2d,
    separable_convolution2d,
    softmax,
    stack,
)
from tensorweave.contrib.layers_norm import batch_norm, layer_norm  # noqa: E402
from tensorweave.contrib.optimize_loss import OPTIMIZER_CLS_NAMES, optimize_loss  # noqa: E402

linear = functools.partial(fully_connected, activation_fn=None)

__all__ = [
    "OPTIMIZER_CLS_NAMES", "avg_pool2d", "batch_norm", "conv2d", "convolution2d", "dropout",
    "embed_sequence",
    "layer_norm", "linear", "max_pool2d", "one_hot_encoding", "optimize_loss", "repeat",
    "softmax", "stack",
    "apply_regularization", "flatten", "fully_connected", "l1_l2_regularizer",
    "l1_regularizer", "l2_regularizer", "sum_regularizer", "variance_scaling_initializer",
    "xavier_initializer", "xavier_initializer_conv2d",
    "conv2d_transpose", "convolution2d_transpose", "separable_conv2d",
    "separable_convolution2d",
]
