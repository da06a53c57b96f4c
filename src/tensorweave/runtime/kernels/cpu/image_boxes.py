"""CPU kernels of the box ops (ops/image_ops.py): NonMaxSuppression V1-V3, DrawBoundingBoxes V1/V2,
SampleDistortedBoundingBox V1/V2 and ExtractGlimpse, after TF's kernels of the same names.

Sampling ops draw from a numpy generator per node (seeded from seed/seed2 as the random ops
are, runtime/kernels/cpu/random.py): the same constraints as TF, not TF's random stream.
"""

from __future__ import annotations

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.cpu.random import _rng
from tensorweave.runtime.kernels.registry import register_kernel

F32 = np.float32
_COLORS = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
                    [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1],
                    [1, 0, 1, 1]], F32)


def _invalid(message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, message)


# -- non-max suppression ----------------------------------------------------------------------
def _iou(boxes: np.ndarray, i: int, others: np.ndarray) -> np.ndarray:
    lo = np.minimum(boxes[:, :2], boxes[:, 2:])
    hi = np.maximum(boxes[:, :2], boxes[:, 2:])
    area = np.prod(hi - lo, 1)
    inter = np.prod(np.maximum(np.minimum(hi[i], hi[others]) - np.maximum(lo[i], lo[others]),
                               0), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area[i] + area[others] - inter)
    return np.where((area[i] <= 0) | (area[others] <= 0), 0, iou)


def non_max_suppression(boxes, scores, max_output: int, iou_threshold: float,
                        score_threshold: float = -np.inf) -> np.ndarray:
    """Greedy NMS: best score first (lower index on ties), dropping boxes whose IoU with a
    kept box exceeds `iou_threshold`; only scores above `score_threshold` compete."""
    boxes, scores = np.asarray(boxes, F32), np.asarray(scores, F32)
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise _invalid(f"boxes must be 2-D with 4 columns, got shape "
                       f"[{','.join(map(str, boxes.shape))}]")
    if scores.shape != (boxes.shape[0],):
        raise _invalid("scores has incompatible shape")
    if not 0 <= iou_threshold <= 1:
        raise _invalid("iou_threshold must be in [0, 1]")
    if max_output < 0:
        raise _invalid("max_output_size must be non-negative")
    order = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > score_threshold]
    kept: list[int] = []
    for i in order:
        if len(kept) >= max_output:
            break
        if not kept or not (_iou(boxes, i, np.array(kept)) > iou_threshold).any():
            kept.append(i)
    return np.array(kept, np.int32)


def _scalar(x) -> float:
    arr = np.asarray(x)
    if arr.ndim != 0:
        raise _invalid(f"expected a scalar, got shape [{','.join(map(str, arr.shape))}]")
    return float(arr)


@register_kernel("NonMaxSuppression")
def _nms_v1(node):
    threshold = float(node.attr("iou_threshold"))
    return lambda b, s, m: non_max_suppression(b, s, int(_scalar(m)), threshold)


@register_kernel("NonMaxSuppressionV2")
def _nms_v2(node):
    return lambda b, s, m, t: non_max_suppression(b, s, int(_scalar(m)), _scalar(t))


@register_kernel("NonMaxSuppressionV3")
def _nms_v3(node):
    return lambda b, s, m, t, st: non_max_suppression(b, s, int(_scalar(m)), _scalar(t),
                                                      _scalar(st))


# -- DrawBoundingBoxes ------------------------------------------------------------------------
def draw_bounding_boxes(images, boxes, colors=None) -> np.ndarray:
    """Box outlines (rows/columns at int(coordinate * (size - 1))) in the colour table's
    colours, box k in colour k mod len(table); grayscale images use 1 in the first channel
    of the default table (TF's DrawBoundingBoxesOp)."""
    images, boxes = np.asarray(images), np.asarray(boxes, F32)
    if images.ndim != 4 or images.shape[-1] not in (1, 3, 4):
        raise _invalid("DrawBoundingBoxes: images must be 4-D with 1, 3 or 4 channels")
    if boxes.ndim != 3 or boxes.shape[-1] != 4 or boxes.shape[0] != images.shape[0]:
        raise _invalid("DrawBoundingBoxes: boxes must be [batch, num_boxes, 4]")
    if colors is None or np.asarray(colors).size == 0:
        table = _COLORS.copy()
        if images.shape[-1] == 1:
            table[:, 0] = 1
    else:
        table = np.asarray(colors, F32)
        if table.ndim != 2 or table.shape[1] < images.shape[-1]:
            raise _invalid(f"DrawBoundingBoxesV2: colors must be a 2-D table with at least "
                           f"{images.shape[-1]} columns, got shape "
                           f"[{','.join(map(str, table.shape))}]")
    canvas = images.copy()
    for b in range(images.shape[0]):
        for k, box in enumerate(boxes[b]):
            _draw_box(canvas[b], box, table[k % len(table)].astype(images.dtype))
    return canvas


