"""`tf.contrib.slim.nets.resnet_utils` (TF 1.15): the pieces the ResNets are built from.

A `Block` is (scope, unit_fn, [kwargs per unit]); `stack_blocks_dense` opens `<block>/unit_<i>`
scopes and, given `output_stride`, switches to atrous (dilated) units once the running stride
reaches it. `conv2d_same` is a strided convolution padded explicitly as SAME would be for
stride 1, so even and odd input sizes align the same way. `resnet_arg_scope` holds the
defaults of the reference models (He init, L2 decay 1e-4, batch norm decay 0.997, eps 1e-5).
"""

from __future__ import annotations

import collections

from tensorweave.contrib.arg_scope import add_arg_scope, arg_scope
from tensorweave.contrib.layers import l2_regularizer, variance_scaling_initializer
from tensorweave.contrib.layers_conv import conv2d, max_pool2d
from tensorweave.contrib.layers_norm import batch_norm
from tensorweave.contrib.layers_utils import collect_named_outputs
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import nn_ops
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.joining_ops import pad

__all__ = ["Block", "conv2d_same", "resnet_arg_scope", "stack_blocks_dense", "subsample"]


class Block(collections.namedtuple("Block", ["scope", "unit_fn", "args"])):
    """A ResNet block: `unit_fn(net, **args[i])` for each unit, under `scope`."""


def subsample(inputs, factor, scope=None):
    """`inputs` taken every `factor` pixels (a 1x1 max pool), or unchanged for factor 1."""
    if factor == 1:
        return inputs
    return max_pool2d(inputs, [1, 1], stride=factor, scope=scope)


def conv2d_same(inputs, num_outputs, kernel_size, stride, rate=1, scope=None):
    """conv2d with SAME padding for stride 1; for larger strides, the SAME padding of stride 1
    added explicitly, then a VALID strided convolution."""
    if stride == 1:
        return conv2d(inputs, num_outputs, kernel_size, stride=1, rate=rate, padding="SAME",
                      scope=scope)
    effective = kernel_size + (kernel_size - 1) * (rate - 1)
    before = (effective - 1) // 2
    after = effective - 1 - before
    padded = pad(inputs, [[0, 0], [before, after], [before, after], [0, 0]])
    return conv2d(padded, num_outputs, kernel_size, stride=stride, rate=rate, padding="VALID",
                  scope=scope)


@add_arg_scope
def stack_blocks_dense(net, blocks, output_stride=None, outputs_collections=None):
    """The blocks one after another; with `output_stride`, units past that stride run with
    stride 1 and a growing atrous rate instead.

    Raises:
      ValueError: an `output_stride` the unit strides cannot reach exactly.
    """
    current_stride, rate = 1, 1
    for block in blocks:
        with vs.variable_scope(block.scope, "block", [net]) as sc:
            for i, unit in enumerate(block.args):
                if output_stride is not None and current_stride > output_stride:
                    raise ValueError("The target output_stride cannot be reached.")
                with vs.variable_scope(f"unit_{i + 1}", values=[net]):
                    if output_stride is not None and current_stride == output_stride:
                        net = block.unit_fn(net, rate=rate, **dict(unit, stride=1))
                        rate *= unit.get("stride", 1)
                    else:
                        net = block.unit_fn(net, rate=1, **unit)
                        current_stride *= unit.get("stride", 1)
            net = collect_named_outputs(outputs_collections, sc.name, net)
    if output_stride is not None and current_stride != output_stride:
        raise ValueError("The target output_stride cannot be reached.")
    return net


def resnet_arg_scope(weight_decay=0.0001, batch_norm_decay=0.997, batch_norm_epsilon=1e-5,
                     batch_norm_scale=True):
    """conv2d with He init, L2 decay, ReLU and batch norm (these parameters); SAME pools."""
    bn_params = {"decay": batch_norm_decay, "epsilon": batch_norm_epsilon,
                 "scale": batch_norm_scale, "updates_collections": GraphKeys.UPDATE_OPS}
    with arg_scope([conv2d], weights_regularizer=l2_regularizer(weight_decay),
                   weights_initializer=variance_scaling_initializer(),
                   activation_fn=nn_ops.relu, normalizer_fn=batch_norm,
                   normalizer_params=bn_params):
        with arg_scope([batch_norm], **bn_params):
            with arg_scope([max_pool2d], padding="SAME") as arg_sc:
                return arg_sc
