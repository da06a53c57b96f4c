"""`tf.image` geometry: flips, transposes, rot90 (and random flips), crops and pads
(`crop_to_bounding_box`, `pad_to_bounding_box`, `resize_image_with_crop_or_pad`,
`central_crop`), resizing (`resize_images` / `resize` with `ResizeMethod`, the four
`resize_*` ops), `crop_and_resize`, `extract_glimpse`, `extract_image_patches`.

As TF's image_ops_impl.py: images are 3-D [height, width, channels] or 4-D batches; offsets
and sizes known at graph build are checked then (ValueError), others at run time.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, gather_ops, joining_ops, math_ops
from tensorweave.ops.apply import apply_op
from tensorweave.ops.random_ops import random_uniform
from tensorweave.ops.shape_inference import constant_value
from tensorweave.ops.slicing_ops import slice as slice_


class ResizeMethod:
    """TF1's `tf.image.ResizeMethod` (tf.compat.v1.image.ResizeMethod)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_RESIZE_OPS = {ResizeMethod.BILINEAR: "ResizeBilinear",
               ResizeMethod.NEAREST_NEIGHBOR: "ResizeNearestNeighbor",
               ResizeMethod.BICUBIC: "ResizeBicubic", ResizeMethod.AREA: "ResizeArea",
               "bilinear": "ResizeBilinear", "nearest": "ResizeNearestNeighbor",
               "bicubic": "ResizeBicubic", "area": "ResizeArea"}


def _image(image, name="image"):
    image = convert_to_tensor(image, name=name)
    dims = image.shape.as_tuple()
    if dims is not None and len(dims) not in (3, 4):
        raise ValueError(f"'{name}' (shape {image.shape}) must have either 3 or 4 dimensions.")
    return image


def _batched(image):
    """(4-D image, was_3d) — a 3-D image gets a batch axis of 1."""
    dims = image.shape.as_tuple()
    if dims is not None and len(dims) == 3:
        return array_ops.expand_dims(image, 0), True
    return image, False


def _hw(image) -> list:
    """[height, width] of a 4-D image: static ints where known, else scalar tensors."""
    dims = image.shape.as_tuple()
    dynamic = array_ops.shape(image)
    return [dims[i] if dims is not None and dims[i] is not None else dynamic[i]
            for i in (1, 2)]


# -- flips and transposes ---------------------------------------------------------------------
def _flip(image, axis3: int, name: str, scope_name: str):
    with name_scope(None, scope_name, [image]) as scope:
        image = _image(image)
        axis = axis3 + 1 if image.shape.ndims == 4 else axis3
        return joining_ops.reverse_v2(image, [axis], name=scope)


def flip_left_right(image):
    return _flip(image, 1, "flip_left_right", "flip_left_right")


def flip_up_down(image):
    return _flip(image, 0, "flip_up_down", "flip_up_down")


def _random_flip(image, axis3: int, seed, scope_name: str):
    with name_scope(None, scope_name, [image]) as scope:
        image = _image(image)
        if image.shape.ndims == 4:
            n = array_ops.shape(image)[0]
            flip = random_uniform(array_ops.expand_dims(n, 0), 0, 1.0, seed=seed) < 0.5
            flip = array_ops.reshape(flip, [-1, 1, 1, 1])
            return gather_ops.where_v2(flip, joining_ops.reverse_v2(image, [axis3 + 1]), image,
                                       name=scope)
        flip = random_uniform([], 0, 1.0, seed=seed) < 0.5
        return gather_ops.where_v2(flip, joining_ops.reverse_v2(image, [axis3]), image,
                                   name=scope)


def random_flip_left_right(image, seed=None):
    """Each image mirrored left-right with probability 1/2."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """Each image mirrored up-down with probability 1/2."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def transpose_image(image, name=None):
    """Height and width swapped."""
    with name_scope(name, "transpose", [image]) as scope:
        image = _image(image)
        perm = [0, 2, 1, 3] if image.shape.ndims == 4 else [1, 0, 2]
        return joining_ops.transpose(image, perm, name=scope)


