"""`tf.image` functions built from ops (colour, geometry, measures) and the image gradients,
against TensorFlow's numbers (tests/data/image_expected.npz, make_image_expected.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf

E = np.load(Path(__file__).resolve().parents[1] / "data" / "image_expected.npz")


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


def _close(got, key, rtol=1e-5, atol=1e-6):
    want = E[key]
    assert got.dtype == want.dtype, (key, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=key)


COLOUR = {
    "contrast": lambda x, u: tf.image.adjust_contrast(x, 1.7),
    "contrast_u8": lambda x, u: tf.image.adjust_contrast(u, 0.3),
    "saturation_u8": lambda x, u: tf.image.adjust_saturation(u, 1.5),
    "hue_u8": lambda x, u: tf.image.adjust_hue(u, 0.1),
    "gray": lambda x, u: tf.image.rgb_to_grayscale(x),
    "gray_u8": lambda x, u: tf.image.rgb_to_grayscale(u),
    "gray_to_rgb": lambda x, u: tf.image.grayscale_to_rgb(x[..., :1]),
    "brightness_u8": lambda x, u: tf.image.adjust_brightness(u, 0.2),
    "brightness": lambda x, u: tf.image.adjust_brightness(x, -0.25),
    "gamma": lambda x, u: tf.image.adjust_gamma(x, 2.2, 0.9),
    "gamma_u8": lambda x, u: tf.image.adjust_gamma(u, 0.5),
    "standardize_u8": lambda x, u: tf.image.per_image_standardization(u),
    "standardize": lambda x, u: tf.image.per_image_standardization(x),
    "standardize_flat": lambda x, u: tf.image.per_image_standardization(
        np.full((3, 4, 2), 7.0, np.float32)),
    "cvt_f_u8": lambda x, u: tf.image.convert_image_dtype(x, tf.uint8),
    "cvt_u8_f": lambda x, u: tf.image.convert_image_dtype(u, tf.float32),
    "cvt_u8_i16": lambda x, u: tf.image.convert_image_dtype(u, tf.int16),
    "cvt_i32_u8": lambda x, u: tf.image.convert_image_dtype(
        E["color_u8"].astype(np.int32) * 8000000, tf.uint8),
    "cvt_f_i16_sat": lambda x, u: tf.image.convert_image_dtype(x * 1.5 - 0.2, tf.int16,
                                                               saturate=True),
    "cvt_f_f64": lambda x, u: tf.image.convert_image_dtype(x, tf.float64),
    "psnr": lambda x, u: tf.image.psnr(x, x * 0.8 + 0.1, 1.0),
    "pad_resize": lambda x, u: tf.image.resize_image_with_pad(x[0], 7, 9),
    "tv3": lambda x, u: tf.image.total_variation(x[0]),
    "tv4": lambda x, u: tf.image.total_variation(x),
}


@pytest.mark.parametrize("key", sorted(COLOUR))
def test_colour_functions_match_tensorflow(key):
    x, u = tf.constant(E["color_x"]), tf.constant(E["color_u8"])
    _close(_run(COLOUR[key](x, u)), f"color_{key}", atol=1e-5)


def test_image_gradients_and_ssim():
    dy, dx = _run(tf.image.image_gradients(tf.constant(E["color_x"])))
    _close(dy, "color_dy")
    _close(dx, "color_dx")
    _close(_run(tf.image.ssim(E["ssim_a"], E["ssim_b"], 1.0)), "ssim", atol=1e-5)


GEOMETRY = {
    "crop_or_pad_4x9": lambda i: tf.image.resize_image_with_crop_or_pad(i, 4, 9),
    "crop_or_pad_8x3": lambda i: tf.image.resize_image_with_crop_or_pad(i, 8, 3),
    "central_05": lambda i: tf.image.central_crop(i, 0.5),
    "central_033": lambda i: tf.image.central_crop(i, 0.33),
    "crop_box": lambda i: tf.image.crop_to_bounding_box(i, 1, 2, 3, 4),
    "pad_box": lambda i: tf.image.pad_to_bounding_box(i, 2, 1, 9, 10),
    "rot90_1": lambda i: tf.image.rot90(i, 1),
    "rot90_3": lambda i: tf.image.rot90(i, 3),
    "rot90_2_batch": lambda i: tf.image.rot90(i[None], 2),
    "flip_lr": lambda i: tf.image.flip_left_right(i),
    "flip_ud_batch": lambda i: tf.image.flip_up_down(i[None]),
    "transpose": lambda i: tf.image.transpose(i),
    "resize_images_bicubic": lambda i: tf.image.resize_images(i, [8, 9], method=2),
    "resize_images_aspect": lambda i: tf.image.resize_images(i, [12, 12],
                                                             preserve_aspect_ratio=True),
}


@pytest.mark.parametrize("key", sorted(GEOMETRY))
def test_geometry_matches_tensorflow_on_static_and_unknown_shapes(key):
    img = E["geo_img"]
    out = GEOMETRY[key](tf.constant(img))
    assert out.shape.is_fully_defined(), out.shape
    _close(_run(out), f"geo_{key}")
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, None, 2])
        with tf.Session() as sess:
            got = sess.run(GEOMETRY[key](p), {p: img})
    _close(got, f"geo_{key}")


def test_rot90_with_a_tensor_k():
    img = E["geo_img"]
    k = tf.placeholder(tf.int32, [])
    out = tf.image.rot90(img, k)
    with tf.Session() as sess:
        for i, key in ((1, "geo_rot90_1"), (3, "geo_rot90_3"), (-1, "geo_rot90_3")):
            _close(sess.run(out, {k: i}), key)
        np.testing.assert_array_equal(sess.run(out, {k: 4}), img)


def test_crop_and_pad_check_bounds_at_build_time():
    img = tf.constant(E["geo_img"])
    with pytest.raises(ValueError, match="width must be >= target"):
        tf.image.crop_to_bounding_box(img, 0, 5, 3, 4)
    with pytest.raises(ValueError, match="offset"):
        tf.image.pad_to_bounding_box(img, -1, 0, 9, 9)
    with pytest.raises(ValueError, match="central_fraction"):
        tf.image.central_crop(img, 0.0)


# -- gradients ------------------------------------------------------------------------------
def _grad_of(fn, x, w):
    t = tf.constant(x)
    return _run(tf.gradients(tf.reduce_sum(fn(t) * w), t)[0])


@pytest.mark.parametrize("method", ["bilinear", "nearest", "bicubic"])
def test_resize_gradients_match_tensorflow(method):
    fn = {"bilinear": tf.image.resize_bilinear, "nearest": tf.image.resize_nearest_neighbor,
          "bicubic": tf.image.resize_bicubic}[method]
    for h, w in [(9, 11), (3, 4), (10, 3)]:
        for align, half in [(False, False), (True, False), (False, True)]:
            key = f"resize_{method}_{h}x{w}_a{int(align)}h{int(half)}"
            got = _grad_of(lambda t, h=h, w=w, a=align, hp=half: fn(
                t, [h, w], align_corners=a, half_pixel_centers=hp),
                           E["resize_x"], E[key + "_gradw"])
            _close(got, key + "_grad")


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_crop_and_resize_gradients_match_tensorflow(method):
    for ch, cw in ((4, 5), (1, 1), (3, 1)):
        key = f"cnr_{method}_{ch}x{cw}"
        img, boxes = tf.constant(E["crop_image"]), tf.constant(E["crop_boxes"])
        y = tf.image.crop_and_resize(img, boxes, E["crop_ind"], [ch, cw], method=method)
        gi, gb = tf.gradients(tf.reduce_sum(y * E[key + "_w"]), [img, boxes])
        gi, gb = _run([gi, gb])
        _close(gi, key + "_gimg", atol=1e-5)
        np.testing.assert_allclose(gb, E[key + "_gbox"], rtol=1e-4, atol=1e-4)


def test_rgb_to_hsv_gradient_matches_tensorflow():
    """Including the grey and the black pixels (ties: TF's branch choices)."""
    assert np.array_equal(E["color_x"][0, 0, 0], [0.5, 0.5, 0.5])
    got = _grad_of(tf.image.rgb_to_hsv, E["color_x"], E["color_hsv_grad_w"])
    np.testing.assert_allclose(got, E["color_hsv_grad"], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("pad", ["SAME", "VALID"])
def test_extract_image_patches_gradient_matches_tensorflow(pad):
    got = _grad_of(lambda t: tf.extract_image_patches(t, [1, 3, 2, 1], [1, 2, 3, 1],
                                                      [1, 1, 2, 1], pad),
                   E["patches_in"], E[f"patches_{pad}_gradw"])
    _close(got, f"patches_{pad}_grad", atol=1e-5)


# -- random functions -------------------------------------------------------------------------
def test_sample_distorted_bounding_box_obeys_its_constraints():
    box = np.array([[[0.2, 0.3, 0.7, 0.9]]], np.float32)
    begin, size, bboxes = tf.image.sample_distorted_bounding_box(
        [40, 60, 3], box, min_object_covered=0.5, aspect_ratio_range=[0.5, 2.0],
        area_range=[0.1, 1.0], seed=1)
    with tf.Session() as sess:
        for _ in range(30):
            b, s, bb = sess.run([begin, size, bboxes])
            y, x, h, w = b[0], b[1], s[0], s[1]
            assert b[2] == 0 and s[2] == -1 and 0 <= y and y + h <= 40 and x + w <= 60
            assert 0.1 * 2400 <= h * w <= 2400
            inter = max(0, min(y + h, 28) - max(y, 8)) * max(0, min(x + w, 54) - max(x, 18))
            assert inter >= 0.5 * 20 * 36 - 1e-6
            np.testing.assert_allclose(bb[0, 0], [y / 40, x / 60, (y + h) / 40, (x + w) / 60],
                                       rtol=1e-6)


def test_random_flips_and_colour_jitter_statistics():
    img = np.arange(2 * 3 * 1, dtype=np.float32).reshape(2, 3, 1)
    flipped = tf.image.random_flip_left_right(img, seed=5)
    bright = tf.image.random_brightness(tf.constant(img), 0.5, seed=6)
    with tf.Session() as sess:
        outs = [sess.run(flipped) for _ in range(60)]
        deltas = [float((sess.run(bright) - img).mean()) for _ in range(60)]
    n_flipped = sum(np.array_equal(o, img[:, ::-1]) for o in outs)
    assert all(np.array_equal(o, img) or np.array_equal(o, img[:, ::-1]) for o in outs)
    assert 10 < n_flipped < 50
    assert all(-0.5 <= d < 0.5 for d in deltas) and np.std(deltas) > 0.1
    with pytest.raises(ValueError, match="max_delta"):
        tf.image.random_hue(img, 0.7)


def test_adjust_jpeg_quality_within_the_jpeg_decode_tolerance():
    """EncodeJpegVariableQuality, then TF's default decode (fast IDCT + fancy upsampling of
    a 4:2:0 file): within the 4 levels test_image_codec.py measures for that decode."""
    img = np.tile(E["color_u8"], [4, 4, 1])
    got = _run(tf.image.adjust_jpeg_quality(img, 50))
    want = E["color_jpeg_quality_u8"]
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.abs(got.astype(int) - want).max() <= 4
    q = tf.placeholder(tf.int32, [])
    with tf.Session() as sess:
        assert sess.run(tf.image.adjust_jpeg_quality(img, q), {q: 50}).shape == want.shape
    random = tf.image.random_jpeg_quality(img, 40, 60, seed=2)
    assert _run(random).shape == want.shape
