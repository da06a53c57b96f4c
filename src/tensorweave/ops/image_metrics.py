"""`tf.image` measures and box functions: `psnr`, `ssim`, `image_gradients`,
`total_variation`, `non_max_suppression`, `draw_bounding_boxes`,
`sample_distorted_bounding_box`, as TF 2.x's image_ops_impl.py builds them.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, creation_ops, joining_ops, math_ops, reduction_ops
from tensorweave.ops.apply import apply_op
from tensorweave.ops.image_color import convert_image_dtype
from tensorweave.ops.nn_conv import depthwise_conv2d
from tensorweave.ops.random_ops import get_seed

_LOG10 = np.log(10.0)


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio over the last three axes: 20 log10(max) - 10 log10(mse)."""
    with name_scope(name, "PSNR", [a, b]):
        a, b = convert_to_tensor(a), convert_to_tensor(b)
        max_val = math_ops.cast(max_val, a.dtype)
        max_val = convert_image_dtype(max_val, dtypes.float32)
        a = convert_image_dtype(a, dtypes.float32)
        b = convert_image_dtype(b, dtypes.float32)
        mse = reduction_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
        return math_ops.subtract(20 * math_ops.log(max_val) / _LOG10,
                                 np.float32(10 / _LOG10) * math_ops.log(mse), name="psnr")


def _gauss_kernel(size: int, sigma: float) -> np.ndarray:
    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / 2
    g = np.square(coords) * np.float32(-0.5 / sigma ** 2)
    g = (g[None, :] + g[:, None]).reshape(-1)
    g = np.exp(g - g.max())
    return (g / g.sum()).astype(np.float32).reshape(size, size, 1, 1)


def _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma, k1, k2):
    dims = img1.shape.as_tuple()
    if dims is None or None in dims[-3:]:
        raise ValueError("ssim needs images with known height, width and channels")
    size = min(filter_size, dims[-3], dims[-2])
    kernel = np.tile(_gauss_kernel(size, filter_sigma), [1, 1, dims[-1], 1])

    def reducer(x):
        shape = array_ops.shape(x)
        x4 = array_ops.reshape(x, joining_ops.concat([[-1], shape[-3:]], 0))
        y = depthwise_conv2d(x4, kernel, strides=[1, 1, 1, 1], padding="VALID")
        return array_ops.reshape(y, joining_ops.concat([shape[:-3], array_ops.shape(y)[1:]], 0))

    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mean0, mean1 = reducer(img1), reducer(img2)
    num0 = mean0 * mean1 * 2.0
    den0 = math_ops.square(mean0) + math_ops.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(img1 * img2) * 2.0
    den1 = reducer(math_ops.square(img1) + math_ops.square(img2))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return reduction_ops.reduce_mean(luminance * cs, [-3, -2]), reduction_ops.reduce_mean(
        cs, [-3, -2])


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
    """Structural similarity over the last three axes with an 11x11 Gaussian window."""
    with name_scope(None, "SSIM", [img1, img2]):
        img1, img2 = convert_to_tensor(img1, name="img1"), convert_to_tensor(img2, name="img2")
        max_val = convert_image_dtype(math_ops.cast(max_val, img1.dtype), dtypes.float32)
        img1 = convert_image_dtype(img1, dtypes.float32)
        img2 = convert_image_dtype(img2, dtypes.float32)
        per_channel, _ = _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma,
                                           k1, k2)
        return reduction_ops.reduce_mean(per_channel, [-1])


def image_gradients(image):
    """(dy, dx): forward differences of a 4-D batch, zero in the last row / column."""
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not "
                         f"{image.shape}.")
    shape = array_ops.shape(image)
    n, h, w, d = (shape[i] for i in range(4))
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = joining_ops.concat([dy, creation_ops.zeros(joining_ops.stack([n, 1, w, d]),
                                                    image.dtype)], 1)
    dx = joining_ops.concat([dx, creation_ops.zeros(joining_ops.stack([n, h, 1, d]),
                                                    image.dtype)], 2)
    dy.set_shape(image.shape)
    dx.set_shape(image.shape)
    return dy, dx


def total_variation(images, name=None):
    """Sum of absolute differences of neighbouring pixels (per image for a 4-D batch)."""
    with name_scope(name, "total_variation", [images]):
        images = convert_to_tensor(images, name="images")
        rank = images.shape.ndims
        if rank == 3:
            d1 = images[1:, :, :] - images[:-1, :, :]
            d2 = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif rank == 4:
            d1 = images[:, 1:, :, :] - images[:, :-1, :, :]
            d2 = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return (reduction_ops.reduce_sum(math_ops.abs(d1), axis=axis)
                + reduction_ops.reduce_sum(math_ops.abs(d2), axis=axis))


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name=None):
    """Indices of at most `max_output_size` boxes kept by greedy IoU suppression
    (NonMaxSuppressionV3)."""
    with name_scope(name, "non_max_suppression"):
        iou = convert_to_tensor(iou_threshold, dtypes.float32, name="iou_threshold")
        score = convert_to_tensor(score_threshold, dtypes.float32, name="score_threshold")
        return apply_op("NonMaxSuppressionV3", boxes, scores, max_output_size, iou, score)


def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """Images with the outlines of normalized `boxes` drawn (DrawBoundingBoxes; with a
    [num_colors, channels] `colors` table, DrawBoundingBoxesV2)."""
    if colors is None:
        return apply_op("DrawBoundingBoxes", images, boxes, name=name)
    return apply_op("DrawBoundingBoxesV2", images, boxes, colors, name=name)


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None,
                                  min_object_covered=0.1, aspect_ratio_range=None,
                                  area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """(begin, size, bboxes) of a random crop covering at least `min_object_covered` of one
    box (SampleDistortedBoundingBoxV2; TF1's signature with `seed2`)."""
    s1, s2 = get_seed(seed)
    if seed2 is not None:
        s2 = seed2
    attrs = {"seed": s1, "seed2": s2}
    for key, value in (("aspect_ratio_range", aspect_ratio_range), ("area_range", area_range),
                       ("max_attempts", max_attempts),
                       ("use_image_if_no_bounding_boxes", use_image_if_no_bounding_boxes)):
        if value is not None:
            attrs[key] = [float(v) for v in value] if key.endswith("range") else value
    covered = convert_to_tensor(min_object_covered, dtypes.float32, name="min_object_covered")
    return apply_op("SampleDistortedBoundingBoxV2", image_size, bounding_boxes, covered,
                    name=name, **attrs)
