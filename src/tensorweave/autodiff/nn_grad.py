"""Gradient functions for the nn family (TF's nn_grad.py): activations (through their *Grad
ops), softmax and the cross-entropy losses (which reuse their fused backprop output), bias
add, convolutions (through Conv2DBackpropInput/Filter), pooling, fused batch norm, LRN, L2Loss
and top-k.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.autodiff.gradients import is_zero, reshape, shape_tensor, static_dims, zeros_like
from tensorweave.autodiff.registry import NotDifferentiable, RegisterGradient
from tensorweave.ops.apply import apply_op

_op = apply_op
_CONV = ("strides", "padding", "explicit_paddings", "data_format", "dilations")
_CONV2D = _CONV + ("use_cudnn_on_gpu",)


def _attrs(op, names) -> dict:
    """`op`'s attrs among `names` (those it has), to build a sibling op with the same ones."""
    out = {}
    for n in names:
        try:
            out[n] = op.get_attr(n)
        except ValueError:
            pass
    return out


# == activations ===============================================================================
@RegisterGradient("Relu")
def _relu_grad(op, grad):
    return _op("ReluGrad", grad, op.outputs[0])


@RegisterGradient("Relu6")
def _relu6_grad(op, grad):
    return _op("Relu6Grad", grad, op.outputs[0])


@RegisterGradient("Elu")
def _elu_grad(op, grad):
    return _op("EluGrad", grad, op.outputs[0])


@RegisterGradient("Selu")
def _selu_grad(op, grad):
    return _op("SeluGrad", grad, op.outputs[0])


@RegisterGradient("LeakyRelu")
def _leaky_relu_grad(op, grad):
    return _op("LeakyReluGrad", grad, op.inputs[0], alpha=op.get_attr("alpha"))


@RegisterGradient("Softplus")
def _softplus_grad(op, grad):
    return grad * _op("Sigmoid", op.inputs[0])


@RegisterGradient("Softsign")
def _softsign_grad(op, grad):
    return _op("SoftsignGrad", grad, op.inputs[0])


# -- second order: gradients of the activation *Grad ops (inputs: gradients, features) --------
@RegisterGradient("ReluGrad")
def _relu_grad_grad(op, grad):
    x = op.inputs[1]
    return _op("ReluGrad", grad, x), zeros_like(x)


@RegisterGradient("Relu6Grad")
def _relu6_grad_grad(op, grad):
    x = op.inputs[1]
    return _op("Relu6Grad", grad, x), zeros_like(x)


@RegisterGradient("LeakyReluGrad")
def _leaky_relu_grad_grad(op, grad):
    x = op.inputs[1]
    return _op("LeakyReluGrad", grad, x, alpha=op.get_attr("alpha")), zeros_like(x)


def _exp_linear_grad_grad(grad_op: str):
    def grad_fn(op, grad):
        y = op.inputs[1]
        neg = _op("Less", y, 0)
        return (_op(grad_op, grad, y),
                _op("SelectV2", neg, grad * op.inputs[0], zeros_like(y)))

    return grad_fn


RegisterGradient("EluGrad")(_exp_linear_grad_grad("EluGrad"))
RegisterGradient("SeluGrad")(_exp_linear_grad_grad("SeluGrad"))


@RegisterGradient("SoftplusGrad")
def _softplus_grad_grad(op, grad):
    dy, x = op.inputs
    ddy = _op("SoftplusGrad", grad, x)
    d2x = grad * dy / (_op("Exp", -x) + 2.0 + _op("Exp", x))
    return ddy, d2x


# == softmax and losses ========================================================================
@RegisterGradient("Softmax")
def _softmax_grad(op, grad):
    softmax = op.outputs[0]
    sum_channels = _op("Sum", grad * softmax, [-1], keep_dims=True)
    return (grad - sum_channels) * softmax


@RegisterGradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    softmax = _op("Exp", op.outputs[0])
    return grad - _op("Sum", grad, [-1], keep_dims=True) * softmax


def _broadcast_mul(vec, mat):
    """`vec[:, None] * mat`."""
    return _op("ExpandDims", vec, -1) * mat


def _xent_logits_grad(op, grad_loss, grad_grad):
    """The logits gradient: the fused backprop output scaled by the loss gradient, plus the
    second-order term when the backprop output itself received a (nonzero) gradient."""
    grad = _broadcast_mul(grad_loss, op.outputs[1])
    if grad_grad is not None and not is_zero(grad_grad):
        logits = op.inputs[0]
        softmax = _op("Softmax", logits)
        inner = _op("BatchMatMulV2", _op("ExpandDims", grad_grad, 1),
                    _op("ExpandDims", softmax, 2))
        grad += (grad_grad - _op("Squeeze", inner, squeeze_dims=[1])) * softmax
    return grad