transpose = transpose_image


def rot90(image, k=1, name=None):
    """Rotated counter-clockwise by k * 90 degrees (k a Python int or a scalar tensor)."""
    with name_scope(name, "rot90", [image, k]) as scope:
        image = _image(image)
        kv = constant_value(convert_to_tensor(k, dtype=dtypes.int32))
        if kv is None:
            return _rot90_dynamic(image, k, scope)
        return array_ops.identity(_rot90_static(image, int(kv) % 4), name=scope)


def _rot90_static(image, k: int):
    h, w = (1, 2) if image.shape.ndims == 4 else (0, 1)
    perm = list(range(image.shape.ndims))
    perm[h], perm[w] = perm[w], perm[h]
    if k == 1:
        return joining_ops.transpose(joining_ops.reverse_v2(image, [w]), perm)
    if k == 2:
        return joining_ops.reverse_v2(image, [h, w])
    if k == 3:
        return joining_ops.reverse_v2(joining_ops.transpose(image, perm), [w])
    return image


def _rot90_dynamic(image, k, scope):
    from tensorweave.ops.control_flow_ops import case

    k = math_ops.floormod(convert_to_tensor(k, dtype=dtypes.int32), 4)
    branches = [(math_ops.equal(k, i), (lambda i=i: _rot90_static(image, i))) for i in (1, 2, 3)]
    return case(branches, default=lambda: image, exclusive=True, name=scope)


# -- crops and pads -----------------------------------------------------------------------------
def _check(cond, message: str, static: bool):
    """Raises ValueError for a condition known false at build time; None otherwise."""
    if static and not cond:
        raise ValueError(message)


def _is_int(*values) -> bool:
    return all(isinstance(v, (int, np.integer)) for v in values)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The [target_height, target_width] window whose top-left corner is at the offsets."""
    with name_scope(None, "crop_to_bounding_box", [image]) as scope:
        image, was_3d = _batched(_image(image))
        height, width = _hw(image)
        static = _is_int(offset_height, offset_width, target_height, target_width)
        _check(not static or (offset_height >= 0 and offset_width >= 0),
               "offset_height and offset_width must be >= 0.", static)
        _check(not static or (target_height > 0 and target_width > 0),
               "target_width and target_height must be > 0.", static)
        if static and _is_int(height, width):
            _check(width >= target_width + offset_width,
                   "width must be >= target + offset.", True)
            _check(height >= target_height + offset_height,
                   "height must be >= target + offset.", True)
        begin = joining_ops.stack([0, offset_height, offset_width, 0])
        size = joining_ops.stack([-1, target_height, target_width, -1])
        out = slice_(image, begin, size)
        if static:
            out.set_shape([image.shape.as_tuple()[0] if image.shape.ndims else None,
                           target_height, target_width,
                           image.shape.as_tuple()[3] if image.shape.ndims else None])
        return array_ops.squeeze(out, [0], name=scope) if was_3d else \
            array_ops.identity(out, name=scope)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The image placed at the offsets on a [target_height, target_width] zero canvas."""
    with name_scope(None, "pad_to_bounding_box", [image]) as scope:
        image, was_3d = _batched(_image(image))
        height, width = _hw(image)
        after_h = target_height - offset_height - height
        after_w = target_width - offset_width - width
        static = _is_int(offset_height, offset_width, after_h, after_w)
        _check(not static or (offset_height >= 0 and offset_width >= 0),
               "offset_height and offset_width must be >= 0", static)
        _check(not static or after_h >= 0, "height must be <= target - offset", static)
        _check(not static or after_w >= 0, "width must be <= target - offset", static)
        paddings = joining_ops.stack([[0, 0], joining_ops.stack([offset_height, after_h]),
                                      joining_ops.stack([offset_width, after_w]), [0, 0]])
        out = joining_ops.pad(image, paddings)
        if _is_int(target_height, target_width):
            dims = image.shape.as_tuple() or (None,) * 4
            out.set_shape([dims[0], target_height, target_width, dims[3]])
        return array_ops.squeeze(out, [0], name=scope) if was_3d else \
            array_ops.identity(out, name=scope)