register_kernel("DrawBoundingBoxes")(lambda node: draw_bounding_boxes)
register_kernel("DrawBoundingBoxesV2")(lambda node: draw_bounding_boxes)


def _draw_box(canvas, box, color) -> None:
    h, w, depth = canvas.shape
    top, left = int(F32(box[0]) * (h - 1)), int(F32(box[1]) * (w - 1))
    bottom, right = int(F32(box[2]) * (h - 1)), int(F32(box[3]) * (w - 1))
    if top > bottom or left > right or top >= h or bottom < 0 or left >= w or right < 0:
        return
    r0, r1 = max(top, 0), min(bottom, h - 1)
    c0, c1 = max(left, 0), min(right, w - 1)
    color = color[:depth]
    if top >= 0:
        canvas[top, c0:c1 + 1] = color
    if bottom < h:
        canvas[bottom, c0:c1 + 1] = color
    if left >= 0:
        canvas[r0:r1 + 1, left] = color
    if right < w:
        canvas[r0:r1 + 1, right] = color


# -- SampleDistortedBoundingBox -------------------------------------------------------------
def _random_crop(rng, width, height, aspect, area_range):
    """TF's GenerateRandomCrop: (x, y, w, h) of a crop of `aspect` and area in range, or None."""
    min_area = area_range[0] * width * height
    max_area = area_range[1] * width * height
    crop_h = int(np.rint(np.sqrt(min_area / aspect)))
    max_h = int(np.rint(np.sqrt(max_area / aspect)))
    if np.rint(max_h * aspect) > width:
        max_h = int((width + 0.5 - 1e-7) / aspect)
    max_h = min(max_h, height)
    crop_h = min(crop_h, max_h)
    if crop_h < max_h:
        crop_h += int(rng.integers(0, max_h - crop_h + 1))
    crop_w = int(np.rint(crop_h * aspect))
    area = crop_w * crop_h
    if area < min_area:
        crop_h += 1
        crop_w = int(np.rint(crop_h * aspect))
        area = crop_w * crop_h
    if area > max_area:
        crop_h -= 1
        crop_w = int(np.rint(crop_h * aspect))
        area = crop_w * crop_h
    if (area < min_area or area > max_area or crop_w > width or crop_h > height
            or crop_w <= 0 or crop_h <= 0):
        return None
    y = int(rng.integers(0, height - crop_h)) if crop_h < height else 0
    x = int(rng.integers(0, width - crop_w)) if crop_w < width else 0
    return x, y, crop_w, crop_h


def _covers(crop, box, min_covered: float) -> bool:
    x, y, w, h = crop
    bx0, by0, bx1, by1 = box
    iw = max(0.0, min(x + w, bx1) - max(x, bx0))
    ih = max(0.0, min(y + h, by1) - max(y, by0))
    area = (bx1 - bx0) * (by1 - by0)
    return area > 0 and iw * ih / area >= min_covered


