"""Gradients of the image ops (TF's image_grad.py and array_grad.py's ExtractImagePatches).

Resize: each method's gradient op scatters the incoming gradient back with the forward
weights; ResizeArea and the integer-output paths have none (TF registers none). CropAndResize
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

for _op in ("ResizeArea", "NonMaxSuppression", "NonMaxSuppressionV2", "NonMaxSuppressionV3",
            "DrawBoundingBoxes", "SampleDistortedBoundingBox", "SampleDistortedBoundingBoxV2",
            "ExtractGlimpse", "DecodeJpeg", "DecodePng", "DecodeGif", "DecodeBmp",
            "DecodeImage", "EncodePng", "EncodeJpeg", "ExtractJpegShape"):
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


@RegisterGradient("RGBToHSV")
def _rgb_to_hsv_grad(op, grad):
    """TF's closed form: d(h, s, v)/d(r, g, b) through the max/min channel selections."""
    rgb = op.inputs[0]
    hsv = op.outputs[0]
    r, g, b = (rgb[..., i] for i in range(3))
    h, s, v = (hsv[..., i] for i in range(3))
    dh, ds, dv = (grad[..., i] for i in range(3))
    dt = rgb.dtype
    r_max = math_ops.cast(math_ops.logical_and(r >= g, r >= b), dt)
    g_max = math_ops.cast(math_ops.logical_and(g > r, g >= b), dt)
    b_max = math_ops.cast(math_ops.logical_and(b > r, b > g), dt)
    r_min = math_ops.cast(math_ops.logical_and(r <= g, r <= b), dt)
    g_min = math_ops.cast(math_ops.logical_and(g < r, g <= b), dt)
    b_min = math_ops.cast(math_ops.logical_and(b < r, b < g), dt)
    pos = math_ops.cast(v > 0, dt)
    # dv / d(r, g, b): the max channel
    dv_r, dv_g, dv_b = r_max, g_max, b_max
    # ds: s = (v - m) / v
    inv_v = math_ops.div_no_nan(creation_ops.ones_like(v), v)
    mn = v - s * v
    ds_common = pos * mn * inv_v * inv_v
    ds_r = ds_common * r_max - pos * r_min * inv_v
    ds_g = ds_common * g_max - pos * g_min * inv_v
    ds_b = ds_common * b_max - pos * b_min * inv_v
    # dh: h = (g - b) / (6 c) (r max), (b - r) / (6 c) + 1/3 (g max), (r - g) / (6 c) + 2/3
    c = v - mn
    inv_c6 = math_ops.div_no_nan(creation_ops.ones_like(c), 6.0 * c)
    has = math_ops.cast(c > 0, dt)
    num = r_max * (g - b) + g_max * (b - r) + b_max * (r - g)
    dnum_dc = -num * inv_c6 * math_ops.div_no_nan(creation_ops.ones_like(c), c)
    dc_r, dc_g, dc_b = r_max - r_min, g_max - g_min, b_max - b_min
    dh_r = has * ((-g_max + b_max) * inv_c6 + dnum_dc * dc_r)
    dh_g = has * ((r_max - b_max) * inv_c6 + dnum_dc * dc_g)
    dh_b = has * ((-r_max + g_max) * inv_c6 + dnum_dc * dc_b)
    out = [dh * dh_r + ds * ds_r + dv * dv_r, dh * dh_g + ds * ds_g + dv * dv_g,
           dh * dh_b + ds * ds_b + dv * dv_b]
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
