"""Writes the image fixtures and TensorFlow's numbers for them:

  tests/data/images/*.jpg, *.png  (encoded by TF), truncated/corrupt variants,
  tests/data/image_expected.npz   (TF's outputs for the image ops: decodes, resizes and their
                                   gradients, crop_and_resize, colour, boxes, patches, ...).

    .venv/bin/python tests/ops/make_image_gif.py        # GIF and BMP (TF cannot encode them)
    ~/.cache/tensorweave-tf-peer/bin/python tests/ops/make_image_expected.py

Key names say what TF ran; tests/ops/cases_image.py and test_image_*.py read them.
"""

# ruff: noqa: B023  (each lambda runs at once, inside its loop iteration)
from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
ROOT = Path(__file__).resolve().parents[1] / "data"
IMAGES = ROOT / "images"
OUT = ROOT / "image_expected.npz"
RNG = np.random.RandomState(0)
E: dict[str, np.ndarray] = {}


def run(x):
    with tf.Graph().as_default(), tf.Session() as sess:
        return sess.run(x())


def smooth_image(h, w, c, seed):
    rng = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = [np.sin(yy / (3 + k)) * 60 + np.cos(xx / (4 + k)) * 60 + 128 for k in range(c)]
    img = np.stack(base, -1) + rng.normal(0, 12, (h, w, c))
    return np.clip(img, 0, 255).astype(np.uint8)