@RegisterGradient("SoftmaxCrossEntropyWithLogits")
def _softmax_xent_grad(op, grad_loss, grad_grad):
    labels_grad = _broadcast_mul(grad_loss, -_op("LogSoftmax", op.inputs[0]))
    return _xent_logits_grad(op, grad_loss, grad_grad), labels_grad


@RegisterGradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent_grad(op, grad_loss, grad_grad):
    return _xent_logits_grad(op, grad_loss, grad_grad), None


# == bias add ==================================================================================
@RegisterGradient("BiasAdd")
def _bias_add_grad(op, grad):
    fmt = op.get_attr("data_format")
    return grad, _op("BiasAddGrad", grad, data_format=fmt)


@RegisterGradient("BiasAddV1")
def _bias_add_v1_grad(op, grad):
    rank = grad.shape.ndims
    axes = np.arange(rank - 1, dtype=np.int32) if rank is not None else \
        _op("Range", 0, _op("Rank", grad) - 1, 1)
    return grad, _op("Sum", grad, axes)


@RegisterGradient("BiasAddGrad")
def _bias_add_grad_grad(op, received_grad):
    """Tiles the bias gradient back over every position of the original input."""
    fmt = op.get_attr("data_format").decode()
    dims = static_dims(op.inputs[0])
    channel = 1 if fmt == "NCHW" else -1
    if dims is not None:
        expanded = [1] * len(dims)
        expanded[channel] = dims[channel]
        multiples = list(dims)
        multiples[channel] = 1
        return _op("Tile", reshape(received_grad, expanded), multiples)
    shape = _op("Shape", op.inputs[0])
    bias_shape = _op("Shape", received_grad)
    if fmt == "NCHW":
        head = _op("StridedSlice", shape, [0], [1], [1])
        tail = _op("StridedSlice", shape, [2], [0], [1], end_mask=1)
        expanded = _op("ConcatV2", [_op("OnesLike", head), bias_shape, _op("OnesLike", tail)], 0)
        multiples = _op("ConcatV2", [head, [1], tail], 0)
    else:
        head = _op("StridedSlice", shape, [0], [-1], [1])
        expanded = _op("ConcatV2", [_op("OnesLike", head), bias_shape], 0)
        multiples = _op("ConcatV2", [head, [1]], 0)
    return _op("Tile", _op("Reshape", received_grad, expanded), multiples)


# == convolutions ==============================================================================
@RegisterGradient("Conv2D")
def _conv2d_grad(op, grad):
    x, w = op.inputs
    attrs = _attrs(op, _CONV2D)
    return (_op("Conv2DBackpropInput", shape_tensor(x), w, grad, **attrs),
            _op("Conv2DBackpropFilter", x, shape_tensor(w), grad, **attrs))


@RegisterGradient("Conv2DBackpropInput")
def _conv2d_backprop_input_grad(op, grad):
    _, w, dy = op.inputs
    attrs = _attrs(op, _CONV2D)
    return (None, _op("Conv2DBackpropFilter", grad, shape_tensor(w), dy, **attrs),
            _op("Conv2D", grad, w, **attrs))


@RegisterGradient("Conv2DBackpropFilter")
def _conv2d_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    attrs = _attrs(op, _CONV2D)
    return (_op("Conv2DBackpropInput", shape_tensor(x), grad, dy, **attrs), None,
            _op("Conv2D", x, grad, **attrs))


@RegisterGradient("DepthwiseConv2dNative")
def _depthwise_grad(op, grad):
    x, w = op.inputs
    attrs = _attrs(op, _CONV)
    return (_op("DepthwiseConv2dNativeBackpropInput", shape_tensor(x), w, grad, **attrs),
            _op("DepthwiseConv2dNativeBackpropFilter", x, shape_tensor(w), grad, **attrs))


@RegisterGradient("DepthwiseConv2dNativeBackpropInput")
def _depthwise_backprop_input_grad(op, grad):
    _, w, dy = op.inputs
    attrs = _attrs(op, _CONV)
    return (None,
            _op("DepthwiseConv2dNativeBackpropFilter", grad, shape_tensor(w), dy, **attrs),
            _op("DepthwiseConv2dNative", grad, w, **attrs))


