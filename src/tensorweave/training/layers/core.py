"""`tf.layers` core layers: Dense, Dropout, Flatten and their functional forms.

Graphs match TF1's: `dense` creates `dense/kernel` [in, units] (glorot_uniform) and
`dense/bias` [units] (zeros), then `dense/MatMul`, `dense/BiasAdd` and the activation
(`dense/Relu`); `dropout` with a Python `training` is either `dropout/dropout/...` or
`dropout/Identity`, and with a bool tensor a `dropout/cond`.
"""

from __future__ import annotations

import functools
import operator

from tensorweave.ops import init_ops
from tensorweave.shapes import TensorShape
from tensorweave.training.layers.base import Layer
from tensorweave.training.layers.utils import (
    InputSpec,
    get_activation,
    get_initializer,
    normalize_data_format,
    smart_cond,
)


class Dense(Layer):
    """`outputs = activation(inputs @ kernel + bias)`; inputs of rank > 2 are contracted on
    their last axis (tensordot).

    Raises (on first call):
      TypeError: a non-floating layer dtype.
      ValueError: the inputs' last dimension is unknown.
    """

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        if self.units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive "
                             f"integer. Received: units={units}")
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = get_initializer(kernel_initializer)
        self.bias_initializer = get_initializer(bias_initializer) or init_ops.zeros_initializer()
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.kernel = self.bias = None
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape) -> None:
        dtype = self.dtype
        if dtype is not None and not (dtype.is_floating or dtype.is_complex):
            raise TypeError(f"A Dense layer can only be built with a floating-point dtype. "
                            f"Received: dtype={dtype.name}")
        input_shape = TensorShape(input_shape)
        last_dim = input_shape.as_tuple()[-1] if input_shape.ndims else None
        if last_dim is None:
            raise ValueError("The last dimension of the inputs to a Dense layer should be "
                             f"defined. Found None. Full input shape received: {input_shape}")
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last_dim})
        self.kernel = self.add_weight(
            "kernel", shape=[last_dim, self.units], initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
            dtype=self.dtype, trainable=True)
        if self.use_bias:
            self.bias = self.add_weight(
                "bias", shape=[self.units], initializer=self.bias_initializer,
                regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                dtype=self.dtype, trainable=True)
        self.built = True

    def call(self, inputs):
        from tensorweave.ops import math_matmul_ops, math_ops, nn_ops

        if self.dtype is not None and inputs.dtype.base_dtype != self.dtype:
            inputs = math_ops.cast(inputs, self.dtype)
        rank = inputs.shape.ndims
        if rank is not None and rank > 2:
            outputs = math_matmul_ops.tensordot(inputs, self.kernel, [[rank - 1], [0]])
            outputs.set_shape(inputs.shape.as_list()[:-1] + [self.units])
        else:
            outputs = math_matmul_ops.matmul(inputs, self.kernel)
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        if self.activation is not None:
            return self.activation(outputs)
        return outputs

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = TensorShape(input_shape).with_rank_at_least(2).as_list()
        return TensorShape(dims[:-1] + [self.units])


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
          trainable=True, name=None, reuse=None):
    """TF1 `tf.layers.dense`: a densely-connected layer applied to `inputs`.

    Example:
        h = tf.layers.dense(x, 64, activation=tf.nn.relu)   # dense/kernel, dense/bias
        logits = tf.layers.dense(h, 10, name="logits")       # logits/kernel, logits/bias
    """
    layer = Dense(units, activation=activation, use_bias=use_bias,
                  kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                  kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                  activity_regularizer=activity_regularizer,
                  kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                  trainable=trainable, name=name, _scope=name, _reuse=reuse)
    return layer.apply(inputs)


class Dropout(Layer):
    """Zeroes each input element with probability `rate` and scales the rest by
    `1 / (1 - rate)` while `training` (a Python bool or a scalar bool tensor); else identity.

    `noise_shape` (a list, None entries taken from the input) shares one draw along axes of
    size 1.
    Raises:
      ValueError: `rate` outside [0, 1].
    """

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        if isinstance(rate, (int, float)) and not 0 <= rate <= 1:
            raise ValueError(f"Invalid value {rate} received for `rate`, expected a value "
                             "between 0 and 1.")
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def _get_noise_shape(self, inputs):
        if self.noise_shape is None:
            return None
        from tensorweave.ops import array_ops
        from tensorweave.ops.joining_ops import stack

        static = inputs.shape.as_tuple()
        if static is not None and all(v is not None or static[i] is not None
                                      for i, v in enumerate(self.noise_shape)):
            return [static[i] if v is None else v for i, v in enumerate(self.noise_shape)]
        dynamic = array_ops.shape(inputs)
        return stack([dynamic[i] if v is None else v for i, v in enumerate(self.noise_shape)])

    def call(self, inputs, training=False):
        from tensorweave.ops import array_ops

        if isinstance(self.rate, (int, float)) and self.rate == 0:
            return array_ops.identity(inputs)

        def dropped():
            from tensorweave.ops.random_ops import dropout as nn_dropout

            return nn_dropout(inputs, noise_shape=self._get_noise_shape(inputs),
                              seed=self.seed, rate=self.rate)

        return smart_cond(training, dropped, lambda: array_ops.identity(inputs))

    def compute_output_shape(self, input_shape) -> TensorShape:
        return TensorShape(input_shape)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """TF1 `tf.layers.dropout`: `Dropout(rate, noise_shape, seed)(inputs, training)`.

    Example:
        h = tf.layers.dropout(h, rate=0.3, training=is_training)   # is_training: bool tensor
    """
    layer = Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)
    return layer.apply(inputs, training=training)


class Flatten(Layer):
    """Flattens all but the first (batch) axis: [N, d1, ..., dk] → [N, d1 * ... * dk].

    With `data_format="channels_first"` the channel axis is moved last first, so the result
    matches a channels_last network's flatten.
    """

    def __init__(self, data_format=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs):
        from tensorweave.ops import array_ops
        from tensorweave.ops.constant_op import constant

        rank = inputs.shape.ndims
        if self.data_format == "channels_first" and rank and rank > 1:
            from tensorweave.ops.joining_ops import transpose

            inputs = transpose(inputs, perm=[0, *range(2, rank), 1])
        if rank == 1:
            return array_ops.expand_dims(inputs, axis=1)
        if rank is None:
            return array_ops.reshape(inputs, [array_ops.shape(inputs)[0], -1])
        dims = inputs.shape.as_tuple()
        if all(d is not None for d in dims[1:]):
            shape = constant([-1, int(functools.reduce(operator.mul, dims[1:], 1))])
        elif dims[0] is not None:
            shape = constant([int(dims[0]), -1])
        else:
            shape = [array_ops.shape(inputs)[0], -1]
        return array_ops.reshape(inputs, shape)

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = TensorShape(input_shape).as_list()
        rest = dims[1:]
        flat = None if any(d is None for d in rest) else functools.reduce(operator.mul, rest, 1)
        return TensorShape([dims[0], flat])


def flatten(inputs, name=None, data_format="channels_last"):
    """TF1 `tf.layers.flatten`: [N, ...] → [N, prod(...)]."""
    return Flatten(name=name, data_format=data_format).apply(inputs)


__all__ = ["Dense", "dense", "Dropout", "dropout", "Flatten", "flatten"]
