"""Gradients of the image ops (TF's image_grad.py and array_grad.py's ExtractImagePatches).

Resize: each method's gradient op scatters the incoming gradient back with the forward
weights; ResizeArea has none (TF registers none). CropAndResize
differentiates in the image and the boxes (not box_ind / crop_size). RGBToHSV's gradient is
TF's closed form. ExtractImagePatches: the patches of an index image tell which input pixel
each patch element came from; the gradient sums the patch gradients by that index.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.autodiff.registry import NotDifferentiable, RegisterGradient
from tensorweave.ops import array_ops, creation_ops, joining_ops, math_ops, reduction_ops
from tensorweave.ops.apply import apply_op

# NOTE: exactly TF's NotDifferentiable set; the other image ops have no gradient registered
# (gradients() raises LookupError through them, as TF's does)
for _op in ("HSVToRGB", "NonMaxSuppression", "NonMaxSuppressionV2", "DrawBoundingBoxes",
            "SampleDistortedBoundingBox", "SampleDistortedBoundingBoxV2", "ExtractGlimpse",
            "ResizeBilinearGrad"):
    NotDifferentiable(_op)


def _corners(op) -> dict:
    return {"align_corners": op.get_attr("align_corners"),
            "half_pixel_centers": op.get_attr("half_pixel_centers")}


@RegisterGradient("ResizeBilinear")
def _resize_bilinear_grad(op, grad):
    return apply_op("ResizeBilinearGrad", grad, op.inputs[0], **_corners(op)), None


@RegisterGradient("ResizeBicubic")
def _resize_bicubic_grad(op, grad):
    if op.inputs[0].dtype not in (dtypes.float32, dtypes.float64):
        return None, None
    return apply_op("ResizeBicubicGrad", grad, op.inputs[0], **_corners(op)), None


@RegisterGradient("ResizeNearestNeighbor")
def _resize_nearest_grad(op, grad):
    image = op.inputs[0]
    dims = image.shape.as_tuple()
    if dims is not None and None not in dims[1:3]:
        size = np.array(dims[1:3], np.int32)
    else:
        size = array_ops.shape(image)[1:3]
    return apply_op("ResizeNearestNeighborGrad", grad, size, **_corners(op)), None


@RegisterGradient("CropAndResize")
def _crop_and_resize_grad(op, grad):
    image, boxes, box_ind, _ = op.inputs
    method = op.get_attr("method")
    allowed = (dtypes.float16, dtypes.float32, dtypes.float64)
    grad_image = None
    if image.dtype in allowed:
        grad_image = apply_op("CropAndResizeGradImage", grad, boxes, box_ind,
                              array_ops.shape(image, out_type=dtypes.int32), T=image.dtype,
                              method=method)
    grad_boxes = apply_op("CropAndResizeGradBoxes", grad, image, boxes, box_ind)
    return grad_image, grad_boxes, None, None


def _reciprocal0(x):
    """1 / x, and 0 where x is 0 (TF's _CustomReciprocal)."""
    return math_ops.div_no_nan(creation_ops.ones_like(x), x)


@RegisterGradient("RGBToHSV")
def _rgb_to_hsv_grad(op, grad):
    """TF's _RGBToHSVGrad: the max / min channel picked with TF's tie-breaking (R > G > B),
    reciprocals of 0 taken as 0, so ties (grey pixels) get TF's values."""
    rgb, hsv = op.inputs[0], op.outputs[0]
    dt = rgb.dtype

    def f(x):
        return math_ops.cast(x, dt)

    r, g, b = (rgb[..., i] for i in range(3))
    s, v = hsv[..., 1], hsv[..., 2]
    dh, ds, dv = (grad[..., i] for i in range(3))
    r_big = f(math_ops.logical_and(r >= b, r >= g))
    g_big = f(math_ops.logical_and(g > r, g >= b))
    b_big = f(math_ops.logical_and(b > r, b > g))
    r_small = f(math_ops.logical_and(r < b, r < g))
    g_small = f(math_ops.logical_and(g <= r, g < b))
    b_small = f(math_ops.logical_and(b <= r, b <= g))
    r_pos, g_pos, b_pos = f(r > 0), f(g > 0), f(b > 0)
    ds_dr = r_pos * (r_big * (g_small * g + b_small * b) * _reciprocal0(math_ops.square(r))
                     - r_small * _reciprocal0(g_big * g + b_big * b))
    ds_dg = g_pos * (g_big * (r_small * r + b_small * b) * _reciprocal0(math_ops.square(g))
                     - g_small * _reciprocal0(r_big * r + b_big * b))
    ds_db = b_pos * (b_big * (g_small * g + r_small * r) * _reciprocal0(math_ops.square(b))
                     - b_small * _reciprocal0(g_big * g + r_big * r))
    hsv_sq = _reciprocal0(math_ops.square(s)) * _reciprocal0(math_ops.square(v))
    rec, sq = _reciprocal0, math_ops.square
    # d hue / d channel, one term per (max, min) case; 60 / 360 turns degrees into turns
    dh_dr = (r_pos * r_big * -(g - b) * hsv_sq
             + g_pos * g_big * r_small * (b - g) * rec(sq(r - g))
             + g_pos * g_big * b_small * -1.0 * rec(g - b)
             + b_pos * b_big * r_small * (b - g) * rec(sq(b - r))
             + b_pos * b_big * g_small * rec(b - g)) * (60.0 / 360.0)
    dh_dg = (g_pos * g_big * -(b - r) * hsv_sq
             + r_pos * r_big * g_small * (r - b) * rec(sq(g - r))
             + r_pos * r_big * b_small * rec(r - b)
             + b_pos * b_big * g_small * (r - b) * rec(sq(b - g))
             + b_pos * b_big * r_small * -1.0 * rec(b - r)) * (60.0 / 360.0)
    dh_db = (b_pos * b_big * -(r - g) * hsv_sq
             + r_pos * r_big * b_small * (g - r) * rec(sq(r - b))
             + r_pos * r_big * g_small * -1.0 * rec(r - g)
             + g_pos * g_big * b_small * (g - r) * rec(sq(g - b))
             + g_pos * g_big * r_small * rec(g - r)) * (60.0 / 360.0)
    out = [dh * dh_dr + ds * ds_dr + dv * r_big, dh * dh_dg + ds * ds_dg + dv * g_big,
           dh * dh_db + ds * ds_db + dv * b_big]
    return joining_ops.stack(out, axis=-1)


@RegisterGradient("ExtractImagePatches")
def _extract_image_patches_grad(op, grad):
    """Sums each patch element's gradient into the input pixel it was copied from."""
    images = op.inputs[0]
    shape = array_ops.shape(images, out_type=dtypes.int64)
    n, h, w, d = (shape[i] for i in range(4))
    pixels = h * w
    ids = math_ops.cast(creation_ops.range(1, pixels + 1), dtypes.float32)
    ids = array_ops.reshape(ids, joining_ops.stack([1, h, w, 1]))
    attrs = {a: op.get_attr(a) for a in ("ksizes", "strides", "rates", "padding")}
    idx = apply_op("ExtractImagePatches", ids, **attrs)
    idx = math_ops.cast(array_ops.reshape(idx, [-1]), dtypes.int64) - 1   # padding -> -1
    k = attrs["ksizes"][1] * attrs["ksizes"][2]
    g = array_ops.reshape(grad, joining_ops.stack([n, -1, k, d]))
    g = array_ops.reshape(joining_ops.transpose(g, [1, 2, 0, 3]),
                          joining_ops.stack([-1, n, d]))
    summed = reduction_ops.unsorted_segment_sum(g, idx, pixels)
    out = joining_ops.transpose(summed, [1, 0, 2])
    return array_ops.reshape(out, shape)
