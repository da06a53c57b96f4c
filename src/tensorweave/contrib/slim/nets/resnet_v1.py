"""`tf.contrib.slim.nets.resnet_v1` (TF 1.15): ResNet-50/101/152/200 v1 with TF-Slim's scopes,
so the released slim checkpoints' names match (`resnet_v1_50/conv1/weights`,
`resnet_v1_50/block1/unit_1/bottleneck_v1/shortcut/BatchNorm/moving_mean`, ...,
`resnet_v1_50/logits/biases`).

A bottleneck unit is relu(shortcut + conv1x1 → conv3x3 (stride, atrous rate) → conv1x1), the
shortcut a strided 1x1 projection when the depth changes, else a subsample. The network is
conv1 7x7/2 and pool1 3x3/2 (the root block), the four blocks (stride 2 at each block's last
unit but block4's), global average pool `pool5`, and 1x1 `logits` [N, 1, 1, classes] with
softmax `predictions` in `end_points` (no spatial squeeze, as contrib's).
"""

from __future__ import annotations

from tensorweave.contrib.arg_scope import add_arg_scope, arg_scope
from tensorweave.contrib.layers_conv import conv2d, max_pool2d, softmax
from tensorweave.contrib.layers_norm import batch_norm
from tensorweave.contrib.layers_utils import (
    collect_named_outputs,
    convert_collection_to_dict,
    last_dimension,
)
from tensorweave.contrib.slim.nets import resnet_utils
from tensorweave.ops import nn_ops, reduction_ops
from tensorweave.ops import variable_scope as vs

__all__ = ["bottleneck", "resnet_arg_scope", "resnet_v1", "resnet_v1_101", "resnet_v1_152",
           "resnet_v1_200", "resnet_v1_50", "resnet_v1_block"]

resnet_arg_scope = resnet_utils.resnet_arg_scope


@add_arg_scope
def bottleneck(inputs, depth, depth_bottleneck, stride, rate=1, outputs_collections=None,
               scope=None):
    """One bottleneck unit (see the module docstring), in scope `bottleneck_v1`."""
    with vs.variable_scope(scope, "bottleneck_v1", [inputs]) as sc:
        depth_in = last_dimension(inputs.get_shape(), min_rank=4)
        if depth == depth_in:
            shortcut = resnet_utils.subsample(inputs, stride, "shortcut")
        else:
            shortcut = conv2d(inputs, depth, [1, 1], stride=stride, activation_fn=None,
                              scope="shortcut")
        residual = conv2d(inputs, depth_bottleneck, [1, 1], stride=1, scope="conv1")
        residual = resnet_utils.conv2d_same(residual, depth_bottleneck, 3, stride, rate=rate,
                                            scope="conv2")
        residual = conv2d(residual, depth, [1, 1], stride=1, activation_fn=None,
                          scope="conv3")
        output = nn_ops.relu(shortcut + residual)
        return collect_named_outputs(outputs_collections, sc.name, output)


def resnet_v1(inputs, blocks, num_classes=None, is_training=True, global_pool=True,
              output_stride=None, include_root_block=True, reuse=None, scope=None):
    """A v1 ResNet of `blocks`; returns (net, end_points).

    Raises:
      ValueError: an output_stride that is not a multiple of 4 (with the root block) or that
        the blocks cannot reach.
    """
    with vs.variable_scope(scope, "resnet_v1", [inputs], reuse=reuse) as sc:
        collection = sc.original_name_scope + "_end_points"
        with arg_scope([conv2d, bottleneck, resnet_utils.stack_blocks_dense],
                       outputs_collections=collection):
            with arg_scope([batch_norm], is_training=is_training):
                net = inputs
                if include_root_block:
                    if output_stride is not None:
                        if output_stride % 4 != 0:
                            raise ValueError("The output_stride needs to be a multiple of 4.")
                        output_stride /= 4
                    net = resnet_utils.conv2d_same(net, 64, 7, stride=2, scope="conv1")
                    net = max_pool2d(net, [3, 3], stride=2, scope="pool1")
                net = resnet_utils.stack_blocks_dense(net, blocks, output_stride)
                if global_pool:
                    net = reduction_ops.reduce_mean(net, [1, 2], name="pool5", keepdims=True)
                if num_classes is not None:
                    net = conv2d(net, num_classes, [1, 1], activation_fn=None,
                                 normalizer_fn=None, scope="logits")
                end_points = convert_collection_to_dict(collection)
                if num_classes is not None:
                    end_points["predictions"] = softmax(net, scope="predictions")
                return net, end_points


resnet_v1.default_image_size = 224  # type: ignore[attr-defined]


def resnet_v1_block(scope, base_depth, num_units, stride):
    """A block of `num_units` bottlenecks of depth 4 * base_depth; the last has `stride`."""
    unit = {"depth": base_depth * 4, "depth_bottleneck": base_depth}
    return resnet_utils.Block(scope, bottleneck, [dict(unit, stride=1)] * (num_units - 1)
                              + [dict(unit, stride=stride)])


def _resnet(units, default_scope):
    def net(inputs, num_classes=None, is_training=True, global_pool=True, output_stride=None,
            reuse=None, scope=default_scope):
        blocks = [resnet_v1_block(f"block{i + 1}", base, n, 1 if i == 3 else 2)
                  for i, (base, n) in enumerate(zip((64, 128, 256, 512), units))]
        return resnet_v1(inputs, blocks, num_classes, is_training, global_pool, output_stride,
                         include_root_block=True, reuse=reuse, scope=scope)

    net.__name__ = default_scope
    net.__doc__ = (f"ResNet-{default_scope.split('_')[-1]} v1 (units per block {units}); "
                   f"returns (net, end_points).")
    net.default_image_size = 224  # type: ignore[attr-defined]
    return net


resnet_v1_50 = _resnet((3, 4, 6, 3), "resnet_v1_50")
resnet_v1_101 = _resnet((3, 4, 23, 3), "resnet_v1_101")
resnet_v1_152 = _resnet((3, 8, 36, 3), "resnet_v1_152")
resnet_v1_200 = _resnet((3, 24, 36, 3), "resnet_v1_200")
