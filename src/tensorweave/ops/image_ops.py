"""Image op registrations besides codecs and resizing (TF's core/ops/image_ops.cc and
array_ops.cc): colour (AdjustContrastv2, AdjustSaturation, AdjustHue, RGBToHSV, HSVToRGB),
boxes (NonMaxSuppression V1-V3, DrawBoundingBoxes V1/V2, SampleDistortedBoundingBox V1/V2,
ExtractGlimpse) and ExtractImagePatches. Names, attrs and shape functions are TF's.

Kernels: runtime/kernels/cpu/image_color.py and image_boxes.py; gradients:
autodiff/image_grad.py. The `tf.image` functions built on them live in image_color.py,
image_geometry.py and image_metrics.py beside this module.
"""

from __future__ import annotations

from tensorweave.ops.joining_ops import with_rank
from tensorweave.ops.nn_geometry import GeometryError, windowed_output_size
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

OP_TYPES: list[str] = []
_SEEDS = ["seed: int = 0", "seed2: int = 0"]


def _register(name, **kw):
    OP_TYPES.append(name)
    register_op(name, **kw)


def _rgb_shape(ctx) -> TensorShape:
    dims = ctx.input_dims(0)
    if dims is None:
        return TensorShape(None)
    if len(dims) < 1:
        raise ctx.fail("Shape must be at least rank 1 but is rank 0")
    if dims[-1] is not None and dims[-1] != 3:
        raise ctx.fail(f"Dimension must be 3 but is {dims[-1]}")
    return ctx.input_shape(0)


def _adjust_shape(ctx) -> TensorShape:
    dims = ctx.input_dims(0)
    if dims is not None and len(dims) < 3:
        raise ctx.fail(f"Shape must be at least rank 3 but is rank {len(dims)}")
    with_rank(ctx, ctx.input_dims(1), 0)
    return ctx.input_shape(0)


def _nms_shape(ctx) -> TensorShape:
    boxes = with_rank(ctx, ctx.input_dims(0), 2)
    with_rank(ctx, ctx.input_dims(1), 1)
    with_rank(ctx, ctx.input_dims(2), 0)
    if boxes[1] is not None and boxes[1] != 4:
        raise ctx.fail(f"Dimension must be 4 but is {boxes[1]}")
    for i in range(3, ctx.num_inputs):
        with_rank(ctx, ctx.input_dims(i), 0)
    return TensorShape([None])


def _draw_shape(ctx) -> TensorShape:
    with_rank(ctx, ctx.input_dims(0), 4)
    with_rank(ctx, ctx.input_dims(1), 3)
    return ctx.input_shape(0)


def _sample_box_shape(ctx):
    with_rank(ctx, ctx.input_dims(0), 1)
    with_rank(ctx, ctx.input_dims(1), 3)
    return [TensorShape([3]), TensorShape([3]), TensorShape([1, 1, 4])]


def _glimpse_shape(ctx) -> TensorShape:
    dims = with_rank(ctx, ctx.input_dims(0), 4)
    with_rank(ctx, ctx.input_dims(1), 1)
    offsets = with_rank(ctx, ctx.input_dims(2), 2)
    batch = dims[0] if dims[0] is not None else offsets[0]
    size = ctx.constant_value(1)
    hw = [None, None] if size is None else [int(size[0]), int(size[1])]
    return TensorShape([batch] + hw + [dims[3]])


def _patches_shape(ctx) -> TensorShape:
    dims = with_rank(ctx, ctx.input_dims(0), 4)
    ks, st, rt = (ctx.attr(a) for a in ("ksizes", "strides", "rates"))
    for name, v in (("ksizes", ks), ("strides", st), ("rates", rt)):
        if len(v) != 4 or v[0] != 1 or v[3] != 1:
            raise ctx.fail(f"ExtractImagePatches requires the {name} attribute to contain 4 "
                           f"values with the first and last equal to 1, but got {list(v)}")
    depth = None if dims[3] is None else ks[1] * ks[2] * dims[3]
    out: list[int | None] = []
    for axis in (1, 2):
        if dims[axis] is None:
            out.append(None)
            continue
        try:
            size, _, _ = windowed_output_size(dims[axis], ks[axis], st[axis], rt[axis],
                                              ctx.attr("padding"))
        except GeometryError as e:
            raise ctx.fail(str(e)) from None
        out.append(size)
    return TensorShape([dims[0]] + out + [depth])


