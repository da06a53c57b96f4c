"""CPU kernels of the image codec ops (ops/image_codec_ops.py), on Pillow.

Pillow wraps the same libraries TensorFlow uses (libjpeg-turbo, zlib); nothing here decodes a
pixel by hand. What TF does around the codec is redone here: the format is found from the
magic bytes (DecodeJpeg, DecodePng and DecodeGif accept any of the four formats, as TF 2.x's
DecodeImageV2 kernel does; DecodeBmp only BMP), channel counts are converted as libjpeg and
libpng convert them (libpng's rgb_to_gray with its default sRGB weights), and 8-bit images
widen to uint16 by x * 257.

Limits: an image's header is read before its pixels and refused (InvalidArgumentError) beyond
`MAX_PIXELS` pixels, besides Pillow's own DecompressionBomb check, so a 60000x60000 header
fails without allocating. Corrupt or truncated data raises InvalidArgumentError naming the op
and what was wrong. `dct_method` and `fancy_upscaling` map onto Pillow's two decoder
settings as `decode_jpeg` says; `try_recover_truncated` is not supported. Pillow reads 16-bit
colour PNGs and 32-bit BMPs only at 8 bits per channel / 3 channels: those raise
UnimplementedError where TF would return more.
"""

from __future__ import annotations

import io
import warnings

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.registry import register_kernel

MAX_PIXELS = 1 << 28   # per frame; TF's decoders refuse images whose size overflows int32
# TF asks libpng for rgb_to_gray with ITU-R 601 weights 0.299, 0.587 (and 1 - both), which
# libpng holds in 1/32768 units (truncated); it rounds the 16-bit sums, not the 8-bit ones.
_RGB_TO_GRAY = (9797, 19234, 3737)
_FORMATS = {"jpeg": "JPEG", "png": "PNG", "gif": "GIF", "bmp": "BMP"}


def _invalid(op: str, message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, f"{op}: {message}")


def _pil():
    from PIL import Image

    return Image


def classify(data: bytes) -> str:
    """'jpeg', 'png', 'gif', 'bmp' or 'unknown', from the magic bytes (TF's ClassifyFileFormat)."""
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:3] == b"GIF":
        return "gif"
    if data[:2] == b"BM":
        return "bmp"
    return "unknown"


def _contents(op: str, value) -> bytes:
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise _invalid(op, f"contents must be scalar, got shape [{','.join(map(str, arr.shape))}]")
    data = arr.item()
    return data.encode() if isinstance(data, str) else bytes(data)


def open_image(op: str, data: bytes, fmt: str):
    """A Pillow image of `data` with its header read and its size checked (pixels not read)."""
    image_mod = _pil()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", image_mod.DecompressionBombWarning)
            img = image_mod.open(io.BytesIO(data), formats=[_FORMATS[fmt]])
    except (image_mod.DecompressionBombError, image_mod.DecompressionBombWarning) as e:
        raise _invalid(op, f"{_FORMATS[fmt]} image is too large to decode: {e}") from None
    except Exception as e:  # noqa: BLE001 - Pillow raises many kinds for bad headers
        raise _invalid(op, f"invalid {_FORMATS[fmt]} data: {e}") from None
    width, height = img.size
    if width <= 0 or height <= 0 or width * height > MAX_PIXELS:
        raise _invalid(op, f"{_FORMATS[fmt]} image of {height}x{width} pixels is beyond the "
                           f"decoder's limit of {MAX_PIXELS} pixels")
    return img


def _load(op: str, img, fmt: str):
    try:
        img.load()
    except Exception as e:  # noqa: BLE001
        raise _invalid(op, f"corrupt or truncated {_FORMATS[fmt]} data: {e}") from None
    return img


def _check_channels(op: str, channels: int, allowed=(0, 1, 3, 4)) -> None:
    if channels not in allowed:
        raise _invalid(op, f"channels must be one of {', '.join(map(str, allowed))}, got "
                           f"{channels}")