def _max(a, b):
    return max(a, b) if _is_int(a, b) else math_ops.maximum(a, b)


def _min(a, b):
    return min(a, b) if _is_int(a, b) else math_ops.minimum(a, b)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """Centrally cropped and/or zero-padded to [target_height, target_width]."""
    with name_scope(None, "resize_image_with_crop_or_pad", [image]) as scope:
        image = _image(image)
        batched, was_3d = _batched(image)
        height, width = _hw(batched)
        dw, dh = target_width - width, target_height - height
        crop_w, pad_w = _max(-dw // 2, 0), _max(dw // 2, 0)
        crop_h, pad_h = _max(-dh // 2, 0), _max(dh // 2, 0)
        cropped = crop_to_bounding_box(batched, crop_h, crop_w, _min(target_height, height),
                                       _min(target_width, width))
        out = pad_to_bounding_box(cropped, pad_h, pad_w, target_height, target_width)
        return array_ops.squeeze(out, [0], name=scope) if was_3d else \
            array_ops.identity(out, name=scope)


resize_with_crop_or_pad = resize_image_with_crop_or_pad


def central_crop(image, central_fraction):
    """The central `central_fraction` (0, 1] of the height and width."""
    with name_scope(None, "central_crop", [image]) as scope:
        image = _image(image)
        if not 0.0 < central_fraction <= 1.0:
            raise ValueError("central_fraction must be within (0, 1]")
        if central_fraction == 1.0:
            return image
        batched, was_3d = _batched(image)
        height, width = _hw(batched)
        if _is_int(height, width):
            top = int((height - height * central_fraction) / 2)
            left = int((width - width * central_fraction) / 2)
            out = crop_to_bounding_box(batched, top, left, height - 2 * top, width - 2 * left)
        else:
            hf, wf = (math_ops.cast(d, dtypes.float64) for d in (height, width))
            top = math_ops.cast((hf - hf * central_fraction) / 2, dtypes.int32)
            left = math_ops.cast((wf - wf * central_fraction) / 2, dtypes.int32)
            out = slice_(batched, joining_ops.stack([0, top, left, 0]),
                         joining_ops.stack([-1, height - 2 * top, width - 2 * left, -1]))
        return array_ops.squeeze(out, [0], name=scope) if was_3d else \
            array_ops.identity(out, name=scope)


# -- resizing -------------------------------------------------------------------------------
def _resize_op(op_type: str, images, size, align_corners, half_pixel_centers, name):
    attrs = {"align_corners": align_corners}
    if op_type != "ResizeArea":
        attrs["half_pixel_centers"] = half_pixel_centers
    return apply_op(op_type, images, size, name=name, **attrs)


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False, name=None):
    """TF1's `tf.image.resize_images` (= tf.compat.v1.image.resize): 3-D or 4-D images to
    `size` = [new_height, new_width] by `method`; float32 out except for NEAREST_NEIGHBOR and
    for unchanged sizes, which keep the dtype."""
    with name_scope(name, "resize", [images, size]) as scope:
        images = _image(images, "images")
        batched, was_3d = _batched(images)
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        if preserve_aspect_ratio:
            size = _aspect_size(batched, size)
        op_type = _RESIZE_OPS.get(method)
        if op_type is None:
            raise ValueError(f"Resize method is not implemented: {method}")
        new = constant_value(size)
        dims = batched.shape.as_tuple()
        if new is not None and dims is not None and tuple(dims[1:3]) == tuple(int(v) for v in new):
            out = batched
        else:
            out = _resize_op(op_type, batched, size, align_corners, False, None)
        return array_ops.squeeze(out, [0], name=scope) if was_3d else \
            array_ops.identity(out, name=scope)


def _aspect_size(images, size):
    dims, target = images.shape.as_tuple(), constant_value(size)
    if dims is not None and None not in dims[1:3] and target is not None:
        h, w = np.float32(dims[1]), np.float32(dims[2])
        scale = min(np.float32(target[0]) / h, np.float32(target[1]) / w)
        return convert_to_tensor(np.rint([scale * h, scale * w]).astype(np.int32), name="size")
    height, width = (math_ops.cast(d, dtypes.float32) for d in _hw(images))
    target = math_ops.cast(size, dtypes.float32)
    scale = math_ops.minimum(target[0] / height, target[1] / width)
    new = joining_ops.stack([height * scale, width * scale])
    return math_ops.cast(math_ops.round(new), dtypes.int32)


resize = resize_images


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    return _resize_op("ResizeBilinear", images, size, align_corners, half_pixel_centers, name)


def resize_nearest_neighbor(images, size, align_corners=False, name=None,
                            half_pixel_centers=False):
    return _resize_op("ResizeNearestNeighbor", images, size, align_corners,
                      half_pixel_centers, name)


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    return _resize_op("ResizeBicubic", images, size, align_corners, half_pixel_centers, name)


def resize_area(images, size, align_corners=False, name=None):
    return _resize_op("ResizeArea", images, size, align_corners, False, name)


def resize_image_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR,
                          align_corners=False):
    """Resized by the ratio that fits it in the target (sizes floored), then zero-padded to
    [target_height, target_width], offsets floor((target - resized) / 2) (TF1's version)."""
    with name_scope(None, "resize_image_with_pad", [image]):
        image = _image(image)
        batched, was_3d = _batched(image)
        height, width = (math_ops.cast(d, dtypes.float32) for d in _hw(batched))
        th, tw = np.float32(target_height), np.float32(target_width)
        ratio = math_ops.maximum(width / tw, height / th)
        new_h, new_w = height / ratio, width / ratio
        size = math_ops.cast(math_ops.floor(joining_ops.stack([new_h, new_w])), dtypes.int32)
        pad_h = math_ops.maximum(0, math_ops.cast(math_ops.floor((th - new_h) / 2),
                                                  dtypes.int32))
        pad_w = math_ops.maximum(0, math_ops.cast(math_ops.floor((tw - new_w) / 2),
                                                  dtypes.int32))
        resized = resize_images(batched, size, method, align_corners)
        out = pad_to_bounding_box(resized, pad_h, pad_w, target_height, target_width)
        return array_ops.squeeze(out, [0]) if was_3d else out


def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method="bilinear",
                    extrapolation_value=0, name=None, box_indices=None):
    """Crops of `image` at normalized `boxes`, each resized to `crop_size` (CropAndResize)."""
    if box_ind is None:
        box_ind = box_indices
    return apply_op("CropAndResize", image, boxes, box_ind, crop_size, method=method,
                    extrapolation_value=float(extrapolation_value), name=name)


def extract_glimpse(input, size, offsets, centered=True, normalized=True,  # noqa: A002
                    uniform_noise=True, name=None, noise=None):
    """[batch, size[0], size[1], channels] windows centred at `offsets` (y, x) (ExtractGlimpse);
    parts outside the image are noise ('uniform', 'gaussian' or 'zero')."""
    attrs = {} if noise is None else {"noise": noise}
    return apply_op("ExtractGlimpse", input, size, offsets, centered=centered,
                    normalized=normalized, uniform_noise=uniform_noise, name=name, **attrs)


def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None,
                          name=None, sizes=None):
    """Patches of `ksizes` every `strides`, dilated by `rates`, flattened into the depth."""
    return apply_op("ExtractImagePatches", images, ksizes=list(ksizes or sizes),
                    strides=list(strides), rates=list(rates), padding=padding, name=name)


extract_patches = extract_image_patches
