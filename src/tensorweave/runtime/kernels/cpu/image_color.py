"""CPU kernels of the colour ops and ExtractImagePatches (ops/image_ops.py).

RGBToHSV / HSVToRGB follow TF's colorspace_op.h (hue in [0, 1), the hexcone model).
AdjustSaturation and AdjustHue go through HSV per pixel with the routines of TF's
adjust_saturation_op.cc / adjust_hue_op.cc (hue from the integer sextant, saturation clamped
to [0, 1], hue wrapped into [0, 1)), in float32. AdjustContrastv2 is
(x - mean) * factor + mean with the mean over each image's height and width, per channel.
"""

from __future__ import annotations

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.registry import register_kernel

F32 = np.float32


def _invalid(message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, message)


def _last_dim_3(op: str, images) -> np.ndarray:
    images = np.asarray(images)
    if images.ndim < 1 or images.shape[-1] != 3:
        raise _invalid(f"{op}: input must have 3 channels but input only has "
                       f"{images.shape[-1] if images.ndim else 0} channels.")
    return images


def rgb_to_hsv(rgb: np.ndarray, adjust_op: bool = False) -> np.ndarray:
    """TF's RGBToHSV; `adjust_op`: the adjust ops' variant (1 / (6 range), not 1/range / 6)."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    v = np.maximum(np.maximum(r, g), b)
    rng = v - np.minimum(np.minimum(r, g), b)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(v > 0, rng / v, 0)
        one = rgb.dtype.type(1)
        norm = one / (6 * rng) if adjust_op else (one / rng) * (one / rgb.dtype.type(6))
        h = np.where(r == v, norm * (g - b),
                     np.where(g == v, norm * (b - r) + rgb.dtype.type(2.0 / 6.0),
                              norm * (r - g) + rgb.dtype.type(4.0 / 6.0)))
    h = np.where(rng > 0, h, 0)
    h = np.where(h < 0, h + 1, h)
    return np.stack([h, s, v], -1).astype(rgb.dtype)


def hsv_to_rgb(hsv: np.ndarray) -> np.ndarray:
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    dh = h * 6
    one = hsv.dtype.type(1)
    dr = np.clip(np.abs(dh - 3) - 1, 0, one)
    dg = np.clip(2 - np.abs(dh - 2), 0, one)
    db = np.clip(2 - np.abs(dh - 4), 0, one)
    m = one - s
    return np.stack([(m + s * dr) * v, (m + s * dg) * v, (m + s * db) * v], -1).astype(hsv.dtype)


def _hsv_of(rgb):
    """(h, s, v) with the adjust ops' own conversion (float32)."""
    return np.moveaxis(rgb_to_hsv(rgb.astype(F32), adjust_op=True), -1, 0)


def _sextant_rgb(h, s, v) -> np.ndarray:
    """hsv -> rgb as TF's adjust ops compute it: chroma c = s v, sextant int(6 h)."""
    c = s * v
    m = v - c
    dh = h * F32(6)
    cat = dh.astype(np.int64)
    fmodu = np.mod(dh, F32(2))
    x = c * (F32(1) - np.abs(fmodu - F32(1)))
    zero = np.zeros_like(c)
    table = {0: (c, x, zero), 1: (x, c, zero), 2: (zero, c, x), 3: (zero, x, c),
             4: (x, zero, c), 5: (c, zero, x)}
    out = [np.zeros_like(c) for _ in range(3)]
    for k, parts in table.items():
        sel = cat == k
        for i in range(3):
            out[i] = np.where(sel, parts[i], out[i])
    return np.stack([o + m for o in out], -1)


def _scalar(op: str, value, name: str) -> F32:
    value = np.asarray(value)
    if value.ndim != 0:
        raise _invalid(f"{op}: {name} must be scalar: [{','.join(map(str, value.shape))}]")
    return F32(value)


def _adjust_input(op: str, images) -> np.ndarray:
    images = np.asarray(images)
    if images.ndim < 3:
        raise _invalid(f"{op}: input must be at least 3-D, got shape "
                       f"[{','.join(map(str, images.shape))}]")
    return images


@register_kernel("AdjustSaturation")
def _adjust_saturation(node):
    def run(images, scale):
        images = _last_dim_3("AdjustSaturation", _adjust_input("AdjustSaturation", images))
        h, s, v = _hsv_of(images)
        s = np.clip(s * _scalar("AdjustSaturation", scale, "scale"), F32(0), F32(1))
        return _sextant_rgb(h, s, v).astype(images.dtype)
    return run


@register_kernel("AdjustHue")
def _adjust_hue(node):
    def run(images, delta):
        images = _last_dim_3("AdjustHue", _adjust_input("AdjustHue", images))
        h, s, v = _hsv_of(images)
        h = np.fmod(h + _scalar("AdjustHue", delta, "delta"), F32(1))
        h = np.where(h < 0, np.fmod(F32(1) + h, F32(1)), h)
        return _sextant_rgb(h, s, v).astype(images.dtype)
    return run


@register_kernel("AdjustContrastv2")
def _adjust_contrast(node):
    def run(images, factor):
        images = _adjust_input("AdjustContrastv2", images)
        factor = _scalar("AdjustContrastv2", factor, "contrast_factor")
        x = images.astype(F32)
        mean = x.mean(axis=(-3, -2), keepdims=True, dtype=np.float64).astype(F32)
        return ((x - mean) * factor + mean).astype(images.dtype)
    return run


register_kernel("RGBToHSV")(lambda node: lambda x: rgb_to_hsv(_last_dim_3("RGBToHSV", x)))
register_kernel("HSVToRGB")(lambda node: lambda x: hsv_to_rgb(_last_dim_3("HSVToRGB", x)))


# -- ExtractImagePatches ------------------------------------------------------------------------
def _axis_plan(size: int, k: int, stride: int, rate: int, padding: str):
    """(output size, padding before, padding after) of one axis (TF's windowed output)."""
    eff = (k - 1) * rate + 1
    if padding == "SAME":
        out = -(-size // stride)
        total = max(0, (out - 1) * stride + eff - size)
        return out, total // 2, total - total // 2
    return max(0, (size - eff) // stride + 1), 0, 0


@register_kernel("ExtractImagePatches")
def _extract_image_patches(node):
    ks, st, rt = (node.attr(a) for a in ("ksizes", "strides", "rates"))
    padding = node.attr("padding")

    def run(images):
        images = np.asarray(images)
        if images.ndim != 4:
            raise _invalid("ExtractImagePatches: input must be 4-dimensional")
        n, h, w, d = images.shape
        oh, top, bottom = _axis_plan(h, ks[1], st[1], rt[1], padding)
        ow, left, right = _axis_plan(w, ks[2], st[2], rt[2], padding)
        padded = np.pad(images, [(0, 0), (top, bottom), (left, right), (0, 0)])
        out = np.empty((n, oh, ow, ks[1], ks[2], d), images.dtype)
        for i in range(ks[1]):
            r0 = i * rt[1]
            for j in range(ks[2]):
                c0 = j * rt[2]
                out[:, :, :, i, j] = padded[:, r0:r0 + (oh - 1) * st[1] + 1:st[1],
                                            c0:c0 + (ow - 1) * st[2] + 1:st[2]][:, :oh, :ow]
        return out.reshape(n, oh, ow, ks[1] * ks[2] * d)
    return run