# -- colour -------------------------------------------------------------------------------------
_register("AdjustContrastv2", inputs=["images: T", "contrast_factor: float"],
          outputs=["output: T"], attrs=["T: {half, float} = DT_FLOAT"], shape_fn=_adjust_shape)
_register("AdjustSaturation", inputs=["images: T", "scale: float"], outputs=["output: T"],
          attrs=["T: {half, float} = DT_FLOAT"], shape_fn=_adjust_shape)
_register("AdjustHue", inputs=["images: T", "delta: float"], outputs=["output: T"],
          attrs=["T: {half, float} = DT_FLOAT"], shape_fn=_adjust_shape)
for _name in ("RGBToHSV", "HSVToRGB"):
    _register(_name, inputs=["images: T"], outputs=["output: T"],
              attrs=["T: {half, bfloat16, float, double} = DT_FLOAT"], shape_fn=_rgb_shape)

# -- boxes ----------------------------------------------------------------------------------
_register("NonMaxSuppression", inputs=["boxes: float", "scores: float",
                                       "max_output_size: int32"],
          outputs=["selected_indices: int32"], attrs=["iou_threshold: float = 0.5"],
          shape_fn=_nms_shape)
_register("NonMaxSuppressionV2", inputs=["boxes: T", "scores: T", "max_output_size: int32",
                                         "iou_threshold: T_threshold"],
          outputs=["selected_indices: int32"],
          attrs=["T: {half, float} = DT_FLOAT", "T_threshold: {half, float} = DT_FLOAT"],
          shape_fn=_nms_shape)
_register("NonMaxSuppressionV3", inputs=["boxes: T", "scores: T", "max_output_size: int32",
                                         "iou_threshold: T_threshold",
                                         "score_threshold: T_threshold"],
          outputs=["selected_indices: int32"],
          attrs=["T: {half, float} = DT_FLOAT", "T_threshold: {half, float} = DT_FLOAT"],
          shape_fn=_nms_shape)
_register("DrawBoundingBoxes", inputs=["images: T", "boxes: float"], outputs=["output: T"],
          attrs=["T: {float, half} = DT_FLOAT"], shape_fn=_draw_shape)
_register("DrawBoundingBoxesV2", inputs=["images: T", "boxes: float", "colors: float"],
          outputs=["output: T"], attrs=["T: {float, half} = DT_FLOAT"], shape_fn=_draw_shape)
_BOX_ATTRS = ["T: {uint8, int8, int16, int32, int64}",
              "aspect_ratio_range: list(float) = [0.75, 1.33]",
              "area_range: list(float) = [0.05, 1]", "max_attempts: int = 100",
              "use_image_if_no_bounding_boxes: bool = false"]
_BOX_OUTS = ["begin: T", "size: T", "bboxes: float"]
_register("SampleDistortedBoundingBox", inputs=["image_size: T", "bounding_boxes: float"],
          outputs=_BOX_OUTS, attrs=_SEEDS + ["min_object_covered: float = 0.1"] + _BOX_ATTRS,
          shape_fn=_sample_box_shape, stateful=True)
_register("SampleDistortedBoundingBoxV2", inputs=["image_size: T", "bounding_boxes: float",
                                                  "min_object_covered: float"],
          outputs=_BOX_OUTS, attrs=_SEEDS + _BOX_ATTRS, shape_fn=_sample_box_shape,
          stateful=True)
_register("ExtractGlimpse", inputs=["input: float", "size: int32", "offsets: float"],
          outputs=["glimpse: float"],
          attrs=["centered: bool = true", "normalized: bool = true",
                 "uniform_noise: bool = true", "noise: string = 'uniform'"],
          shape_fn=_glimpse_shape, stateful=True)

# -- patches --------------------------------------------------------------------------------
_register("ExtractImagePatches", inputs=["images: T"], outputs=["patches: T"],
          attrs=["ksizes: list(int) >= 4", "strides: list(int) >= 4", "rates: list(int) >= 4",
                 "T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, "
                 "uint32, uint64, complex64, complex128, bool}",
                 "padding: {'SAME', 'VALID'}"], shape_fn=_patches_shape)