# -- files ------------------------------------------------------------------------------------
def write_files():
    IMAGES.mkdir(parents=True, exist_ok=True)
    rgb = smooth_image(48, 64, 3, 1)
    gray = smooth_image(24, 32, 1, 2)
    rgba = np.concatenate([smooth_image(24, 32, 3, 3), smooth_image(24, 32, 1, 4)], -1)
    rgb16 = (smooth_image(12, 10, 3, 5).astype(np.uint16) * 257 + 13).astype(np.uint16)
    gray16 = (smooth_image(12, 10, 1, 6).astype(np.uint16) * 251).astype(np.uint16)
    files = {
        "rgb.jpg": lambda: tf.image.encode_jpeg(rgb, quality=90),
        "rgb444.jpg": lambda: tf.image.encode_jpeg(rgb[:24, :32], quality=85,
                                                   chroma_downsampling=False),
        "progressive.jpg": lambda: tf.image.encode_jpeg(rgb[:24, :32], progressive=True),
        "gray.jpg": lambda: tf.image.encode_jpeg(gray, quality=90),
        "rgb.png": lambda: tf.image.encode_png(rgb[:24, :32]),
        "gray.png": lambda: tf.image.encode_png(gray),
        "rgba.png": lambda: tf.image.encode_png(rgba),
        "gray16.png": lambda: tf.image.encode_png(gray16),
        "rgb16.png": lambda: tf.image.encode_png(rgb16),
    }
    for name, make in files.items():
        (IMAGES / name).write_bytes(run(make))
    jpg = (IMAGES / "rgb.jpg").read_bytes()
    (IMAGES / "truncated.jpg").write_bytes(jpg[:len(jpg) // 2])
    png = bytearray((IMAGES / "rgb.png").read_bytes())
    png[60:80] = bytes(20)       # inside the IDAT stream: zlib / CRC error
    (IMAGES / "corrupt.png").write_bytes(bytes(png))
    E["src_rgb"], E["src_gray"], E["src_rgba"] = rgb, gray, rgba
    E["src_rgb16"], E["src_gray16"] = rgb16, gray16


def decodes():
    for name in ("rgb.jpg", "rgb444.jpg", "progressive.jpg", "gray.jpg"):
        data = (IMAGES / name).read_bytes()
        key = name.replace(".", "_")
        for ch in (0, 1, 3):
            E[f"dec_{key}_c{ch}"] = run(lambda: tf.image.decode_jpeg(data, channels=ch))
        for ratio in (2, 4, 8):
            E[f"dec_{key}_r{ratio}"] = run(lambda: tf.image.decode_jpeg(data, ratio=ratio))
        E[f"dec_{key}_fast"] = run(lambda: tf.image.decode_jpeg(data, dct_method="INTEGER_FAST"))
        E[f"dec_{key}_accurate"] = run(
            lambda: tf.image.decode_jpeg(data, dct_method="INTEGER_ACCURATE"))
        E[f"dec_{key}_nofancy"] = run(lambda: tf.image.decode_jpeg(data, fancy_upscaling=False))
        for ratio in (2, 4, 8):
            E[f"dec_{key}_r{ratio}_nofancy"] = run(
                lambda: tf.image.decode_jpeg(data, ratio=ratio, fancy_upscaling=False))
        E[f"dec_{key}_shape"] = run(lambda: tf.image.extract_jpeg_shape(data))
    for name in ("rgb.png", "gray.png", "rgba.png", "gray16.png", "rgb16.png"):
        data = (IMAGES / name).read_bytes()
        key = name.replace(".", "_")
        for ch in (0, 1, 3, 4):
            for dt in (tf.uint8, tf.uint16):
                E[f"dec_{key}_c{ch}_{dt.name}"] = run(
                    lambda: tf.image.decode_png(data, channels=ch, dtype=dt))
        E[f"dec_{key}_float"] = run(lambda: tf.image.decode_image(data, dtype=tf.float32))
    gif = (IMAGES / "anim.gif").read_bytes()
    E["dec_anim_gif"] = run(lambda: tf.image.decode_gif(gif))
    E["dec_anim_gif_image"] = run(lambda: tf.io.decode_image(gif, expand_animations=False))
    bmp = (IMAGES / "rgb.bmp").read_bytes()
    E["dec_rgb_bmp"] = run(lambda: tf.image.decode_bmp(bmp))
    E["dec_rgb_bmp_image"] = run(lambda: tf.image.decode_image(bmp))
    # TF's own JPEG round trip of an array, for comparing our encoder within tolerance
    src = E["src_rgb"][:24, :32]
    for q in (75, 95):
        for sub in (True, False):
            E[f"jpeg_roundtrip_q{q}_s{int(sub)}"] = run(lambda: tf.image.decode_jpeg(
                tf.image.encode_jpeg(src, quality=q, chroma_downsampling=sub),
                dct_method="INTEGER_ACCURATE"))
    E["jpeg_variable_q60"] = run(lambda: tf.image.decode_jpeg(
        tf.raw_ops.EncodeJpegVariableQuality(images=src, quality=60),
        dct_method="INTEGER_ACCURATE"))
    E["jpeg_roundtrip_gray"] = run(lambda: tf.image.decode_jpeg(
        tf.image.encode_jpeg(E["src_gray"]), dct_method="INTEGER_ACCURATE"))


# -- resize -----------------------------------------------------------------------------------
RESIZE_X = RNG.rand(2, 5, 7, 3).astype(np.float32) * 10
RESIZE_U8 = RNG.randint(0, 256, (1, 6, 4, 2)).astype(np.uint8)
SIZES = [(9, 11), (3, 4), (5, 7), (1, 1), (10, 3)]
FLAGS = [(False, False), (True, False), (False, True)]
OPS = {"bilinear": tf.raw_ops.ResizeBilinear, "nearest": tf.raw_ops.ResizeNearestNeighbor,
       "bicubic": tf.raw_ops.ResizeBicubic, "area": tf.raw_ops.ResizeArea}


def resizes():
    E["resize_x"], E["resize_u8"] = RESIZE_X, RESIZE_U8
    for method, op in OPS.items():
        for h, w in SIZES:
            for align, half in FLAGS:
                if method == "area" and half:
                    continue
                kw = {"align_corners": align}
                if method != "area":
                    kw["half_pixel_centers"] = half
                key = f"resize_{method}_{h}x{w}_a{int(align)}h{int(half)}"
                E[key] = run(lambda: op(images=RESIZE_X, size=[h, w], **kw))
                E[key + "_u8"] = run(lambda: op(images=RESIZE_U8, size=[h, w], **kw))
                if method != "area":
                    weights = np.random.RandomState(h * 31 + w).rand(2, h, w, 3).astype(
                        np.float32)

                    def grad():
                        x = tf.constant(RESIZE_X)
                        y = op(images=x, size=[h, w], **kw)
                        return tf.gradients(tf.reduce_sum(tf.cast(y, tf.float32) * weights),
                                            x)[0]
                    E[key + "_grad"] = run(grad)
                    E[key + "_gradw"] = weights


CROP_IMAGE = RNG.rand(2, 6, 8, 3).astype(np.float32)
CROP_BOXES = np.array([[0.1, 0.2, 0.7, 0.9], [-0.1, 0.2, 1.2, 0.9], [0.8, 0.7, 0.2, 0.1],
                       [0.3, 0.3, 0.3, 0.3], [0.0, 0.0, 1.0, 1.0]], np.float32)
CROP_IND = np.array([0, 1, 1, 0, 1], np.int32)


def crops():
    E["crop_image"], E["crop_boxes"], E["crop_ind"] = CROP_IMAGE, CROP_BOXES, CROP_IND
    for method in ("bilinear", "nearest"):
        for ch, cw in ((4, 5), (1, 1), (3, 1)):
            key = f"cnr_{method}_{ch}x{cw}"
            E[key] = run(lambda: tf.image.crop_and_resize(CROP_IMAGE, CROP_BOXES, CROP_IND,
                                                          [ch, cw], method=method,
                                                          extrapolation_value=0.5))
            w = np.random.RandomState(ch * 7 + cw).rand(5, ch, cw, 3).astype(np.float32)

            def grads():
                img, boxes = tf.constant(CROP_IMAGE), tf.constant(CROP_BOXES)
                y = tf.image.crop_and_resize(img, boxes, CROP_IND, [ch, cw], method=method)
                gi, gb = tf.gradients(tf.reduce_sum(y * w), [img, boxes])
                return gi, (gb if gb is not None else tf.zeros([5, 4]))
            E[key + "_gimg"], E[key + "_gbox"] = run(grads)
            E[key + "_w"] = w


# -- colour -----------------------------------------------------------------------------------
COLOR = RNG.rand(2, 4, 5, 3).astype(np.float32)
COLOR_U8 = RNG.randint(0, 256, (4, 5, 3)).astype(np.uint8)


def colours():
    E["color_x"], E["color_u8"] = COLOR, COLOR_U8
    E["color_x"][0, 0, 0] = [0.5, 0.5, 0.5]       # grey: hue 0
    E["color_x"][0, 0, 1] = [0.0, 0.0, 0.0]       # black
    x = E["color_x"]
    im = tf.image
    table = {
        "contrast": lambda: im.adjust_contrast(x, 1.7),
        "contrast_u8": lambda: im.adjust_contrast(COLOR_U8, 0.3),
        "saturation_lo": lambda: im.adjust_saturation(x, 0.4),
        "saturation_hi": lambda: im.adjust_saturation(x, 2.5),
        "saturation_u8": lambda: im.adjust_saturation(COLOR_U8, 1.5),
        "hue_pos": lambda: im.adjust_hue(x, 0.3),
        "hue_neg": lambda: im.adjust_hue(x, -0.7),
        "hue_u8": lambda: im.adjust_hue(COLOR_U8, 0.1),
        "rgb_to_hsv": lambda: im.rgb_to_hsv(x),
        "hsv_to_rgb": lambda: im.hsv_to_rgb(x),
        "gray": lambda: im.rgb_to_grayscale(x),
        "gray_u8": lambda: im.rgb_to_grayscale(COLOR_U8),
        "gray_to_rgb": lambda: im.grayscale_to_rgb(tf.constant(x[..., :1])),
        "brightness_u8": lambda: im.adjust_brightness(COLOR_U8, 0.2),
        "brightness": lambda: im.adjust_brightness(x, -0.25),
        "gamma": lambda: im.adjust_gamma(x, 2.2, 0.9),
        "gamma_u8": lambda: im.adjust_gamma(COLOR_U8, 0.5),
        "standardize_u8": lambda: im.per_image_standardization(COLOR_U8),
        "standardize": lambda: im.per_image_standardization(x),
        "standardize_flat": lambda: im.per_image_standardization(np.full((3, 4, 2), 7.0,
                                                                         np.float32)),
        "cvt_f_u8": lambda: im.convert_image_dtype(x, tf.uint8),
        "cvt_u8_f": lambda: im.convert_image_dtype(COLOR_U8, tf.float32),
        "cvt_u8_i16": lambda: im.convert_image_dtype(COLOR_U8, tf.int16),
        "cvt_i32_u8": lambda: im.convert_image_dtype(
            (COLOR_U8.astype(np.int32) * 8000000), tf.uint8),
        "cvt_f_i16_sat": lambda: im.convert_image_dtype(x * 1.5 - 0.2, tf.int16, saturate=True),
        "cvt_f_f64": lambda: im.convert_image_dtype(x, tf.float64),
        "psnr": lambda: im.psnr(x, x * 0.8 + 0.1, 1.0),
        "jpeg_quality_u8": lambda: im.adjust_jpeg_quality(np.tile(COLOR_U8, [4, 4, 1]), 50),
        "pad_resize": lambda: im.resize_image_with_pad(x[0], 7, 9),
        "tv3": lambda: im.total_variation(tf.constant(x[0])),
        "tv4": lambda: im.total_variation(tf.constant(x)),
    }
    for key, fn in table.items():
        E[f"color_{key}"] = run(fn)
    E["color_hsv_grad"] = run(lambda: _hsv_grad(x))
    dy, dx = run(lambda: im.image_gradients(tf.constant(x)))
    E["color_dy"], E["color_dx"] = dy, dx
    a = RNG.rand(2, 16, 18, 3).astype(np.float32)
    b = np.clip(a + RNG.normal(0, 0.1, a.shape), 0, 1).astype(np.float32)
    E["ssim_a"], E["ssim_b"] = a, b
    E["ssim"] = run(lambda: im.ssim(a, b, 1.0))


def _hsv_grad(x):
    t = tf.constant(x)
    w = np.random.RandomState(3).rand(*x.shape).astype(np.float32)
    E["color_hsv_grad_w"] = w
    return tf.gradients(tf.reduce_sum(tf.image.rgb_to_hsv(t) * w), t)[0]


# -- boxes, patches, geometry -----------------------------------------------------------------
def boxes():
    b = RNG.rand(12, 4).astype(np.float32)
    b = np.concatenate([np.minimum(b[:, :2], b[:, 2:]), np.maximum(b[:, :2], b[:, 2:])], 1)
    b[5] = b[2] + 0.01          # near-duplicate of box 2
    s = RNG.rand(12).astype(np.float32)
    s[7] = s[3]                 # a tie
    E["nms_boxes"], E["nms_scores"] = b, s
    for iou in (0.0, 0.3, 0.7):
        for score in (-np.inf, 0.4):
            E[f"nms_v3_{iou}_{score}"] = run(
                lambda: tf.image.non_max_suppression(b, s, 6, iou, score))
    E["nms_v1"] = run(lambda: tf.raw_ops.NonMaxSuppression(boxes=b, scores=s,
                                                           max_output_size=4,
                                                           iou_threshold=0.4))
    E["nms_v2"] = run(lambda: tf.raw_ops.NonMaxSuppressionV2(boxes=b, scores=s,
                                                             max_output_size=20,
                                                             iou_threshold=0.5))
    img = RNG.rand(2, 7, 9, 3).astype(np.float32)
    boxes3 = np.array([[[0.1, 0.1, 0.6, 0.8], [-0.2, 0.3, 0.5, 1.4], [0.5, 0.5, 0.4, 0.9]],
                       [[0.0, 0.0, 1.0, 1.0], [0.3, 0.2, 0.35, 0.7], [1.2, 0.0, 1.5, 0.5]]],
                      np.float32)
    E["draw_img"], E["draw_boxes"] = img, boxes3
    E["draw"] = run(lambda: tf.image.draw_bounding_boxes(img, boxes3))
    E["draw_gray"] = run(lambda: tf.image.draw_bounding_boxes(img[..., :1], boxes3))
    colors = np.array([[0.2, 0.4, 0.6, 1.0], [0.9, 0.1, 0.3, 0.5]], np.float32)
    E["draw_colors"] = colors
    E["draw_v2"] = run(lambda: tf.raw_ops.DrawBoundingBoxesV2(images=img, boxes=boxes3,
                                                              colors=colors))
    glimpse_in = RNG.rand(2, 9, 10, 2).astype(np.float32)
    E["glimpse_in"] = glimpse_in
    offs = np.array([[0.1, -0.2], [-0.3, 0.25]], np.float32)
    E["glimpse_centered"] = run(lambda: tf.image.extract_glimpse(glimpse_in, [3, 4], offs))
    offs_px = np.array([[4.0, 5.0], [2.0, 3.0]], np.float32)
    E["glimpse_pixels"] = run(lambda: tf.image.extract_glimpse(
        glimpse_in, [3, 4], offs_px, centered=False, normalized=False))
    offs_edge = np.array([[0.9, 0.9], [-0.95, 0.1]], np.float32)
    E["glimpse_zero"] = run(lambda: tf.raw_ops.ExtractGlimpse(
        input=glimpse_in, size=[4, 5], offsets=offs_edge, uniform_noise=False, noise="zero"))
    patches_in = RNG.rand(2, 7, 8, 3).astype(np.float32)
    E["patches_in"] = patches_in
    for pad in ("SAME", "VALID"):
        kw = dict(ksizes=[1, 3, 2, 1], strides=[1, 2, 3, 1], rates=[1, 1, 2, 1], padding=pad)
        E[f"patches_{pad}"] = run(lambda: tf.image.extract_patches(patches_in, sizes=kw[
            "ksizes"], strides=kw["strides"], rates=kw["rates"], padding=pad))

        def grad():
            t = tf.constant(patches_in)
            y = tf.image.extract_patches(t, sizes=kw["ksizes"], strides=kw["strides"],
                                         rates=kw["rates"], padding=pad)
            w = np.random.RandomState(5).rand(*y.shape.as_list()).astype(np.float32)
            return tf.gradients(tf.reduce_sum(y * w), t)[0], tf.constant(w)
        E[f"patches_{pad}_grad"], E[f"patches_{pad}_gradw"] = run(grad)


def geometry():
    img = RNG.rand(5, 7, 2).astype(np.float32)
    E["geo_img"] = img
    im = tf.image
    table = {
        "crop_or_pad_4x9": lambda: im.resize_image_with_crop_or_pad(img, 4, 9),
        "crop_or_pad_8x3": lambda: im.resize_image_with_crop_or_pad(img, 8, 3),
        "central_05": lambda: im.central_crop(img, 0.5),
        "central_033": lambda: im.central_crop(img, 0.33),
        "crop_box": lambda: im.crop_to_bounding_box(img, 1, 2, 3, 4),
        "pad_box": lambda: im.pad_to_bounding_box(img, 2, 1, 9, 10),
        "rot90_1": lambda: im.rot90(img, 1),
        "rot90_3": lambda: im.rot90(img, 3),
        "rot90_2_batch": lambda: im.rot90(img[None], 2),
        "flip_lr": lambda: im.flip_left_right(img),
        "flip_ud_batch": lambda: im.flip_up_down(img[None]),
        "transpose": lambda: im.transpose(img),
        "resize_images_bicubic": lambda: tf.image.resize_images(img, [8, 9], method=2),
        "resize_images_aspect": lambda: tf.image.resize_images(img, [12, 12],
                                                               preserve_aspect_ratio=True),
    }
    for key, fn in table.items():
        E[f"geo_{key}"] = run(fn)


def main():
    write_files()
    decodes()
    resizes()
    crops()
    colours()
    boxes()
    geometry()
    np.savez_compressed(OUT, **E)
    print(f"wrote {OUT} ({len(E)} arrays)")


if __name__ == "__main__":
    main()
