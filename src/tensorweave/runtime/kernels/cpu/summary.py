"""CPU kernels of the summary ops: each builds a serialized `Summary` proto (a string scalar).

`ScalarSummary`, `HistogramSummary` (TF's default exponential buckets, histogram.cc),
`ImageSummary` (TF1's per-image normalization, PNG written here with zlib + struct),
`TensorSummaryV2` and `MergeSummary` behave as TensorFlow's kernels, error messages included.
"""

from __future__ import annotations

import struct
import sys
import zlib

import numpy as np

from tensorweave import errors
from tensorweave.proto import summary_pb2
from tensorweave.runtime.kernels.registry import register_kernel

DBL_MAX = sys.float_info.max


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _text(value) -> str:
    """A string-tensor element (bytes, str or 0-d object array) as str."""
    if isinstance(value, np.ndarray):
        value = value.item() if value.ndim == 0 else value
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _string_scalar(data: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = data
    return out


def _shape_str(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


# ---------------------------------------------------------------------------- ScalarSummary
@register_kernel("ScalarSummary")
def _scalar_summary(node):
    def run(tags, values):
        tags, values = np.asarray(tags, dtype=object), np.asarray(values)
        if tags.shape != values.shape:
            single = f" (tag '{_text(tags.flat[0])}')" if tags.size == 1 else ""
            raise _invalid(f"tags and values are not the same shape: {_shape_str(tags.shape)} "
                           f"!= {_shape_str(values.shape)}{single}")
        s = summary_pb2.Summary()
        for tag, value in zip(tags.flat, values.astype(np.float32).flat):
            s.value.add(tag=_text(tag), simple_value=float(value))
        return _string_scalar(s.SerializeToString())

    return run


# ------------------------------------------------------------------------- HistogramSummary
def _default_bucket_limits() -> np.ndarray:
    """TF's default limits: ±1e-12·1.1^k up to 1e20, ±DBL_MAX, and 0 (histogram.cc)."""
    pos, v = [], 1.0e-12
    while v < 1.0e20:
        pos.append(v)
        v *= 1.1
    pos.append(DBL_MAX)
    neg = [-x for x in reversed(pos)]
    return np.array(neg + [0.0] + pos, dtype=np.float64)


BUCKET_LIMITS = _default_bucket_limits()


def histogram_proto(values: np.ndarray, limits: np.ndarray = BUCKET_LIMITS):
    """A `HistogramProto` of finite `values` as TF's Histogram::EncodeToProto writes it.

    A value v is counted in the first bucket whose limit is > v; runs of empty buckets are
    collapsed into one (limit of the last, count 0), and an empty histogram has one bucket.
    """
    flat = np.asarray(values, dtype=np.float64).ravel()
    counts = np.bincount(np.searchsorted(limits, flat, side="right"), minlength=len(limits))
    proto = summary_pb2.HistogramProto(
        min=float(flat.min()) if flat.size else DBL_MAX,
        max=float(flat.max()) if flat.size else -DBL_MAX,
        num=float(flat.size), sum=float(flat.sum()), sum_squares=float(np.dot(flat, flat)))
    nonzero = np.flatnonzero(counts)
    bucket_limit, bucket = _collapse_empty_runs(nonzero, counts, limits)
    proto.bucket_limit.extend(bucket_limit)
    proto.bucket.extend(bucket)
    return proto


def _collapse_empty_runs(nonzero, counts, limits) -> tuple[list, list]:
    lim, cnt, prev = [], [], -1
    for i in nonzero:
        if i > prev + 1:  # a run of empty buckets before i ends at limit i-1
            lim.append(float(limits[i - 1]))
            cnt.append(0.0)
        lim.append(float(limits[i]))
        cnt.append(float(counts[i]))
        prev = i
    if prev < len(limits) - 1:
        lim.append(float(limits[-1]))
        cnt.append(0.0)
    return lim, cnt


@register_kernel("HistogramSummary")
def _histogram_summary(node):
    name = node.name

    def run(tag, values):
        flat = np.asarray(values, dtype=np.float64).ravel()
        finite = np.isfinite(flat)
        if not finite.all():
            if np.isnan(flat[~finite]).any():
                raise _invalid(f"Nan in summary histogram for: {name}")
            raise _invalid(f"Infinity in Histogram for: {name}")
        s = summary_pb2.Summary()
        s.value.add(tag=_text(tag), histo=histogram_proto(flat))
        return _string_scalar(s.SerializeToString())

    return run


# ----------------------------------------------------------------------------- ImageSummary
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}  # channels → gray, gray+alpha, RGB, RGBA


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(data, zlib.crc32(kind)) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def encode_png(image: np.ndarray, compression: int = -1) -> bytes:
    """PNG bytes of a uint8 `[height, width, channels]` image (1-4 channels, 8 bits each).

    Rows use filter type 0 (none); `compression` is zlib's level (-1: zlib's default).
    """
    image = np.ascontiguousarray(image, dtype=np.uint8)
    height, width, channels = image.shape
    header = struct.pack(">IIBBBBB", width, height, 8, _PNG_COLOR_TYPE[channels], 0, 0, 0)
    rows = np.zeros((height, 1 + width * channels), dtype=np.uint8)
    rows[:, 1:] = image.reshape(height, width * channels)
    return (_PNG_SIGNATURE + _png_chunk(b"IHDR", header)
            + _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), compression))
            + _png_chunk(b"IEND", b""))


