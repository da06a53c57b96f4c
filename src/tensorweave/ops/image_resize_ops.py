"""Resize and crop-and-resize ops (TF's core/ops/image_ops.cc): ResizeBilinear,
ResizeNearestNeighbor, ResizeBicubic, ResizeArea, their gradient ops, and CropAndResize with
CropAndResizeGradImage / CropAndResizeGradBoxes. Names, attrs and shape functions are TF's.

Kernels: runtime/kernels/cpu/image_resize.py; gradients: autodiff/image_grad.py.
"""

from __future__ import annotations

from tensorweave.ops.joining_ops import with_rank
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

OP_TYPES: list[str] = []
_REAL = "{int8, uint8, int16, uint16, int32, int64, half, float, double, bfloat16}"
_CORNERS = ["align_corners: bool = false", "half_pixel_centers: bool = false"]


def _sized_image(ctx, batch, size_index: int, channels) -> TensorShape:
    """[batch, height, width, channels] with height and width from the (constant) size input
    (TF's SetOutputToSizedImage)."""
    size = with_rank(ctx, ctx.input_dims(size_index), 1)
    if size[0] is not None and size[0] != 2:
        raise ctx.fail(f"Dimension must be 2 but is {size[0]}")
    value = ctx.constant_value(size_index)
    if value is None:
        return TensorShape([batch, None, None, channels])
    if any(int(v) < 0 for v in value):
        raise ctx.fail(f"size must be non-negative, got {list(map(int, value))}")
    return TensorShape([batch, int(value[0]), int(value[1]), channels])


def _resize_shape(ctx) -> TensorShape:
    dims = with_rank(ctx, ctx.input_dims(0), 4)
    return _sized_image(ctx, dims[0], 1, dims[3])


def _like_input(i: int):
    def shape(ctx) -> TensorShape:
        with_rank(ctx, ctx.input_dims(0), 4)
        with_rank(ctx, ctx.input_dims(i), 4)
        return ctx.input_shape(i)
    return shape


def _crop_and_resize_shape(ctx) -> TensorShape:
    image = with_rank(ctx, ctx.input_dims(0), 4)
    boxes = with_rank(ctx, ctx.input_dims(1), 2)
    box_ind = with_rank(ctx, ctx.input_dims(2), 1)
    if boxes[1] is not None and boxes[1] != 4:
        raise ctx.fail(f"Dimension must be 4 but is {boxes[1]}")
    num = boxes[0] if boxes[0] is not None else box_ind[0]
    if None not in (boxes[0], box_ind[0]) and boxes[0] != box_ind[0]:
        raise ctx.fail(f"Dimensions must be equal, but are {boxes[0]} and {box_ind[0]}")
    return _sized_image(ctx, num, 3, image[3])


def _grad_image_shape(ctx) -> TensorShape:
    with_rank(ctx, ctx.input_dims(0), 4)
    return ctx.shape_from_tensor(3).merge_with(TensorShape([None] * 4))


def _grad_boxes_shape(ctx) -> TensorShape:
    with_rank(ctx, ctx.input_dims(0), 4)
    with_rank(ctx, ctx.input_dims(1), 4)
    return ctx.input_shape(2)


def _register(name, **kw):
    OP_TYPES.append(name)
    register_op(name, **kw)


for _name, _out in (("ResizeBilinear", "float"), ("ResizeBicubic", "float")):
    _register(_name, inputs=["images: T", "size: int32"], outputs=[f"resized_images: {_out}"],
              attrs=[f"T: {_REAL}"] + _CORNERS, shape_fn=_resize_shape)
_register("ResizeNearestNeighbor", inputs=["images: T", "size: int32"],
          outputs=["resized_images: T"], attrs=[f"T: {_REAL}"] + _CORNERS,
          shape_fn=_resize_shape)
_register("ResizeArea", inputs=["images: T", "size: int32"], outputs=["resized_images: float"],
          attrs=[f"T: {_REAL}", "align_corners: bool = false"], shape_fn=_resize_shape)
_register("ResizeBilinearGrad", inputs=["grads: float", "original_image: T"],
          outputs=["output: T"], attrs=["T: {float, bfloat16, half, double}"] + _CORNERS,
          shape_fn=_like_input(1))
_register("ResizeBicubicGrad", inputs=["grads: float", "original_image: T"],
          outputs=["output: T"], attrs=["T: {float, double}"] + _CORNERS,
          shape_fn=_like_input(1))
_register("ResizeNearestNeighborGrad", inputs=["grads: T", "size: int32"], outputs=["output: T"],
          attrs=["T: {uint8, int8, int32, half, float, double, bfloat16}"] + _CORNERS,
          shape_fn=_resize_shape)
_register("CropAndResize", inputs=["image: T", "boxes: float", "box_ind: int32",
                                   "crop_size: int32"],
          outputs=["crops: float"],
          attrs=["T: {uint8, uint16, int8, int16, int32, int64, half, bfloat16, float, double}",
                 "method: {'bilinear', 'nearest'} = 'bilinear'",
                 "extrapolation_value: float = 0"], shape_fn=_crop_and_resize_shape)
_register("CropAndResizeGradImage", inputs=["grads: float", "boxes: float", "box_ind: int32",
                                            "image_size: int32"],
          outputs=["output: T"], attrs=["T: {float, half, double}",
                                        "method: {'bilinear', 'nearest'} = 'bilinear'"],
          shape_fn=_grad_image_shape)
_register("CropAndResizeGradBoxes", inputs=["grads: float", "image: T", "boxes: float",
                                            "box_ind: int32"],
          outputs=["output: float"],
          attrs=["T: {uint8, uint16, int8, int16, int32, int64, half, float, double}",
                 "method: {'bilinear'} = 'bilinear'"], shape_fn=_grad_boxes_shape)