@RegisterGradient("DepthwiseConv2dNativeBackpropFilter")
def _depthwise_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    attrs = _attrs(op, _CONV)
    return (_op("DepthwiseConv2dNativeBackpropInput", shape_tensor(x), grad, dy, **attrs),
            None, _op("DepthwiseConv2dNative", x, grad, **attrs))


# == pooling ===================================================================================
_POOL = ("ksize", "strides", "padding", "explicit_paddings", "data_format")


@RegisterGradient("MaxPool")
def _max_pool_grad(op, grad):
    return _op("MaxPoolGrad", op.inputs[0], op.outputs[0], grad, **_attrs(op, _POOL))


@RegisterGradient("MaxPoolV2")
def _max_pool_v2_grad(op, grad):
    _, ksize, strides = op.inputs
    return (_op("MaxPoolGradV2", op.inputs[0], op.outputs[0], grad, ksize, strides,
                **_attrs(op, ("padding", "data_format"))), None, None)


@RegisterGradient("MaxPoolGrad")
def _max_pool_grad_grad(op, grad):
    """Needs the MaxPoolGradGrad op."""
    x, y = op.inputs[0], op.inputs[1]
    attrs = _attrs(op, ("ksize", "strides", "padding", "data_format"))
    return zeros_like(x), zeros_like(y), _op("MaxPoolGradGrad", x, y, grad, **attrs)


@RegisterGradient("MaxPoolGradV2")
def _max_pool_grad_v2_grad(op, grad):
    """Needs the MaxPoolGradGradV2 op."""
    x, y, _, ksize, strides = op.inputs
    attrs = _attrs(op, ("padding", "data_format"))
    return (zeros_like(x), zeros_like(y),
            _op("MaxPoolGradGradV2", x, y, grad, ksize, strides, **attrs), None, None)


@RegisterGradient("AvgPool")
def _avg_pool_grad(op, grad):
    return _op("AvgPoolGrad", shape_tensor(op.inputs[0]), grad,
               **_attrs(op, ("ksize", "strides", "padding", "data_format")))


@RegisterGradient("AvgPoolGrad")
def _avg_pool_grad_grad(op, grad):
    return None, _op("AvgPool", grad, **_attrs(op, ("ksize", "strides", "padding",
                                                    "data_format")))


# == normalization =============================================================================
_BN_GRAD_OP = {"FusedBatchNorm": "FusedBatchNormGrad", "FusedBatchNormV2": "FusedBatchNormGradV2",
               "FusedBatchNormV3": "FusedBatchNormGradV3"}


@RegisterGradient("FusedBatchNorm")
@RegisterGradient("FusedBatchNormV2")
@RegisterGradient("FusedBatchNormV3")
def _fused_batch_norm_grad(op, *grads):
    """Training: the fused grad op on the batch statistics saved in the reserve spaces.
    Inference: on the population mean and variance (inputs 3 and 4)."""
    x, scale = op.inputs[0], op.inputs[1]
    attrs = _attrs(op, ("epsilon", "data_format", "is_training"))
    if attrs["is_training"]:
        saved = [op.outputs[3], op.outputs[4]]
    else:
        saved = [op.inputs[3], op.inputs[4]]
    if op.type == "FusedBatchNormV3":
        saved.append(op.outputs[5])
    dx, dscale, doffset = _op(_BN_GRAD_OP[op.type], grads[0], x, scale, *saved, **attrs)[:3]
    return dx, dscale, doffset, None, None


@RegisterGradient("FusedBatchNormGrad")
@RegisterGradient("FusedBatchNormGradV2")
@RegisterGradient("FusedBatchNormGradV3")
def _fused_batch_norm_grad_grad(op, *grads):
    """Differentiates the batch-norm backprop formula (built from primitive ops) with respect
    to grad_y, x and scale, as TF's _FusedBatchNormGradGrad."""
    from tensorweave.autodiff.gradients import gradients

    grad_y, x, scale, pop_mean, pop_var = op.inputs[:5]
    outs = _batch_norm_backprop(grad_y, x, scale, pop_mean, pop_var, op.get_attr("epsilon"),
                                op.get_attr("data_format").decode(), op.get_attr("is_training"))
    ggy, gx, gscale = gradients(list(outs), [grad_y, x, scale], grad_ys=list(grads[:3]))
    return [ggy, gx, gscale] + [None] * (len(op.inputs) - 3)


