"""`tf.contrib.layers.batch_norm` and `layer_norm` (TF 1.15's contrib/layers layers.py).

`batch_norm` creates `BatchNorm/beta` (center), `BatchNorm/gamma` (scale, off by default),
`BatchNorm/moving_mean` and `BatchNorm/moving_variance`; while training it normalizes with
the batch moments and puts the moving-average updates in `updates_collections` (UPDATE_OPS;
None: they run with the output). `layer_norm` normalizes over the axes from
`begin_norm_axis` with `LayerNorm/beta` and `LayerNorm/gamma` over the axes from
`begin_params_axis`.
"""

from __future__ import annotations

from tensorweave.contrib.arg_scope import add_arg_scope
from tensorweave.contrib.layers import (
    _add_variable_to_collections,
    _model_variable_getter,
    collect_named_outputs,
)
from tensorweave.framework.graph import GraphKeys, add_to_collections
from tensorweave.framework.scopes import control_dependencies
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import init_ops
from tensorweave.ops import variable_scope as vs


def _bn_layer(inputs, decay, center, scale, epsilon, param_initializers, param_regularizers,
              trainable, data_format, renorm, renorm_clipping, renorm_decay, fused, sc):
    from tensorweave.training.layers.normalization import BatchNormalization

    inits, regs = param_initializers or {}, param_regularizers or {}
    axis = 1 if data_format == "NCHW" else -1
    return BatchNormalization(
        axis=axis, momentum=decay, epsilon=epsilon, center=center, scale=scale,
        beta_initializer=inits.get("beta", init_ops.zeros_initializer()),
        gamma_initializer=inits.get("gamma", init_ops.ones_initializer()),
        moving_mean_initializer=inits.get("moving_mean", init_ops.zeros_initializer()),
        moving_variance_initializer=inits.get("moving_variance", init_ops.ones_initializer()),
        beta_regularizer=regs.get("beta"), gamma_regularizer=regs.get("gamma"),
        trainable=trainable, renorm=renorm, renorm_clipping=renorm_clipping,
        renorm_momentum=renorm_decay, fused=fused, name=sc.name,
        dtype=inputs.dtype.base_dtype, _scope=sc, _reuse=sc.reuse)


@add_arg_scope
def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001,
               activation_fn=None, param_initializers=None, param_regularizers=None,
               updates_collections=GraphKeys.UPDATE_OPS, is_training=True, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format="NHWC",
               zero_debias_moving_mean=False, scope=None, renorm=False,
               renorm_clipping=None, renorm_decay=0.99, adjustment=None):
    """Batch normalization over the last axis (NHWC) or axis 1 (NCHW), with moving averages
    of decay `decay`.

    Raises:
      ValueError: an unknown data_format or an input of unknown rank.
      NotImplementedError: `batch_weights`, `zero_debias_moving_mean` or `adjustment`.
    """
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    if batch_weights is not None or zero_debias_moving_mean or adjustment is not None:
        raise NotImplementedError("batch_norm: batch_weights, zero_debias_moving_mean and "
                                  "adjustment are not supported")
    with vs.variable_scope(scope, "BatchNorm", [inputs], reuse=reuse,
                           custom_getter=_model_variable_getter) as sc:
        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        layer = _bn_layer(inputs, decay, center, scale, epsilon, param_initializers,
                          param_regularizers, trainable, data_format, renorm,
                          renorm_clipping, renorm_decay, fused, sc)
        outputs = _apply_bn(layer, inputs, is_training, updates_collections)
        for name in ("moving_mean", "moving_variance", "beta", "gamma"):
            var = getattr(layer, name)
            if var is not None:
                _add_variable_to_collections(var, variables_collections, name)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


def _apply_bn(layer, inputs, is_training, updates_collections):
    """Applies `layer`; moves its moving-average updates from UPDATE_OPS into
    `updates_collections`, or (None) makes the output depend on them."""
    from tensorweave.framework.graph import get_collection_ref
    from tensorweave.ops import array_ops

    outputs = layer.apply(inputs, training=is_training)
    updates = list(layer.updates)
    if updates_collections == GraphKeys.UPDATE_OPS or not updates:
        return outputs
    ref = get_collection_ref(GraphKeys.UPDATE_OPS)
    ref[:] = [u for u in ref if not any(u is x for x in updates)]
    if updates_collections is None:
        with control_dependencies(updates):
            return array_ops.identity(outputs)
    add_to_collections(updates_collections, updates)
    return outputs


@add_arg_scope
def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """`(x - mean) / sqrt(var + 1e-12) * gamma + beta`, moments over the axes from
    `begin_norm_axis`, `beta`/`gamma` shaped like the axes from `begin_params_axis`.

    Raises:
      ValueError: an input of unknown rank, or an axis outside it.
    """
    from tensorweave.contrib.variables import model_variable
    from tensorweave.ops import nn_norm

    with vs.variable_scope(scope, "LayerNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        begin_norm_axis += rank if begin_norm_axis < 0 else 0
        begin_params_axis += rank if begin_params_axis < 0 else 0
        if begin_params_axis >= rank or begin_norm_axis >= rank:
            raise ValueError(f"begin_params_axis ({begin_params_axis}) and begin_norm_axis "
                             f"({begin_norm_axis}) must be < rank(inputs) ({rank})")
        params_shape = inputs.shape[begin_params_axis:]
        shape = params_shape.as_list() if params_shape.is_fully_defined() else None
        if not params_shape.is_fully_defined():
            raise ValueError(f"Inputs {inputs.name}: shape(inputs)[{begin_params_axis}:] is "
                             f"not fully defined: {params_shape}")
        dtype = inputs.dtype.base_dtype
        beta = gamma = None
        if center:
            beta = model_variable("beta", shape=shape, dtype=dtype,
                                  initializer=init_ops.zeros_initializer(),
                                  collections=_collections(variables_collections, "beta"),
                                  trainable=trainable)
        if scale:
            gamma = model_variable("gamma", shape=shape, dtype=dtype,
                                   initializer=init_ops.ones_initializer(),
                                   collections=_collections(variables_collections, "gamma"),
                                   trainable=trainable)
        mean, variance = nn_norm.moments(inputs, list(range(begin_norm_axis, rank)),
                                         keep_dims=True)
        outputs = nn_norm.batch_normalization(inputs, mean, variance, offset=beta,
                                              scale=gamma, variance_epsilon=1e-12)
        outputs.set_shape(inputs.shape)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


def _collections(variables_collections, name):
    if isinstance(variables_collections, dict):
        return variables_collections.get(name)
    return variables_collections
