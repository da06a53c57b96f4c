"""Harness cases for the summary ops (ScalarSummary, HistogramSummary, ImageSummary,
TensorSummaryV2, MergeSummary).

A summary op outputs a string scalar (a serialized `Summary`); the harness compares the
(1-element) vector `[summary]`, byte for byte, with a reference built from protos. Expected
histograms and image pixels are TensorFlow's (tests/monitoring/data/tf_expected.json, written
by tests/monitoring/make_expected.py); the histogram reference for the float case is an
independent bisect-based implementation.
"""

import bisect
import json
import sys
from pathlib import Path

import numpy as np

import tensorweave as tf
import tensorweave.runtime.kernels.cpu.summary  # noqa: F401  (until kernels.cpu imports it)
from tensorweave.ops import summary_ops  # noqa: F401  (registers the ops)
from tensorweave.ops.apply import apply_op
from tensorweave.proto import summary_pb2
from tensorweave.runtime.kernels.cpu.summary import encode_png, tensor_proto
from tests.ops.harness import OpCase

_TF = json.loads((Path(__file__).resolve().parent.parent / "monitoring" / "data"
                  / "tf_expected.json").read_text())
_RNG = np.random.default_rng(3)


def _vec(summary_tensor):
    return tf.reshape(summary_tensor, [1])


def _expect(*values):
    """A reference returning `[serialized Summary]` with the given Summary.Value messages."""
    s = summary_pb2.Summary()
    s.value.extend(values)
    return np.array([s.SerializeToString()], dtype=object)


# -- ScalarSummary ----------------------------------------------------------------------------
def _scalar_ref(tags):
    def ref(values):
        vals = [summary_pb2.Summary.Value(tag=t, simple_value=float(np.float32(v)))
                for t, v in zip(np.asarray(tags).flat, np.asarray(values).flat)]
        return _expect(*vals)
    return ref


_TAGS = np.array([["a", "b", "c"], ["d", "e", "f"]], dtype=object)
CASES = [
    OpCase("ScalarSummary", lambda v: _vec(apply_op("ScalarSummary", tags="loss", values=v)),
           [np.array(x, dtype=dt)], _scalar_ref(["loss"]), name=np.dtype(dt).name)
    for x, dt in ((1.25, np.float32), (-3.5e-3, np.float64), (7, np.int32), (2**40, np.int64),
                  (200, np.uint8), (0.5, np.float16))
] + [
    OpCase("ScalarSummary",
           lambda v: _vec(apply_op("ScalarSummary", tags=tf.constant(_TAGS), values=v)),
           [_RNG.standard_normal((2, 3)).astype(np.float32)], _scalar_ref(_TAGS.ravel()),
           name="matrix"),
]


# -- HistogramSummary ---------------------------------------------------------------------------
def _reference_limits():
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    pos.append(sys.float_info.max)
    return [-x for x in reversed(pos)] + [0.0] + pos


_LIMITS = _reference_limits()


def _histo_ref(values):
    """Independent: bisect per value, then collapse runs of empty buckets (histogram.cc)."""
    flat = [float(x) for x in np.asarray(values, np.float64).ravel()]
    counts = [0.0] * len(_LIMITS)
    for x in flat:
        counts[bisect.bisect_right(_LIMITS, x)] += 1
    h = summary_pb2.HistogramProto(min=min(flat), max=max(flat), num=len(flat), sum=sum(flat),
                                   sum_squares=sum(x * x for x in flat))
    i = 0
    while i < len(counts):
        end, count = _LIMITS[i], counts[i]
        i += 1
        if count <= 0:
            while i < len(counts) and counts[i] <= 0:
                end, count = _LIMITS[i], counts[i]
                i += 1
        h.bucket_limit.append(end)
        h.bucket.append(count)
    return _expect(summary_pb2.Summary.Value(tag="h", histo=h))