def normalize_image(image: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """TF1's float → uint8 mapping of one `[h, w, c]` image (summary_image_op.cc).

    Pixels with any non-finite channel become `bad_color`. Over the finite pixels: if the
    minimum is negative, scale by 127 / max(|min|, |max|) and offset by 128; otherwise scale by
    255 / max. A range under 1e-6 maps to 0 (or 128); values truncate toward zero.
    """
    flat = image.reshape(-1, image.shape[-1])
    ok = np.isfinite(flat).all(axis=1)
    good = flat[ok].astype(np.float32)
    lo = good.min() if good.size else np.float32(np.inf)
    hi = good.max() if good.size else np.float32(-np.inf)
    f32 = np.float32
    if lo < 0:
        top = max(abs(lo), abs(hi))
        scale, offset = (f32(0) if top < 1e-6 else f32(127) / top), f32(128)
    else:
        scale, offset = (f32(0) if hi < 1e-6 else f32(255) / hi), f32(0)
    ftype = image.dtype.type if image.dtype in (np.float16, np.float64) else np.float32
    scaled = flat.astype(ftype) * ftype(scale) + ftype(offset)
    out = np.empty(flat.shape, dtype=np.uint8)
    out[ok] = scaled[ok].astype(np.uint8)
    out[~ok] = bad_color[: flat.shape[1]]
    return out.reshape(image.shape)


@register_kernel("ImageSummary")
def _image_summary(node):
    max_images = int(node.attr("max_images", 3))
    bad_color = np.asarray(node.attr("bad_color", np.array([255, 0, 0, 255]))).astype(np.uint8)

    def run(tag, tensor):
        tensor = np.asarray(tensor)
        _check_image_batch(tensor, bad_color)
        base = _text(tag)
        s = summary_pb2.Summary()
        for i in range(min(max_images, tensor.shape[0])):
            img = tensor[i] if tensor.dtype == np.uint8 else normalize_image(tensor[i], bad_color)
            v = s.value.add(tag=f"{base}/image/{i}" if max_images > 1 else f"{base}/image")
            v.image.height, v.image.width, v.image.colorspace = img.shape
            v.image.encoded_image_string = encode_png(img)
        return _string_scalar(s.SerializeToString())

    return run


def _check_image_batch(tensor: np.ndarray, bad_color: np.ndarray) -> None:
    if tensor.ndim != 4 or tensor.shape[-1] not in (1, 3, 4):
        raise _invalid("Tensor must be 4-D with last dim 1, 3, or 4, not "
                       f"{_shape_str(tensor.shape)}")
    if tensor.size >= 2**31:
        raise _invalid("Tensor too large for summary " + _shape_str(tensor.shape))
    if bad_color.ndim != 1 or bad_color.shape[0] < tensor.shape[-1]:
        raise _invalid(f"bad_color must have at least {tensor.shape[-1]} channels, got "
                       f"{_shape_str(bad_color.shape)}")


# -------------------------------------------------------------------------- TensorSummaryV2
@register_kernel("TensorSummaryV2")
def _tensor_summary_v2(node):
    dtype = node.input_dtypes[1] if len(node.input_dtypes) > 1 else None

    def run(tag, tensor, serialized_summary_metadata):
        s = summary_pb2.Summary()
        v = s.value.add(tag=_text(tag))
        v.tensor.CopyFrom(tensor_proto(tensor, dtype))
        v.metadata.ParseFromString(_as_bytes(serialized_summary_metadata))
        return _string_scalar(s.SerializeToString())

    return run


def _as_bytes(value) -> bytes:
    if isinstance(value, np.ndarray):
        value = value.item()
    return value.encode() if isinstance(value, str) else bytes(value)


def tensor_proto(value, dtype=None):
    """A TensorProto as TF's TensorSummaryV2 writes it: strings in `string_val`, every other
    dtype as raw `tensor_content` (AsProtoTensorContent), even for one element."""
    from tensorweave import dtypes
    from tensorweave.proto import tensor_pb2
    from tensorweave.proto.convert import shape_to_proto

    arr = np.asarray(value)
    dt = (dtype.base_dtype if dtype is not None else dtypes.as_dtype(arr.dtype))
    proto = tensor_pb2.TensorProto(dtype=dt.as_datatype_enum,
                                   tensor_shape=shape_to_proto(arr.shape))
    if dt == dtypes.string:
        proto.string_val.extend(_as_bytes(x) for x in arr.astype(object).flat)
    else:
        proto.tensor_content = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
    return proto


# ----------------------------------------------------------------------------- MergeSummary
@register_kernel("MergeSummary")
def _merge_summary(node):
    def run(*inputs):
        merged, seen = summary_pb2.Summary(), set()
        for x in inputs:
            for data in np.asarray(x, dtype=object).flat:
                _merge_one(merged, seen, data)
        return _string_scalar(merged.SerializeToString())

    return run


def _merge_one(merged, seen: set, data) -> None:
    part = summary_pb2.Summary()
    try:
        part.ParseFromString(_as_bytes(data))
    except Exception as e:  # protobuf's DecodeError
        raise _invalid("Could not parse one of the summary inputs") from e
    for value in part.value:
        if value.tag:  # TensorSummary values may leave the tag empty
            if value.tag in seen:
                raise _invalid(f"Duplicate tag {value.tag} found in summary inputs")
            seen.add(value.tag)
        merged.value.add().CopyFrom(value)