def _batch_norm_backprop(grad_y, x, scale, pop_mean, pop_var, epsilon, fmt, is_training):
    """(grad_x, grad_scale, grad_offset) of batch norm from primitive ops (NHWC or NCHW)."""
    x_dtype = x.dtype.base_dtype
    if x_dtype in (dtypes.float16, dtypes.bfloat16):
        x, grad_y = _op("Cast", x, DstT=dtypes.float32), _op("Cast", grad_y, DstT=dtypes.float32)
    axes = [0, 1, 2] if fmt == "NHWC" else [0, 2, 3]
    keep = fmt == "NCHW"
    if keep:
        scale, pop_mean, pop_var = (_op("Reshape", t, [1, -1, 1, 1])
                                    for t in (scale, pop_mean, pop_var))
    eps = np.float32(epsilon)
    if is_training:
        mean_gy = _op("Mean", grad_y, axes, keep_dims=keep)
        mean_x = _op("Mean", x, axes, keep_dims=keep)
        var_x = _op("Mean", _op("SquaredDifference", x, _op("StopGradient", mean_x)), axes,
                    keep_dims=keep)
        x_offset = x - mean_x
        mean = _op("Mean", grad_y * x_offset, axes, keep_dims=keep)
        grad_x = scale * _op("Rsqrt", var_x + eps) * (
            grad_y - mean_gy - _op("Reciprocal", var_x + eps) * mean * x_offset)
        grad_scale = _op("Rsqrt", var_x + eps) * _op("Sum", grad_y * x_offset, axes,
                                                     keep_dims=keep)
        if keep:
            grad_scale = _op("Squeeze", grad_scale)
    else:
        var_rsqrt = _op("Rsqrt", pop_var + eps)
        grad_scale = _op("Sum", grad_y * (x - pop_mean) * var_rsqrt, axes)
        grad_x = grad_y * scale * var_rsqrt
    grad_offset = _op("Sum", grad_y, axes)
    return _op("Cast", grad_x, DstT=x_dtype), grad_scale, grad_offset


@RegisterGradient("LRN")
def _lrn_grad(op, grad):
    attrs = _attrs(op, ("depth_radius", "bias", "alpha", "beta"))
    return _op("LRNGrad", grad, op.inputs[0], op.outputs[0], **attrs)


@RegisterGradient("L2Loss")
def _l2_loss_grad(op, grad):
    return op.inputs[0] * grad


# == top-k =====================================================================================
@RegisterGradient("TopK")
@RegisterGradient("TopKV2")
def _top_k_grad(op, grad, _):
    """Scatters the values' gradient back to the positions the indices name."""
    x, indices = op.inputs[0], op.outputs[1]
    xd, idd = static_dims(x), static_dims(indices)
    if xd is not None and idd is not None:
        n, outer = xd[-1], int(np.prod(xd[:-1], dtype=np.int64))
        offsets = (np.arange(outer, dtype=np.int64) * n).reshape(list(idd[:-1]) + [1])
        flat = reshape(indices + offsets.astype(indices.dtype.base_dtype.np_dtype), [-1, 1])
        size = [int(np.prod(xd, dtype=np.int64))]
        out = _op("ScatterNd", flat, reshape(grad, [-1]), np.asarray(size, np.int32))
        return ([reshape(out, list(xd))] + [None])[:len(op.inputs)]
    return ([_dynamic_top_k_grad(x, indices, grad)] + [None])[:len(op.inputs)]


def _dynamic_top_k_grad(x, indices, grad):
    in_shape = _op("Shape", x)
    ind_shape = _op("Shape", indices)
    last = _op("Size", ind_shape) - 1
    ind_lastdim = _op("GatherV2", _op("Cast", ind_shape, DstT=dtypes.int64), last, 0)
    ind_2d = _op("Reshape", indices, _op("Pack", [np.int64(-1), ind_lastdim]))
    in_lastdim = _op("GatherV2", _op("Cast", in_shape, DstT=dtypes.int64),
                     _op("Size", in_shape) - 1, 0)
    outer = _op("Cast", _op("GatherV2", _op("Shape", ind_2d), 0, 0), DstT=dtypes.int64)
    offsets = _op("Range", np.int64(0), outer * in_lastdim, in_lastdim)
    offsets = _op("Cast", _op("ExpandDims", offsets, -1), DstT=indices.dtype.base_dtype)
    flat = _op("Reshape", ind_2d + offsets, [-1])
    out = _op("ScatterNd", _op("ExpandDims", flat, -1), _op("Reshape", grad, [-1]),
              _op("ExpandDims", _op("Prod", in_shape, [0]), 0))
    return _op("Reshape", out, in_shape)


NotDifferentiable("InTopK")
NotDifferentiable("InTopKV2")

__all__: list[str] = []