# -- per format -------------------------------------------------------------------------------
def decode_jpeg(op: str, data: bytes, channels: int = 0, ratio: int = 1,
                dct_method: str = "", fancy_upscaling: bool = True) -> np.ndarray:
    """[h, w, c] uint8 as libjpeg gives it: `channels` 1 takes the luma plane, 3 converts
    grayscale to RGB; `ratio` in {1, 2, 4, 8} scales with libjpeg's DCT scaling.

    TF decodes with the fast integer IDCT unless dct_method is INTEGER_ACCURATE. Pillow
    offers the fast IDCT only together with plain (not fancy) chroma upsampling (its
    decoder's `draft` flag), so that pair is used where it is exact: for images without
    chroma subsampling (where upsampling does nothing) and for fancy_upscaling=False. For
    subsampled images with fancy upscaling, the accurate IDCT with fancy upsampling is used
    instead: within a few levels of TF (tests/ops/test_image_codec.py measures it)."""
    if ratio not in (1, 2, 4, 8):
        raise _invalid(op, f"ratio must be 1, 2, 4, or 8, got {ratio}")
    _check_channels(op, channels, (0, 1, 3))
    img = open_image(op, data, "jpeg")
    mode = {0: None, 1: "L", 3: "RGB"}[channels]
    if img.mode not in ("L", "RGB", "YCbCr") and mode is None:
        mode = "RGB"
    w, h = img.size
    img.draft(mode or img.mode, (-(-w // ratio), -(-h // ratio)))
    fast = dct_method != "INTEGER_ACCURATE" and (not fancy_upscaling or _no_subsampling(img))
    scale = img.decoderconfig[0] if img.decoderconfig else 1
    img.decoderconfig = (scale, 1 if fast else 0)
    img = _load(op, img, "jpeg")
    if mode is not None and img.mode != mode:
        img = img.convert(mode)
    return _hwc(np.asarray(img))


def _no_subsampling(img) -> bool:
    from PIL import JpegImagePlugin

    return img.mode == "L" or JpegImagePlugin.get_sampling(img) == 0


def _png_bit_depth(data: bytes) -> int:
    return data[24] if len(data) > 24 else 8


def decode_png(op: str, data: bytes, channels: int = 0, dtype=np.uint8) -> np.ndarray:
    """[h, w, c] uint8 or uint16 as libpng gives it (16-bit files keep the high byte in
    uint8; 8-bit files widen by x * 257 in uint16)."""
    _check_channels(op, channels)
    img = _load(op, open_image(op, data, "png"), "png")
    sixteen = _png_bit_depth(data) == 16
    if img.mode == "P":
        img = img.convert("RGBA" if "transparency" in img.info else "RGB")
    elif img.mode == "PA":
        img = img.convert("RGBA")
    elif img.mode == "1":
        img = img.convert("L")
    arr = _hwc(np.asarray(img))
    if img.mode in ("I", "I;16", "I;16B", "I;16L"):
        arr = arr.astype(np.uint16) if sixteen else arr.astype(np.uint8)
        wide = True
    else:
        if sixteen and (np.dtype(dtype) == np.uint16 or (channels == 1 and arr.shape[-1] > 2)):
            raise errors.UnimplementedError(None, None, f"{op}: Pillow decodes 16-bit colour "
                                                        f"PNGs to 8 bits per channel only (so "
                                                        f"neither uint16 nor gray output)")
        wide = False
    return _to_dtype(_png_channels(arr, channels, wide), dtype, wide)


def _png_channels(arr: np.ndarray, channels: int, wide: bool) -> np.ndarray:
    have = arr.shape[-1]
    if channels in (0, have):
        return arr
    opaque = 65535 if wide else 255
    color = arr[..., :1].repeat(3, -1) if have in (1, 2) else arr[..., :3]
    alpha = arr[..., -1:] if have in (2, 4) else np.full(arr.shape[:2] + (1,), opaque, arr.dtype)
    if channels == 1:
        return arr[..., :1] if have in (1, 2) else _rgb_to_gray(arr[..., :3])
    if channels == 3:
        return color
    return np.concatenate([color, alpha], -1)


def _rgb_to_gray(rgb: np.ndarray) -> np.ndarray:
    """libpng's png_do_rgb_to_gray without gamma: (9797 R + 19234 G + 3737 B) >> 15, plus
    16384 before the shift for 16-bit samples."""
    w = np.array(_RGB_TO_GRAY, np.int64)
    gray = (rgb.astype(np.int64) @ w + (16384 if rgb.dtype == np.uint16 else 0)) >> 15
    return gray.astype(rgb.dtype)[..., None]


def _to_dtype(arr: np.ndarray, dtype, wide: bool) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.uint16:
        return arr.astype(np.uint16) if wide else arr.astype(np.uint16) * np.uint16(257)
    if dtype == np.float32:
        top = 65535.0 if wide else 255.0
        return arr.astype(np.float32) * np.float32(1.0 / top)
    return (arr >> 8).astype(np.uint8) if wide and arr.dtype == np.uint16 else arr


def decode_gif(op: str, data: bytes) -> np.ndarray:
    """[frames, h, w, 3] uint8: every frame composited, as TF's giflib decoder gives them."""
    from PIL import ImageSequence

    img = open_image(op, data, "gif")
    frames = []
    try:
        for frame in ImageSequence.Iterator(img):
            frames.append(np.asarray(frame.convert("RGB")))
    except Exception as e:  # noqa: BLE001
        raise _invalid(op, f"corrupt or truncated GIF data: {e}") from None
    if not frames:
        raise _invalid(op, "GIF contains no frames")
    return np.stack(frames)


def decode_bmp(op: str, data: bytes, channels: int = 0) -> np.ndarray:
    """[h, w, c] uint8 of a 24-bit (c = 3) or 8-bit grayscale (c = 1) BMP."""
    _check_channels(op, channels)
    img = _load(op, open_image(op, data, "bmp"), "bmp")
    bpp = int.from_bytes(data[28:30], "little") if len(data) >= 30 else 0
    if bpp == 32 and img.mode != "RGBA":
        raise errors.UnimplementedError(None, None, f"{op}: Pillow reads 32-bit BMPs without "
                                                    f"their fourth channel")
    if img.mode == "P":
        img = img.convert("L")
    arr = _hwc(np.asarray(img))
    if channels and channels != arr.shape[-1]:
        raise _invalid(op, f"channels attribute {channels} does not match bits per pixel from "
                           f"file {bpp}")
    return arr


def _hwc(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr)   # own, writable memory
    return arr[..., None] if arr.ndim == 2 else arr


# -- the decode kernels -------------------------------------------------------------------------
def _decode_any(op: str, data: bytes, channels: int, dtype, animations: bool) -> np.ndarray:
    fmt = classify(data)
    if fmt == "unknown":
        raise _invalid(op, "Unknown image file format. One of JPEG, PNG, GIF, BMP required.")
    if fmt == "gif":
        _check_channels(op, channels, (0, 3))
        frames = decode_gif(op, data)
        if not animations:
            frames = frames[0]
        return _to_dtype(frames, dtype, False)
    if fmt == "jpeg":
        return _to_dtype(decode_jpeg(op, data, channels), dtype, False)
    if fmt == "bmp":
        return _to_dtype(decode_bmp(op, data, channels), dtype, False)
    arr = decode_png(op, data, channels, np.uint16 if np.dtype(dtype) != np.uint8 else np.uint8)
    return _to_dtype(arr, dtype, arr.dtype == np.uint16)


def _three_d(op: str, data: bytes, channels: int, dtype) -> np.ndarray:
    if classify(data) == "gif":
        raise _invalid(op, f"Trying to decode GIF format using a wrong op. Use `decode_gif` or "
                           f"`decode_image` instead. Op used: {op}")
    return _decode_any(op, data, channels, dtype, True)


@register_kernel("DecodeJpeg")
def _decode_jpeg_kernel(node):
    channels, ratio = int(node.attr("channels")), int(node.attr("ratio"))
    dct, fancy = node.attr("dct_method") or "", bool(node.attr("fancy_upscaling"))

    def run(contents):
        data = _contents("DecodeJpeg", contents)
        if classify(data) == "jpeg":
            return decode_jpeg("DecodeJpeg", data, channels, ratio, dct, fancy)
        return _three_d("DecodeJpeg", data, channels, np.uint8)
    return run


@register_kernel("DecodePng")
def _decode_png_kernel(node):
    channels, dtype = int(node.attr("channels")), node.attr("dtype").np_dtype
    return lambda contents: _three_d("DecodePng", _contents("DecodePng", contents), channels,
                                     dtype)


@register_kernel("DecodeBmp")
def _decode_bmp_kernel(node):
    channels = int(node.attr("channels"))

    def run(contents):
        data = _contents("DecodeBmp", contents)
        fmt = classify(data)
        if fmt != "bmp":
            raise _invalid("DecodeBmp", f"Trying to decode {_FORMATS.get(fmt, 'unknown')} "
                                        f"format using DecodeBmp op. Use `decode_{fmt}` or "
                                        f"`decode_image` instead.")
        return decode_bmp("DecodeBmp", data, channels)
    return run


@register_kernel("DecodeGif")
def _decode_gif_kernel(node):
    def run(contents):
        data = _contents("DecodeGif", contents)
        out = _decode_any("DecodeGif", data, 0, np.uint8, True)
        return out if out.ndim == 4 else out[None]
    return run


@register_kernel("DecodeImage")
def _decode_image_kernel(node):
    channels, dtype = int(node.attr("channels")), node.attr("dtype").np_dtype
    animations = bool(node.attr("expand_animations"))
    return lambda contents: _decode_any("DecodeImage", _contents("DecodeImage", contents),
                                        channels, dtype, animations)


@register_kernel("ExtractJpegShape")
def _extract_jpeg_shape(node):
    out = node.attr("output_type").np_dtype

    def run(contents):
        data = _contents("ExtractJpegShape", contents)
        if classify(data) != "jpeg":
            raise _invalid("ExtractJpegShape", "Not a JPEG image")
        img = open_image("ExtractJpegShape", data, "jpeg")
        w, h = img.size
        return np.array([h, w, 1 if img.mode == "L" else 3], out)
    return run


# -- encoders -------------------------------------------------------------------------------
_PNG_MODES = {(np.uint8, 1): "L", (np.uint8, 2): "LA", (np.uint8, 3): "RGB",
              (np.uint8, 4): "RGBA", (np.uint16, 1): "I;16"}


def encode_png(op: str, image: np.ndarray, compression: int) -> bytes:
    image = np.asarray(image)
    if image.ndim != 3:
        raise _invalid(op, f"image must be 3-dimensional, got shape "
                           f"[{','.join(map(str, image.shape))}]")
    channels = image.shape[-1]
    if channels not in (1, 2, 3, 4):
        raise _invalid(op, f"image must have 1, 2, 3, or 4 channels, got {channels}")
    if not -1 <= compression <= 9:
        raise _invalid(op, f"compression should be in [-1,9], got {compression}")
    mode = _PNG_MODES.get((image.dtype.type, channels))
    if mode is None:
        raise errors.UnimplementedError(None, None, f"{op}: Pillow writes uint16 PNGs with one "
                                                    f"channel only, got {channels}")
    plane = image[..., 0] if channels == 1 else image
    img = _pil().fromarray(np.ascontiguousarray(plane))   # the mode follows the array
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=6 if compression < 0 else compression)
    return buf.getvalue()


_JPEG_DEFAULTS = {"format": "", "progressive": False, "optimize_size": False,
                  "chroma_downsampling": True, "density_unit": "in", "x_density": 300,
                  "y_density": 300, "xmp_metadata": ""}


def encode_jpeg(op: str, image: np.ndarray, quality: int, attrs: dict) -> bytes:
    """JPEG bytes of `image` at `quality`; `attrs` are EncodeJpeg's (its defaults for
    EncodeJpegVariableQuality)."""
    image = np.asarray(image)
    if image.ndim != 3:
        raise _invalid(op, f"image must be 3-dimensional, got shape "
                           f"[{','.join(map(str, image.shape))}]")
    channels, fmt = image.shape[-1], attrs["format"]
    want = {"grayscale": 1, "rgb": 3}.get(fmt)
    if (want is not None and channels != want) or channels not in (1, 3):
        raise _invalid(op, f"image must have 1 or 3 channels (format '{fmt}'), got {channels}")
    if not 0 <= quality <= 100:
        raise _invalid(op, f"quality must be in [0,100], got {quality}")
    img = _pil().fromarray(np.ascontiguousarray(image[..., 0] if channels == 1 else image))
    options: dict[str, object] = {"quality": quality,
                                  "progressive": bool(attrs["progressive"]),
                                  "optimize": bool(attrs["optimize_size"]),
                                  "subsampling": 2 if attrs["chroma_downsampling"] else 0}
    if attrs["density_unit"] == "in":
        options["dpi"] = (int(attrs["x_density"]), int(attrs["y_density"]))
    if attrs["xmp_metadata"]:
        xmp = attrs["xmp_metadata"]
        options["xmp"] = xmp.encode() if isinstance(xmp, str) else xmp
    buf = io.BytesIO()
    img.save(buf, format="JPEG", **options)
    return buf.getvalue()


@register_kernel("EncodePng")
def _encode_png_kernel(node):
    compression = int(node.attr("compression"))
    return lambda image: np.array(encode_png("EncodePng", image, compression), dtype=object)


@register_kernel("EncodeJpeg")
def _encode_jpeg_kernel(node):
    attrs = {k: node.attr(k) for k in _JPEG_DEFAULTS}
    quality = int(node.attr("quality"))
    return lambda image: np.array(encode_jpeg("EncodeJpeg", image, quality, attrs),
                                  dtype=object)


@register_kernel("EncodeJpegVariableQuality")
def _encode_jpeg_variable_quality(node):
    def run(image, quality):
        q = np.asarray(quality)
        if q.ndim != 0:
            raise _invalid("EncodeJpegVariableQuality", "quality must be a scalar")
        return np.array(encode_jpeg("EncodeJpegVariableQuality", image, int(q),
                                    _JPEG_DEFAULTS), dtype=object)
    return run