def _sample_box_kernel(node, min_covered_input: bool):
    rng = _rng(node)
    aspect = [float(v) for v in node.attr("aspect_ratio_range")]
    area = [float(v) for v in node.attr("area_range")]
    attempts = int(node.attr("max_attempts"))
    use_image = bool(node.attr("use_image_if_no_bounding_boxes"))
    out = node.attr("T").np_dtype
    if attempts <= 0 or not 0 < area[0] <= area[1] <= 1 or not 0 < aspect[0] <= aspect[1]:
        raise _invalid(f"{node.op}: max_attempts must be positive and the area and aspect "
                       f"ratio ranges must be positive and ordered")

    def run(image_size, boxes, min_covered=None):
        if min_covered is None:
            min_covered = node.attr("min_object_covered")
        size = np.asarray(image_size)
        if size.shape != (3,):
            raise _invalid("image_size must be 1-dimensional with 3 elements")
        height, width = int(size[0]), int(size[1])
        rects = _boxes(np.asarray(boxes, F32), height, width, use_image)
        crop = None
        for _ in range(attempts):
            ratio = rng.random() * (aspect[1] - aspect[0]) + aspect[0]
            target = rects[int(rng.integers(0, len(rects)))]
            c = _random_crop(rng, width, height, ratio, area)
            if c is not None and _covers(c, target, float(min_covered)):
                crop = c
                break
        x, y, w, h = crop or (0, 0, width, height)
        bbox = np.array([[[y / height, x / width, (y + h) / height, (x + w) / width]]], F32)
        return np.array([y, x, 0], out), np.array([h, w, -1], out), bbox
    return run


def _boxes(boxes, height: int, width: int, use_image: bool) -> list:
    flat = boxes.reshape(-1, 4) if boxes.size else np.zeros((0, 4), F32)
    rects = [(b[1] * width, b[0] * height, b[3] * width, b[2] * height) for b in flat
             if 0 <= b[0] < b[2] <= 1 and 0 <= b[1] < b[3] <= 1]
    if len(rects) < len(flat):
        raise _invalid("All bounding box coordinates must be in [0.0, 1.0] with ymin < ymax "
                       "and xmin < xmax")
    if not rects:
        if not use_image:
            raise _invalid("No bounding boxes provided as input. One must enable "
                           "use_image_if_no_bounding_boxes if you wish to not provide any "
                           "bounding boxes.")
        rects = [(0, 0, width, height)]
    return rects


register_kernel("SampleDistortedBoundingBox")(lambda node: _sample_box_kernel(node, False))
register_kernel("SampleDistortedBoundingBoxV2")(lambda node: _sample_box_kernel(node, True))


# -- ExtractGlimpse ---------------------------------------------------------------------------
@register_kernel("ExtractGlimpse")
def _extract_glimpse(node):
    rng = _rng(node)
    centered, normalized = bool(node.attr("centered")), bool(node.attr("normalized"))
    noise = node.attr("noise") or "uniform"
    if noise == "uniform" and not node.attr("uniform_noise"):
        noise = "gaussian"

    def run(images, size, offsets):
        images, offsets = np.asarray(images, F32), np.asarray(offsets, F32)
        gh, gw = (int(v) for v in np.asarray(size))
        if images.ndim != 4 or offsets.shape != (images.shape[0], 2):
            raise _invalid("ExtractGlimpse: input must be 4-D and offsets [batch, 2]")
        out = np.empty((images.shape[0], gh, gw, images.shape[3]), F32)
        for i, (oy, ox) in enumerate(offsets):
            out[i] = _glimpse(images[i], gh, gw, oy, ox, centered, normalized, noise, rng)
        return out
    return run


def _glimpse(img, gh, gw, y, x, centered, normalized, noise, rng):
    h, w = img.shape[:2]
    if normalized:
        y, x = y * F32(h), x * F32(w)
    if centered:
        y, x = y / F32(2) + F32(h / 2.0), x / F32(2) + F32(w / 2.0)
    y, x = int(y - F32(gh / 2.0)), int(x - F32(gw / 2.0))   # C++ truncation
    out = _noise(img, (gh, gw, img.shape[2]), noise, rng)
    r0, r1 = max(y, 0), min(y + gh, h)
    c0, c1 = max(x, 0), min(x + gw, w)
    if r1 > r0 and c1 > c0:
        out[r0 - y:r1 - y, c0 - x:c1 - x] = img[r0:r1, c0:c1]
    return out


def _noise(img, shape, noise, rng):
    if noise == "zero":
        return np.zeros(shape, F32)
    if noise == "gaussian":
        return rng.normal(img.mean(), img.std(), shape).astype(F32)
    lo = img.min()
    return (lo + rng.random(shape) * (img.max() - lo)).astype(F32)
