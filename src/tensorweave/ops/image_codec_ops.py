"""Image codec ops (TF's core/ops/image_ops.cc): DecodeJpeg, DecodePng, DecodeGif, DecodeBmp,
DecodeImage, EncodePng, EncodeJpeg, EncodeJpegVariableQuality, ExtractJpegShape, with TF's
names, attrs and shapes.

The kernels (runtime/kernels/cpu/image_codec.py) run on Pillow; none has a gradient.
Python wrappers: ops/image_ops.py (`decode_image`, `decode_jpeg`, ...).
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.ops.apply import apply_op
from tensorweave.ops.joining_ops import with_rank
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

OP_TYPES: list[str] = []


def _channels_image(rank: int):
    """[?, ?, channels] (or with a leading ? frame dim), channels from the attr (0: unknown)."""

    def shape(ctx) -> TensorShape:
        with_rank(ctx, ctx.input_dims(0), 0)
        channels = ctx.attr("channels") or None
        return TensorShape([None] * (rank - 1) + [channels])

    return shape


def _decode_image_shape(ctx) -> TensorShape:
    with_rank(ctx, ctx.input_dims(0), 0)
    channels = ctx.attr("channels") or None
    if ctx.attr("expand_animations") is False:
        return TensorShape([None, None, channels])
    return TensorShape(None)


def _gif_shape(ctx) -> TensorShape:
    with_rank(ctx, ctx.input_dims(0), 0)
    return TensorShape([None, None, None, 3])


def _encode_shape(ctx) -> TensorShape:
    with_rank(ctx, ctx.input_dims(0), 3)
    return TensorShape([])


def _jpeg_shape_shape(ctx) -> TensorShape:
    with_rank(ctx, ctx.input_dims(0), 0)
    return TensorShape([3])


def _register(name, **kw):
    OP_TYPES.append(name)
    register_op(name, **kw)


_JPEG_ATTRS = ["channels: int = 0", "ratio: int = 1", "fancy_upscaling: bool = true",
               "try_recover_truncated: bool = false", "acceptable_fraction: float = 1.0",
               "dct_method: string = ''"]
_register("DecodeJpeg", inputs=["contents: string"], outputs=["image: uint8"],
          attrs=_JPEG_ATTRS, shape_fn=_channels_image(3))
_register("DecodePng", inputs=["contents: string"], outputs=["image: dtype"],
          attrs=["channels: int = 0", "dtype: {uint8, uint16} = DT_UINT8"],
          shape_fn=_channels_image(3))
_register("DecodeGif", inputs=["contents: string"], outputs=["image: uint8"],
          shape_fn=_gif_shape)
_register("DecodeBmp", inputs=["contents: string"], outputs=["image: uint8"],
          attrs=["channels: int = 0"], shape_fn=_channels_image(3))
_register("DecodeImage", inputs=["contents: string"], outputs=["image: dtype"],
          attrs=["channels: int = 0", "dtype: {uint8, uint16, float} = DT_UINT8",
                 "expand_animations: bool = true"], shape_fn=_decode_image_shape)
_register("EncodePng", inputs=["image: T"], outputs=["contents: string"],
          attrs=["compression: int = -1", "T: {uint8, uint16} = DT_UINT8"],
          shape_fn=_encode_shape)
_register("EncodeJpeg", inputs=["image: uint8"], outputs=["contents: string"],
          attrs=["format: {'', 'grayscale', 'rgb'} = ''", "quality: int = 95",
                 "progressive: bool = false", "optimize_size: bool = false",
                 "chroma_downsampling: bool = true", "density_unit: {'in', 'cm'} = 'in'",
                 "x_density: int = 300", "y_density: int = 300",
                 "xmp_metadata: string = ''"], shape_fn=_encode_shape)
_register("EncodeJpegVariableQuality", inputs=["images: uint8", "quality: int32"],
          outputs=["contents: string"], shape_fn=_encode_shape)
_register("ExtractJpegShape", inputs=["contents: string"], outputs=["image_shape: output_type"],
          attrs=["output_type: {int32, int64} = DT_INT32"], shape_fn=_jpeg_shape_shape)


# -- wrappers (tf.image / tf.io) ------------------------------------------------------------
def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True,
                try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """[height, width, channels] uint8 of a JPEG (TF's `tf.image.decode_jpeg`)."""
    return apply_op("DecodeJpeg", contents, channels=channels, ratio=ratio,
                    fancy_upscaling=fancy_upscaling,
                    try_recover_truncated=try_recover_truncated,
                    acceptable_fraction=float(acceptable_fraction), dct_method=dct_method,
                    name=name)


def decode_png(contents, channels=0, dtype=None, name=None):
    """[height, width, channels] uint8 or uint16 of a PNG."""
    return apply_op("DecodePng", contents, channels=channels,
                    dtype=dtypes.as_dtype(dtype or dtypes.uint8), name=name)


def decode_gif(contents, name=None):
    """[frames, height, width, 3] uint8 of a GIF."""
    return apply_op("DecodeGif", contents, name=name)


def decode_bmp(contents, channels=0, name=None):
    """[height, width, channels] uint8 of a BMP."""
    return apply_op("DecodeBmp", contents, channels=channels, name=name)


def decode_image(contents, channels=None, dtype=None, name=None, expand_animations=True):
    """Any of JPEG, PNG, GIF, BMP (TF's `tf.io.decode_image`): 3-D, or 4-D for an animated
    GIF when `expand_animations`; dtypes other than uint8/uint16/float32 are converted from
    uint16 with `convert_image_dtype`."""
    dtype = dtypes.as_dtype(dtype or dtypes.uint8)
    direct = dtype in (dtypes.uint8, dtypes.uint16, dtypes.float32)
    image = apply_op("DecodeImage", contents, channels=channels or 0,
                     dtype=dtype if direct else dtypes.uint16,
                     expand_animations=expand_animations, name=name if direct else None)
    if direct:
        return image
    from tensorweave.ops.image_color import convert_image_dtype

    return convert_image_dtype(image, dtype, name=name)


def encode_png(image, compression=-1, name=None):
    """PNG bytes of a [height, width, channels] uint8 or uint16 image."""
    return apply_op("EncodePng", image, compression=compression, name=name)


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300,
                xmp_metadata="", name=None):
    """JPEG bytes of a [height, width, 1 or 3] uint8 image."""
    return apply_op("EncodeJpeg", image, format=format, quality=quality,
                    progressive=progressive, optimize_size=optimize_size,
                    chroma_downsampling=chroma_downsampling, density_unit=density_unit,
                    x_density=x_density, y_density=y_density, xmp_metadata=xmp_metadata,
                    name=name)


def extract_jpeg_shape(contents, output_type=None, name=None):
    """[height, width, channels] of a JPEG, from its header only."""
    return apply_op("ExtractJpegShape", contents,
                    output_type=dtypes.as_dtype(output_type or dtypes.int32), name=name)

