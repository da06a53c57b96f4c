"""Gradients of the 3-D convolution and pooling ops (TF's nn_grad.py).

    Conv3D(x, w):                  d x = Conv3DBackpropInputV2(shape(x), w, g)
                                   d w = Conv3DBackpropFilterV2(x, shape(w), g)
    Conv3DBackpropInputV2(s, w, y): d w = Conv3DBackpropFilterV2(g, shape(w), y)
                                   d y = Conv3D(g, w)
    MaxPool3D / AvgPool3D:         MaxPool3DGrad / AvgPool3DGrad
"""

from __future__ import annotations

from tensorweave.autodiff.registry import NotDifferentiable, RegisterGradient
from tensorweave.ops.apply import apply_op

_CONV = ("strides", "padding", "data_format", "dilations")
_POOL = ("ksize", "strides", "padding", "data_format")


def _attrs(op, names):
    return {n: op.get_attr(n) for n in names}


@RegisterGradient("Conv3D")
def _conv3d_grad(op, grad):
    x, w = op.inputs
    a = _attrs(op, _CONV)
    return [apply_op("Conv3DBackpropInputV2", apply_op("Shape", x), w, grad, **a),
            apply_op("Conv3DBackpropFilterV2", x, apply_op("Shape", w), grad, **a)]


@RegisterGradient("Conv3DBackpropInputV2")
def _conv3d_backprop_input_grad(op, grad):
    _, w, dy = op.inputs
    a = _attrs(op, _CONV)
    return [None, apply_op("Conv3DBackpropFilterV2", grad, apply_op("Shape", w), dy, **a),
            apply_op("Conv3D", grad, w, **a)]


@RegisterGradient("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    a = _attrs(op, _CONV)
    return [apply_op("Conv3DBackpropInputV2", apply_op("Shape", x), grad, dy, **a), None,
            apply_op("Conv3D", x, grad, **a)]


@RegisterGradient("MaxPool3D")
def _max_pool3d_grad(op, grad):
    return apply_op("MaxPool3DGrad", op.inputs[0], op.outputs[0], grad, **_attrs(op, _POOL))


@RegisterGradient("AvgPool3D")
def _avg_pool3d_grad(op, grad):
    return apply_op("AvgPool3DGrad", apply_op("Shape", op.inputs[0]), grad,
                    **_attrs(op, _POOL))


NotDifferentiable("MaxPool3DGrad")


@RegisterGradient("AvgPool3DGrad")
def _avg_pool3d_grad_grad(op, grad):
    return [None, apply_op("AvgPool3D", grad, **_attrs(op, _POOL))]
