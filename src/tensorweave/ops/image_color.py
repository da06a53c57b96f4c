"""`tf.image` colour functions, as TF 2.x's image_ops_impl.py computes them in graph mode:
`convert_image_dtype`, `adjust_brightness/contrast/saturation/hue/gamma` and their `random_`
versions, `rgb_to_grayscale`, `grayscale_to_rgb`, `rgb_to_hsv`, `hsv_to_rgb`,
`per_image_standardization`.

Integer images are converted to float32 in [0, 1] before an adjustment and back after it
(saturating), as TF does; float16/float32 images are adjusted directly.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, creation_ops, joining_ops, math_ops, reduction_ops
from tensorweave.ops.apply import apply_op
from tensorweave.ops.math_matmul_ops import tensordot
from tensorweave.ops.random_ops import random_uniform

_FLOAT_DIRECT = (dtypes.float16, dtypes.float32)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """`image` in `dtype`, rescaled: integers span [0, MAX], floats [0, 1).

    int -> int shifts by the ratio of the ranges; int -> float multiplies by 1 / MAX;
    float -> int multiplies by MAX + 0.5 and casts (saturating when `saturate`)."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "convert_image", [image]) as scope:
        image = convert_to_tensor(image, name="image")
        src = image.dtype.base_dtype
        if not (dtype.is_floating or dtype.is_integer) or not (src.is_floating
                                                               or src.is_integer):
            raise AttributeError("dtype must be either floating point or integer")
        if src == dtype:
            return array_ops.identity(image, name=scope)
        cast = math_ops.saturate_cast if saturate else math_ops.cast
        if src.is_integer and dtype.is_integer:
            return _int_to_int(image, src, dtype, cast, scope)
        if src.is_floating and dtype.is_floating:
            return math_ops.cast(image, dtype, name=scope)
        if src.is_integer:
            return math_ops.multiply(math_ops.cast(image, dtype), 1.0 / src.max, name=scope)
        scaled = math_ops.multiply(image, dtype.max + 0.5)
        return cast(scaled, dtype, name=scope)


def _int_to_int(image, src, dtype, cast, scope):
    if src.max > dtype.max:
        scale = (src.max + 1) // (dtype.max + 1)
        return cast(math_ops.floordiv(image, scale), dtype, name=scope)
    scale = (dtype.max + 1) // (src.max + 1)
    return math_ops.multiply(math_ops.cast(image, dtype), scale, name=scope)


def _as_float(image):
    return image if image.dtype.base_dtype in _FLOAT_DIRECT else \
        convert_image_dtype(image, dtypes.float32)


def _adjust(image, name, default, fn):
    """fn(float image) on `image` converted to float (when not float16/32) and back."""
    with name_scope(name, default, [image]) as scope:
        image = convert_to_tensor(image, name="image")
        orig = image.dtype.base_dtype
        out = fn(_as_float(image))
        return convert_image_dtype(out, orig, saturate=True, name=scope)


def adjust_brightness(image, delta):
    """image + delta (in [0, 1] units for integer images)."""
    return _adjust(image, None, "adjust_brightness",
                   lambda f: math_ops.add(f, math_ops.cast(delta, f.dtype)))


def adjust_contrast(images, contrast_factor):
    """(x - mean) * factor + mean, the mean per image and channel (AdjustContrastv2)."""
    return _adjust(images, None, "adjust_contrast",
                   lambda f: apply_op("AdjustContrastv2", f, contrast_factor))


def adjust_saturation(image, saturation_factor, name=None):
    """Scales the saturation in HSV space (AdjustSaturation)."""
    return _adjust(image, name, "adjust_saturation",
                   lambda f: apply_op("AdjustSaturation", f, saturation_factor))


def adjust_hue(image, delta, name=None):
    """Rotates the hue by `delta` turns, delta in [-1, 1] (AdjustHue)."""
    return _adjust(image, name, "adjust_hue", lambda f: apply_op("AdjustHue", f, delta))


def adjust_gamma(image, gamma=1, gain=1):
    """gain * image ** gamma (gamma >= 0)."""
    def fn(f):
        return math_ops.multiply(math_ops.cast(gain, f.dtype),
                                 math_ops.pow(f, math_ops.cast(gamma, f.dtype)))
    if isinstance(gamma, (int, float)) and gamma < 0:
        raise ValueError("Gamma should be a non-negative real number.")
    return _adjust(image, None, "adjust_gamma", fn)