def _histo_from_tf(key):
    want = _TF["histograms"][key]
    h = summary_pb2.HistogramProto(**{k: v for k, v in want["histo"].items()})
    arr = np.array(want["input"], dtype=want["dtype"]).reshape(want["shape"])
    return arr, (lambda values: _expect(summary_pb2.Summary.Value(tag="h", histo=h)))


def _histo_case(arr, ref, name):
    return OpCase("HistogramSummary",
                  lambda v: _vec(apply_op("HistogramSummary", tag="h", values=v)), [arr], ref,
                  name=name)


CASES += [
    _histo_case(np.round(_RNG.standard_normal((3, 5)) * 8).astype(np.float32) / 4,
                _histo_ref, "float32"),
    _histo_case(np.array([[3, -7, 0], [12, 3, 3]], np.int64), _histo_ref, "int64"),
    _histo_case(*_histo_from_tf("ints"), "tf_ints"),
    _histo_case(*_histo_from_tf("zeros"), "tf_zeros"),
    _histo_case(*_histo_from_tf("tiny"), "tf_tiny"),
]


# -- ImageSummary -------------------------------------------------------------------------------
def _image_case(key):
    """Input and TF's decoded pixels from tf_expected.json; PNGs re-encoded by encode_png."""
    want = _TF["images"][key]
    arr = np.array(want["input"], dtype=want["dtype"])
    if want["nan_at"]:
        arr[tuple(want["nan_at"])] = np.nan
        arr[tuple(want["inf_at"])] = np.inf
    vals = []
    for img in want["images"]:
        v = summary_pb2.Summary.Value(tag=img["tag"])
        v.image.height, v.image.width, v.image.colorspace = (img["height"], img["width"],
                                                             img["colorspace"])
        v.image.encoded_image_string = encode_png(np.array(img["pixels"], np.uint8))
        vals.append(v)
    build = lambda t: _vec(apply_op(  # noqa: E731
        "ImageSummary", tag="im", tensor=t, max_images=want["max_outputs"]))
    return OpCase("ImageSummary", build, [arr], lambda t: _expect(*vals), name=key)


CASES += [_image_case(k) for k in ("mixed", "positive", "with_nan", "uint8", "half")]


# -- TensorSummaryV2 ----------------------------------------------------------------------------
def _tensor_summary_case(arr, name):
    meta = summary_pb2.SummaryMetadata(summary_description="desc")

    def ref(x):
        v = summary_pb2.Summary.Value(tag="ts", metadata=meta)
        v.tensor.CopyFrom(tensor_proto(x))
        return _expect(v)

    build = lambda x: _vec(apply_op(  # noqa: E731
        "TensorSummaryV2", tag="ts", tensor=x,
        serialized_summary_metadata=meta.SerializeToString()))
    return OpCase("TensorSummaryV2", build, [arr], ref, name=name)


CASES += [
    _tensor_summary_case(np.array([[1.0, 2.0]], np.float32), "float32"),
    _tensor_summary_case(np.arange(6, dtype=np.int32).reshape(2, 3), "int32"),
    _tensor_summary_case(np.array(2.5, np.float64), "scalar_f64"),
]


# -- MergeSummary -------------------------------------------------------------------------------
def _merge_build(a, b):
    s1 = apply_op("ScalarSummary", tags="m/a", values=a)
    s2 = apply_op("ScalarSummary", tags=tf.constant(["m/b0", "m/b1"]), values=b)
    return _vec(apply_op("MergeSummary", [s1, s2]))


def _merge_ref(a, b):
    return _expect(summary_pb2.Summary.Value(tag="m/a", simple_value=float(a)),
                   *[summary_pb2.Summary.Value(tag=f"m/b{i}", simple_value=float(x))
                     for i, x in enumerate(b)])


CASES += [OpCase("MergeSummary", _merge_build,
                 [np.array(1.5, np.float32), np.array([0.25, -2.0], np.float32)], _merge_ref)]
