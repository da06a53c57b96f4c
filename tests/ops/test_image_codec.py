"""Decoding the fixture files TensorFlow wrote (tests/data/images, make_image_expected.py),
and the decoders' errors on bad input.

Measured against TF 2.21 (its libjpeg-turbo, Pillow's libjpeg-turbo): every PNG, GIF and BMP
decode is bit-exact; every JPEG decode is bit-exact except a 4:2:0 image with TF's default
(fast IDCT + fancy upscaling), which Pillow cannot ask libjpeg for: there the accurate IDCT
with fancy upscaling is used, at most 4 levels off for a baseline file and 10 for a
progressive one, mean 1.0 and 2.2 levels (JPEG_TOLERANCE).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime.kernels.cpu import image_codec

DATA = Path(__file__).resolve().parents[1] / "data"
E = np.load(DATA / "image_expected.npz")
IMAGES = DATA / "images"
# 4:2:0 files with the default decode: (largest difference, mean difference) in levels
JPEG_TOLERANCE = {"rgb_jpg": (4, 1.1), "progressive_jpg": (10, 2.2)}


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


def _read(name):
    return (IMAGES / name).read_bytes()


JPEG_VARIANTS = [("c0", {}), ("c1", {"channels": 1}), ("c3", {"channels": 3}),
                 ("accurate", {"dct_method": "INTEGER_ACCURATE"}),
                 ("fast", {"dct_method": "INTEGER_FAST"}), ("nofancy", {"fancy_upscaling": False})]
JPEG_VARIANTS += [(f"r{r}", {"ratio": r}) for r in (2, 4, 8)]
JPEG_VARIANTS += [(f"r{r}_nofancy", {"ratio": r, "fancy_upscaling": False}) for r in (2, 4, 8)]


@pytest.mark.parametrize("name", ["rgb.jpg", "rgb444.jpg", "progressive.jpg", "gray.jpg"])
def test_jpeg_decodes_match_tensorflow(name):
    key = name.replace(".", "_")
    for suffix, kw in JPEG_VARIANTS:
        got = _run(tf.image.decode_jpeg(_read(name), **kw))
        want = E[f"dec_{key}_{suffix}"]
        assert got.shape == want.shape and got.dtype == want.dtype, (suffix, got.shape)
        diff = np.abs(got.astype(int) - want)
        fancy_420 = key in JPEG_TOLERANCE and suffix in ("c0", "c3", "fast", "r2")
        limit, mean = JPEG_TOLERANCE[key] if fancy_420 else (0, 0.0)
        assert diff.max() <= limit, (suffix, diff.max())
        assert diff.mean() <= mean, (suffix, diff.mean())


@pytest.mark.parametrize("name", ["rgb.png", "gray.png", "rgba.png", "gray16.png", "rgb16.png"])
def test_png_decodes_are_bit_exact(name):
    key = name.replace(".", "_")
    for ch in (0, 1, 3, 4):
        for dt in (tf.uint8, tf.uint16):
            if name == "rgb16.png" and (dt == tf.uint16 or ch == 1):
                continue   # Pillow reads 16-bit colour PNGs at 8 bits: UnimplementedError
            got = _run(tf.image.decode_png(_read(name), channels=ch, dtype=dt))
            np.testing.assert_array_equal(got, E[f"dec_{key}_c{ch}_{dt.name}"],
                                          err_msg=f"channels={ch} dtype={dt.name}")
    if name != "rgb16.png":
        got = _run(tf.image.decode_image(_read(name), dtype=tf.float32))
        np.testing.assert_array_equal(got, E[f"dec_{key}_float"])


def test_sixteen_bit_colour_png_to_uint16_says_unimplemented():
    with pytest.raises(tf.errors.UnimplementedError, match="16-bit colour"):
        _run(tf.image.decode_png(_read("rgb16.png"), dtype=tf.uint16))
    with pytest.raises(tf.errors.UnimplementedError, match="16-bit colour"):
        _run(tf.image.decode_png(_read("rgb16.png"), channels=1))


def test_gif_and_bmp_and_decode_image_dispatch():
    np.testing.assert_array_equal(_run(tf.image.decode_gif(_read("anim.gif"))),
                                  E["dec_anim_gif"])
    np.testing.assert_array_equal(_run(tf.io.decode_image(_read("anim.gif"))), E["dec_anim_gif"])
    np.testing.assert_array_equal(_run(tf.image.decode_bmp(_read("rgb.bmp"))), E["dec_rgb_bmp"])
    np.testing.assert_array_equal(_run(tf.image.decode_image(_read("rgb.bmp"))),
                                  E["dec_rgb_bmp_image"])
    # TF 2.x's DecodeJpeg / DecodePng decode any of the formats, 3-D
    np.testing.assert_array_equal(_run(tf.image.decode_jpeg(_read("rgb.png"))),
                                  E["dec_rgb_png_c0_uint8"])


def test_decode_image_static_shapes():
    g = tf.Graph()
    with g.as_default():
        assert tf.image.decode_jpeg(_read("rgb.jpg"), channels=3).shape.as_list() == \
            [None, None, 3]
        assert tf.image.decode_image(_read("rgb.jpg")).shape.ndims is None
        assert tf.image.decode_image(_read("rgb.jpg"), channels=1,
                                     expand_animations=False).shape.as_list() == [None, None, 1]
        assert tf.image.decode_gif(_read("anim.gif")).shape.as_list() == [None, None, None, 3]
        with pytest.raises(ValueError, match="rank"):
            tf.image.decode_png(tf.constant([b"a", b"b"]))


@pytest.mark.parametrize("name,op,match", [
    ("truncated.jpg", tf.image.decode_jpeg, "DecodeJpeg: corrupt or truncated JPEG"),
    ("corrupt.png", tf.image.decode_png, "DecodePng: corrupt or truncated PNG"),
])
def test_corrupt_files_raise_invalid_argument_naming_the_decoder(name, op, match):
    with pytest.raises(tf.errors.InvalidArgumentError, match=match):
        _run(op(_read(name)))


def _png_header(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    idat = b"IDAT" + zlib.compress(b"\x00" * 64)
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk
            + struct.pack(">I", zlib.crc32(chunk)) + struct.pack(">I", len(idat) - 4) + idat
            + struct.pack(">I", zlib.crc32(idat)))


def test_huge_png_header_fails_before_allocating():
    """60000 x 60000 x 3 would be 10 GB: refused from the header, the process's peak memory
    does not move (Pillow allocates in C, so this watches the resident set, not Python's)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(tf.errors.InvalidArgumentError, match="DecodePng: .*too large|limit"):
        _run(tf.image.decode_png(_png_header(60000, 60000)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="too large|limit"):
        _run(tf.image.decode_image(_png_header(60000, 60000)))
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 200 * 1024


def test_own_pixel_limit_applies_below_pillows(monkeypatch):
    monkeypatch.setattr(image_codec, "MAX_PIXELS", 100)
    with pytest.raises(tf.errors.InvalidArgumentError, match="beyond the decoder's limit"):
        _run(tf.image.decode_png(_read("rgb.png")))


def test_bad_inputs_raise_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown image file format"):
        _run(tf.image.decode_image(b"not an image at all"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="decode_gif"):
        _run(tf.image.decode_png(_read("anim.gif")))
    with pytest.raises(tf.errors.InvalidArgumentError, match="DecodeBmp"):
        _run(tf.image.decode_bmp(_read("rgb.png")))
    with pytest.raises(tf.errors.InvalidArgumentError, match="ratio"):
        _run(tf.image.decode_jpeg(_read("rgb.jpg"), ratio=3))
    with pytest.raises(tf.errors.InvalidArgumentError, match="invalid PNG|corrupt"):
        _run(tf.image.decode_png(b"\x89PNG\r\n\x1a\n" + b"\x00" * 10))


def test_encoders_round_trip_and_check_their_input():
    rgb = E["src_rgb"][:24, :32]
    png = _run(tf.image.encode_png(rgb, compression=9))
    np.testing.assert_array_equal(_run(tf.image.decode_png(png)), rgb)
    gray = _run(tf.image.decode_jpeg(_run(tf.image.encode_jpeg(E["src_gray"],
                                                               format="grayscale"))))
    assert gray.shape == E["src_gray"].shape
    with pytest.raises(tf.errors.InvalidArgumentError, match="channels"):
        _run(tf.image.encode_jpeg(np.zeros((4, 4, 2), np.uint8)))
    with pytest.raises(ValueError, match="rank"):
        tf.image.encode_png(np.zeros((4, 4), np.uint8))
