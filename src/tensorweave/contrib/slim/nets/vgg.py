"""`tf.contrib.slim.nets.vgg` (TF 1.15): VGG-11 (`vgg_a`), VGG-16 and VGG-19 with TF's
scopes, so ImageNet checkpoints written by TF-Slim restore (`vgg_16/conv1/conv1_1/weights`,
..., `vgg_16/fc8/biases`). The fully connected layers are convolutions (fc6 7x7 with
`fc_conv_padding`, fc7 and fc8 1x1); `end_points` maps each layer's scope to its output."""

from __future__ import annotations

from tensorweave.contrib.arg_scope import arg_scope
from tensorweave.contrib.layers import fully_connected, l2_regularizer
from tensorweave.contrib.layers_conv import conv2d, dropout, max_pool2d, repeat
from tensorweave.contrib.layers_utils import convert_collection_to_dict
from tensorweave.ops import array_ops, init_ops, reduction_ops
from tensorweave.ops import variable_scope as vs


def vgg_arg_scope(weight_decay=0.0005):
    """ReLU, L2 weight decay and zero biases for conv2d / fully_connected; SAME padding."""
    from tensorweave.ops import nn_ops

    with arg_scope([conv2d, fully_connected], activation_fn=nn_ops.relu,
                   weights_regularizer=l2_regularizer(weight_decay),
                   biases_initializer=init_ops.zeros_initializer()):
        with arg_scope([conv2d], padding="SAME") as arg_sc:
            return arg_sc


def _vgg(inputs, blocks, num_classes, is_training, dropout_keep_prob, spatial_squeeze, scope,
         default_scope, fc_conv_padding, global_pool):
    with vs.variable_scope(scope, default_scope, [inputs]) as sc:
        collection = sc.original_name_scope + "_end_points"
        with arg_scope([conv2d, fully_connected, max_pool2d], outputs_collections=collection):
            net = inputs
            for i, (times, depth) in enumerate(blocks, start=1):
                net = repeat(net, times, conv2d, depth, [3, 3], scope=f"conv{i}")
                net = max_pool2d(net, [2, 2], scope=f"pool{i}")
            net = conv2d(net, 4096, [7, 7], padding=fc_conv_padding, scope="fc6")
            net = dropout(net, dropout_keep_prob, is_training=is_training, scope="dropout6")
            net = conv2d(net, 4096, [1, 1], scope="fc7")
            end_points = convert_collection_to_dict(collection)
            if global_pool:
                net = reduction_ops.reduce_mean(net, [1, 2], keepdims=True, name="global_pool")
                end_points["global_pool"] = net
            if num_classes:
                net = dropout(net, dropout_keep_prob, is_training=is_training,
                              scope="dropout7")
                net = conv2d(net, num_classes, [1, 1], activation_fn=None, normalizer_fn=None,
                             scope="fc8")
                if spatial_squeeze:
                    net = array_ops.squeeze(net, [1, 2], name="fc8/squeezed")
                end_points[sc.name + "/fc8"] = net
            return net, end_points


def _net(blocks, default_scope):
    def net(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.5,
            spatial_squeeze=True, scope=default_scope, fc_conv_padding="VALID",
            global_pool=False):
        return _vgg(inputs, blocks, num_classes, is_training, dropout_keep_prob,
                    spatial_squeeze, scope, default_scope, fc_conv_padding, global_pool)

    net.__name__ = default_scope
    net.__doc__ = (f"{default_scope}: returns (logits [batch, num_classes], end_points); "
                   f"224x224 inputs (net.default_image_size).")
    net.default_image_size = 224
    return net


vgg_a = _net([(1, 64), (1, 128), (2, 256), (2, 512), (2, 512)], "vgg_a")
vgg_16 = _net([(2, 64), (2, 128), (3, 256), (3, 512), (3, 512)], "vgg_16")
vgg_19 = _net([(2, 64), (2, 128), (4, 256), (4, 512), (4, 512)], "vgg_19")
vgg_d, vgg_e = vgg_16, vgg_19
