"""Harness cases for the image ops (ops/image_codec_ops.py, image_resize_ops.py,
image_ops.py) against TensorFlow's numbers (tests/ops/make_image_expected.py →
tests/data/image_expected.npz, fixture files in tests/data/images/).

Tolerances: resizes 1e-5 relative (float32; TF's own float32 order of operations); decodes
bit-exact except JPEG 4:2:0 with fancy upscaling (see test_image_codec.py); the sampling ops
(SampleDistortedBoundingBox*) have no reference values here, test_image.py checks their
constraints.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tensorweave import dtypes
from tensorweave.ops.apply import apply_op
from tests.ops.harness import OpCase

DATA = Path(__file__).resolve().parents[1] / "data"
E = np.load(DATA / "image_expected.npz")
IMAGES = DATA / "images"
SIZES = [(9, 11), (3, 4), (5, 7), (1, 1), (10, 3)]
FLAGS = [(False, False), (True, False), (False, True)]
OPS = {"bilinear": "ResizeBilinear", "nearest": "ResizeNearestNeighbor",
       "bicubic": "ResizeBicubic", "area": "ResizeArea"}
GRAD_OPS = {"bilinear": "ResizeBilinearGrad", "bicubic": "ResizeBicubicGrad"}


def _bytes(name: str) -> np.ndarray:
    return np.array((IMAGES / name).read_bytes(), dtype=object)


def _const(value):
    return lambda *_: value


def _codec_cases() -> list[OpCase]:
    cases = []
    for name, key, kw in [("rgb444.jpg", "dec_rgb444_jpg_c0", {}),
                          ("rgb.jpg", "dec_rgb_jpg_accurate", {"dct_method": "INTEGER_ACCURATE"}),
                          ("rgb.jpg", "dec_rgb_jpg_nofancy", {"fancy_upscaling": False}),
                          ("rgb.jpg", "dec_rgb_jpg_c1", {"channels": 1}),
                          ("gray.jpg", "dec_gray_jpg_c3", {"channels": 3}),
                          ("rgb.jpg", "dec_rgb_jpg_r8", {"ratio": 8})]:
        cases.append(OpCase("DecodeJpeg", lambda c, kw=kw: apply_op("DecodeJpeg", c, **kw),
                            [_bytes(name)], _const(E[key]), exact_static_shape=False,
                            name=key))
    for key, name, ch, dt in [("dec_rgba_png_c0_uint8", "rgba.png", 0, "uint8"),
                              ("dec_rgb_png_c1_uint8", "rgb.png", 1, "uint8"),
                              ("dec_gray_png_c4_uint16", "gray.png", 4, "uint16"),
                              ("dec_gray16_png_c0_uint16", "gray16.png", 0, "uint16"),
                              ("dec_rgb16_png_c3_uint8", "rgb16.png", 3, "uint8")]:
        cases.append(OpCase("DecodePng", lambda c, ch=ch, dt=dt: apply_op(
            "DecodePng", c, channels=ch, dtype=dtypes.as_dtype(dt)), [_bytes(name)],
            _const(E[key]), exact_static_shape=False, name=key))
    cases += [
        OpCase("DecodeGif", lambda c: apply_op("DecodeGif", c), [_bytes("anim.gif")],
               _const(E["dec_anim_gif"]), exact_static_shape=False),
        OpCase("DecodeBmp", lambda c: apply_op("DecodeBmp", c), [_bytes("rgb.bmp")],
               _const(E["dec_rgb_bmp"]), exact_static_shape=False),
        OpCase("DecodeImage", lambda c: apply_op("DecodeImage", c, expand_animations=False),
               [_bytes("anim.gif")], _const(E["dec_anim_gif_image"]),
               exact_static_shape=False, name="gif"),
        OpCase("DecodeImage", lambda c: apply_op("DecodeImage", c, dtype=_float()),
               [_bytes("rgba.png")], _const(E["dec_rgba_png_float"]),
               exact_static_shape=False, name="png_float"),
        OpCase("ExtractJpegShape", lambda c: apply_op("ExtractJpegShape", c),
               [_bytes("rgb.jpg")], _const(E["dec_rgb_jpg_shape"])),
        OpCase("EncodePng", lambda x: apply_op("DecodePng", apply_op("EncodePng", x),
                                               channels=4),
               [E["src_rgba"]], lambda x: x, exact_static_shape=False),
        OpCase("EncodePng", lambda x: apply_op("DecodePng", apply_op("EncodePng", x),
                                               dtype=_uint16()),
               [E["src_gray16"]], lambda x: x, exact_static_shape=False, name="uint16"),
    ]
    cases.append(OpCase("EncodeJpegVariableQuality", lambda x, q: apply_op(
        "DecodeJpeg", apply_op("EncodeJpegVariableQuality", x, q), dct_method="INTEGER_ACCURATE"),
        [E["src_rgb"][:24, :32], np.int32(60)], _const(E["jpeg_variable_q60"]), rtol=0, atol=0,
        exact_static_shape=False))
    for key, x, kw in [("jpeg_roundtrip_q95_s1", E["src_rgb"][:24, :32], {}),
                       ("jpeg_roundtrip_q75_s0", E["src_rgb"][:24, :32],
                        {"quality": 75, "chroma_downsampling": False}),
                       ("jpeg_roundtrip_gray", E["src_gray"], {})]:
        cases.append(OpCase("EncodeJpeg", lambda x, kw=kw: apply_op(
            "DecodeJpeg", apply_op("EncodeJpeg", x, **kw), dct_method="INTEGER_ACCURATE"),
            [x], _const(E[key]), rtol=0, atol=0, exact_static_shape=False, name=key))
    return cases


def _float():
    return dtypes.float32


def _uint16():
    return dtypes.uint16


def _resize_cases() -> list[OpCase]:
    cases = []
    for method, op in OPS.items():
        for h, w in SIZES:
            for align, half in FLAGS:
                if method == "area" and half:
                    continue
                kw = {"align_corners": align}
                if method != "area":
                    kw["half_pixel_centers"] = half
                key = f"resize_{method}_{h}x{w}_a{int(align)}h{int(half)}"
                size = np.array([h, w], np.int32)
                for suffix, x in (("", E["resize_x"]), ("_u8", E["resize_u8"])):
                    cases.append(OpCase(op, lambda x, s, op=op, kw=kw: apply_op(op, x, s, **kw),
                                        [x, size], _const(E[key + suffix]), name=key + suffix))
                grad_op = GRAD_OPS.get(method)
                if grad_op:
                    cases.append(OpCase(grad_op, lambda g, x, op=grad_op, kw=kw: apply_op(
                        op, g, x, **kw), [E[key + "_gradw"], E["resize_x"]],
                        _const(E[key + "_grad"]), name=key))
                elif method == "nearest":
                    cases.append(OpCase("ResizeNearestNeighborGrad",
                                        lambda g, s, kw=kw: apply_op(
                                            "ResizeNearestNeighborGrad", g, s, **kw),
                                        [E[key + "_gradw"], np.array([5, 7], np.int32)],
                                        _const(E[key + "_grad"]), name=key))
    return cases


def _crop_cases() -> list[OpCase]:
    cases = []
    image, boxes, ind = E["crop_image"], E["crop_boxes"], E["crop_ind"]
    for method in ("bilinear", "nearest"):
        for ch, cw in ((4, 5), (1, 1), (3, 1)):
            key = f"cnr_{method}_{ch}x{cw}"
            size = np.array([ch, cw], np.int32)
            cases.append(OpCase("CropAndResize", lambda i, b, n, s, m=method: apply_op(
                "CropAndResize", i, b, n, s, method=m, extrapolation_value=0.5),
                [image, boxes, ind, size], _const(E[key]), name=key))
            cases.append(OpCase("CropAndResizeGradImage", lambda g, b, n, s, m=method: apply_op(
                "CropAndResizeGradImage", g, b, n, s, T=_float(), method=m),
                [E[key + "_w"], boxes, ind, np.array(image.shape, np.int32)],
                _const(E[key + "_gimg"]), exact_static_shape=False, name=key))
            if method == "bilinear":
                cases.append(OpCase("CropAndResizeGradBoxes", lambda g, i, b, n: apply_op(
                    "CropAndResizeGradBoxes", g, i, b, n),
                    [E[key + "_w"], image, boxes, ind], _const(E[key + "_gbox"]),
                    rtol=1e-4, atol=1e-4, name=key))
    return cases


def _color_cases() -> list[OpCase]:
    x = E["color_x"]
    f32 = np.float32

    def op(name, *extra):
        return lambda img: apply_op(name, img, *[f32(v) for v in extra])

    return [
        OpCase("AdjustContrastv2", op("AdjustContrastv2", 1.7), [x], _const(E["color_contrast"])),
        OpCase("AdjustSaturation", op("AdjustSaturation", 0.4), [x],
               _const(E["color_saturation_lo"]), name="lo"),
        OpCase("AdjustSaturation", op("AdjustSaturation", 2.5), [x],
               _const(E["color_saturation_hi"]), name="hi"),
        OpCase("AdjustHue", op("AdjustHue", 0.3), [x], _const(E["color_hue_pos"]), name="pos"),
        OpCase("AdjustHue", op("AdjustHue", -0.7), [x], _const(E["color_hue_neg"]), name="neg"),
        OpCase("RGBToHSV", op("RGBToHSV"), [x], _const(E["color_rgb_to_hsv"])),
        OpCase("HSVToRGB", op("HSVToRGB"), [x], _const(E["color_hsv_to_rgb"])),
    ]


def _box_cases() -> list[OpCase]:
    b, s = E["nms_boxes"], E["nms_scores"]
    cases = []
    for iou in (0.0, 0.3, 0.7):
        for score in (-np.inf, 0.4):
            cases.append(OpCase("NonMaxSuppressionV3", lambda b, s, m, i, t: apply_op(
                "NonMaxSuppressionV3", b, s, m, i, t),
                [b, s, np.int32(6), np.float32(iou), np.float32(score)],
                _const(E[f"nms_v3_{iou}_{score}"]), exact_static_shape=False,
                name=f"{iou}_{score}"))
    cases += [
        OpCase("NonMaxSuppression", lambda b, s, m: apply_op("NonMaxSuppression", b, s, m,
                                                             iou_threshold=0.4),
               [b, s, np.int32(4)], _const(E["nms_v1"]), exact_static_shape=False),
        OpCase("NonMaxSuppressionV2", lambda b, s, m, i: apply_op("NonMaxSuppressionV2", b, s,
                                                                  m, i),
               [b, s, np.int32(20), np.float32(0.5)], _const(E["nms_v2"]),
               exact_static_shape=False),
        OpCase("DrawBoundingBoxes", lambda i, b: apply_op("DrawBoundingBoxes", i, b),
               [E["draw_img"], E["draw_boxes"]], _const(E["draw"])),
        OpCase("DrawBoundingBoxes", lambda i, b: apply_op("DrawBoundingBoxes", i, b),
               [E["draw_img"][..., :1], E["draw_boxes"]], _const(E["draw_gray"]), name="gray"),
        OpCase("DrawBoundingBoxesV2", lambda i, b, c: apply_op("DrawBoundingBoxesV2", i, b, c),
               [E["draw_img"], E["draw_boxes"], E["draw_colors"]], _const(E["draw_v2"])),
        OpCase("SampleDistortedBoundingBoxV2", lambda s, b, c: apply_op(
            "SampleDistortedBoundingBoxV2", s, b, c, seed=3, seed2=4),
            [np.array([20, 30, 3], np.int32), np.array([[[0.1, 0.1, 0.8, 0.7]]], np.float32),
             np.float32(0.3)], None),
        OpCase("SampleDistortedBoundingBox", lambda s, b: apply_op(
            "SampleDistortedBoundingBox", s, b, seed=3, seed2=4, min_object_covered=0.5),
            [np.array([20, 30, 3], np.int64), np.array([[[0.1, 0.1, 0.8, 0.7]]], np.float32)],
            None),
    ]
    g = E["glimpse_in"]
    for key, size, offs, kw in [
            ("glimpse_centered", [3, 4], [[0.1, -0.2], [-0.3, 0.25]], {}),
            ("glimpse_pixels", [3, 4], [[4.0, 5.0], [2.0, 3.0]],
             {"centered": False, "normalized": False}),
            ("glimpse_zero", [4, 5], [[0.9, 0.9], [-0.95, 0.1]],
             {"uniform_noise": False, "noise": "zero"})]:
        cases.append(OpCase("ExtractGlimpse", lambda i, s, o, kw=kw: apply_op(
            "ExtractGlimpse", i, s, o, **kw),
            [g, np.array(size, np.int32), np.array(offs, np.float32)], _const(E[key]),
            name=key))
    for pad in ("SAME", "VALID"):
        cases.append(OpCase("ExtractImagePatches", lambda x, pad=pad: apply_op(
            "ExtractImagePatches", x, ksizes=[1, 3, 2, 1], strides=[1, 2, 3, 1],
            rates=[1, 1, 2, 1], padding=pad), [E["patches_in"]], _const(E[f"patches_{pad}"]),
            name=pad))
    return cases


CASES = _codec_cases() + _resize_cases() + _crop_cases() + _color_cases() + _box_cases()