def adjust_jpeg_quality(image, jpeg_quality, name=None):
    """The image after a JPEG encode/decode round trip at `jpeg_quality`."""
    from tensorweave.ops.image_codec_ops import decode_jpeg

    with name_scope(name, "adjust_jpeg_quality", [image]) as scope:
        image = convert_to_tensor(image, name="image")
        channels = image.shape.as_tuple()[-1] if image.shape.ndims else None
        orig = image.dtype.base_dtype
        as_uint8 = convert_image_dtype(image, dtypes.uint8, saturate=True)
        quality = convert_to_tensor(jpeg_quality, dtype=dtypes.int32, name="jpeg_quality")
        encoded = apply_op("EncodeJpegVariableQuality", as_uint8, quality)
        round_trip = decode_jpeg(encoded, channels=channels or 0)
        return convert_image_dtype(round_trip, orig, saturate=True, name=scope)


def _uniform(lower, upper, seed):
    return random_uniform([], lower, upper, seed=seed)


def random_brightness(image, max_delta, seed=None):
    """adjust_brightness by a delta drawn uniformly from [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, _uniform(-max_delta, max_delta, seed))


def random_contrast(image, lower, upper, seed=None):
    """adjust_contrast by a factor drawn uniformly from [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_contrast(image, _uniform(lower, upper, seed))


def random_saturation(image, lower, upper, seed=None):
    """adjust_saturation by a factor drawn uniformly from [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_saturation(image, _uniform(lower, upper, seed))


def random_hue(image, max_delta, seed=None):
    """adjust_hue by a delta drawn uniformly from [-max_delta, max_delta), max_delta <= 0.5."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, _uniform(-max_delta, max_delta, seed))


def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None):
    """adjust_jpeg_quality at a quality drawn uniformly from [min, max)."""
    if not 0 <= min_jpeg_quality < max_jpeg_quality <= 100:
        raise ValueError("jpeg quality must be in [0, 100] with min < max.")
    quality = random_uniform([], min_jpeg_quality, max_jpeg_quality, dtype=dtypes.int32,
                             seed=seed)
    return adjust_jpeg_quality(image, quality)


def rgb_to_grayscale(images, name=None):
    """[..., 1] luma with weights (0.2989, 0.5870, 0.1140), in the input's dtype."""
    with name_scope(name, "rgb_to_grayscale", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        orig = images.dtype.base_dtype
        flt = convert_image_dtype(images, dtypes.float32)
        weights = np.array([0.2989, 0.5870, 0.1140], np.float32)
        gray = array_ops.expand_dims(tensordot(flt, weights, [[-1], [-1]]), -1)
        return convert_image_dtype(gray, orig, name=scope)


def grayscale_to_rgb(images, name=None):
    """[..., 3] copies of a [..., 1] image."""
    with name_scope(name, "grayscale_to_rgb", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        last = images.shape.as_tuple()
        if last is not None and last[-1] not in (None, 1):
            raise ValueError(f"Dimension must be 1 but is {last[-1]}")
        rank = array_ops.rank(images)
        multiples = joining_ops.concat(
            [creation_ops.ones(array_ops.expand_dims(rank - 1, 0), dtypes.int32), [3]], 0)
        out = joining_ops.tile(images, multiples, name=scope)
        if last is not None:
            out.set_shape(list(last[:-1]) + [3])
        return out


def rgb_to_hsv(images, name=None):
    """Hue, saturation, value in [0, 1] of RGB images in [0, 1] (RGBToHSV)."""
    return apply_op("RGBToHSV", images, name=name)


def hsv_to_rgb(images, name=None):
    """RGB of HSV images (HSVToRGB)."""
    return apply_op("HSVToRGB", images, name=name)


def per_image_standardization(image):
    """(x - mean) / max(stddev, 1 / sqrt(pixels)) over each image's last three axes, float32."""
    with name_scope(None, "per_image_standardization", [image]) as scope:
        image = convert_to_tensor(image, name="image")
        dims = image.shape.as_tuple()
        if dims is not None and len(dims) < 3:
            raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.")
        image = math_ops.cast(image, dtypes.float32)
        pixels = reduction_ops.reduce_prod(array_ops.shape(image)[-3:])
        mean = reduction_ops.reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
        stddev = reduction_ops.reduce_std(image, axis=[-1, -2, -3], keepdims=True)
        min_stddev = math_ops.rsqrt(math_ops.cast(pixels, dtypes.float32))
        adjusted = math_ops.maximum(stddev, min_stddev)
        return math_ops.divide(image - mean, adjusted, name=scope)
