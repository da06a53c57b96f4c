"""Writes tests/monitoring/data/tf_expected.json with numbers from real TensorFlow.

Run with the TensorFlow peer (not part of the test suite):

    /root/.cache/tensorweave-tf-peer/bin/python tests/monitoring/make_expected.py

It records, for the summary ops and the Chrome-trace timeline: summary tags and op names under
name scopes and families, histogram protos, decoded image pixels, text summaries, kernel error
messages, and TF's `Timeline` output for hand-made StepStats (described in the same JSON so the
test can build identical StepStats with our protos).
"""

from __future__ import annotations

import json
import os

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402
from tensorflow.core.framework import step_stats_pb2, summary_pb2  # noqa: E402
from tensorflow.python.client import timeline  # noqa: E402

tf.disable_v2_behavior()
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf_expected.json")


def _values(summary_bytes):
    return summary_pb2.Summary.FromString(summary_bytes).value


def tag_naming():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(1.5)
        v = tf.constant([1.0, 2.0, 3.0])
        img = tf.zeros([2, 3, 4, 1])
        ops = [tf.summary.scalar("loss", x), tf.summary.scalar("loss", x)]
        with tf.name_scope("train"):
            ops.append(tf.summary.scalar("acc", x))
            ops.append(tf.summary.histogram("w", v, family="weights"))
            ops.append(tf.summary.scalar("bad name!", x))
        ops.append(tf.summary.image("pic", img))
        ops.append(tf.summary.image("one", img, max_outputs=1))
        ops.append(tf.summary.text("note", tf.constant("hello")))
        ops.append(tf.summary.scalar("/lead", x, family="fam"))
        merged = tf.summary.merge_all()
        with tf.Session() as sess:
            outs = sess.run(ops + [merged])
    return {
        "op_names": [o.op.name for o in ops],
        "op_types": [o.op.type for o in ops],
        "input_names": [[t.op.name for t in o.op.inputs] for o in ops],
        "tags": [[val.tag for val in _values(b)] for b in outs[:-1]],
        "merged_name": merged.op.name,
        "merged_tags": [val.tag for val in _values(outs[-1])],
        "collection": [o.name for o in g.get_collection(tf.GraphKeys.SUMMARIES)],
    }


def _histo(arr, dtype):
    with tf.Graph().as_default(), tf.Session() as sess:
        out = sess.run(tf.summary.histogram("h", tf.constant(arr, dtype=dtype)))
    h = _values(out)[0].histo
    return {"min": h.min, "max": h.max, "num": h.num, "sum": h.sum,
            "sum_squares": h.sum_squares, "bucket_limit": list(h.bucket_limit),
            "bucket": list(h.bucket)}


def histograms(rng):
    cases = {
        "normal_f32": (rng.standard_normal((7, 5)).astype(np.float32), tf.float32),
        "ints": (np.array([[0, 1, 1, 5, -3, 1000]], np.int32), tf.int32),
        "zeros": (np.zeros(4, np.float64), tf.float64),
        "tiny": (np.array([1e-13, -1e-13, 1e-12, 2.5e-12], np.float64), tf.float64),
        "empty": (np.zeros((0, 3), np.float32), tf.float32),
    }
    out = {}
    for key, (arr, dt) in cases.items():
        out[key] = {"input": arr.tolist(), "shape": list(arr.shape), "dtype": dt.name,
                    "histo": _histo(arr, dt)}
    return out


def _decode_images(summary_bytes):
    res = []
    with tf.Graph().as_default(), tf.Session() as sess:
        for val in _values(summary_bytes):
            px = sess.run(tf.image.decode_png(val.image.encoded_image_string,
                                              channels=val.image.colorspace))
            res.append({"tag": val.tag, "height": val.image.height, "width": val.image.width,
                        "colorspace": val.image.colorspace, "pixels": px.tolist()})
    return res


def images(rng):
    mixed = rng.standard_normal((3, 4, 5, 3)).astype(np.float32)
    positive = rng.uniform(0, 0.8, (2, 3, 2, 1)).astype(np.float32)
    with_nan = rng.uniform(-1, 2, (1, 2, 3, 4)).astype(np.float32)
    with_nan[0, 1, 2, 0] = np.nan
    with_nan[0, 0, 0, 3] = np.inf
    u8 = rng.integers(0, 256, (2, 2, 3, 3)).astype(np.uint8)
    half = rng.uniform(0, 4, (1, 3, 3, 1)).astype(np.float16)
    cases = {"mixed": (mixed, 3), "positive": (positive, 3), "with_nan": (with_nan, 3),
             "uint8": (u8, 1), "half": (half, 2)}
    out = {}
    for key, (arr, max_outputs) in cases.items():
        with tf.Graph().as_default(), tf.Session() as sess:
            b = sess.run(tf.summary.image("im", tf.constant(arr), max_outputs=max_outputs))
        out[key] = {"input": np.where(np.isfinite(arr.astype(np.float64)), arr, 0).tolist(),
                    "nan_at": [0, 1, 2, 0] if key == "with_nan" else None,
                    "inf_at": [0, 0, 0, 3] if key == "with_nan" else None,
                    "dtype": arr.dtype.name, "max_outputs": max_outputs,
                    "images": _decode_images(b)}
    return out


def text_summary():
    with tf.Graph().as_default(), tf.Session() as sess:
        b = sess.run(tf.summary.text("t", tf.constant([["a", "bc"], ["d", "e"]])))
    val = _values(b)[0]
    return {"tag": val.tag, "plugin": val.metadata.plugin_data.plugin_name,
            "metadata_hex": val.metadata.SerializeToString().hex(),
            "tensor_hex": val.tensor.SerializeToString().hex()}


def tensor_summary_numeric():
    with tf.Graph().as_default(), tf.Session() as sess:
        b = sess.run(tf.summary.tensor_summary("ts", tf.constant([[1.0, 2.0]]),
                                               summary_description="desc"))
    val = _values(b)[0]
    return {"tag": val.tag, "metadata_hex": val.metadata.SerializeToString().hex(),
            "tensor_hex": val.tensor.SerializeToString().hex()}


def _error(build):
    try:
        with tf.Graph().as_default(), tf.Session() as sess:
            sess.run(build())
    except tf.errors.OpError as e:
        return {"type": type(e).__name__, "message": e.message}
    return None


def errors():
    return {
        "scalar_shape": _error(lambda: tf.summary.scalar("s", tf.constant([1.0, 2.0]))),
        "histo_nan": _error(lambda: tf.summary.histogram("hn", tf.constant([1.0, np.nan]))),
        "histo_inf": _error(lambda: tf.summary.histogram("hi", tf.constant([np.inf]))),
        "merge_dup": _error(lambda: tf.summary.merge(
            [tf.summary.scalar("d", 1.0), tf.summary.scalar("d", 2.0, collections=[])])),
    }


# A hand-made StepStats: two devices, parallel ops on device 0 (lanes), a partition-renamed
# input (`/_3` suffix) and a cross-device edge, plus several outputs.
STEP_STATS = [
    {"device": "/job:localhost/replica:0/task:0/device:CPU:0", "nodes": [
        {"name": "a", "start": 100, "end": 20, "label": "a = Const()",
         "outputs": [[40, "cpu"]]},
        {"name": "b", "start": 110, "end": 50, "label": "b = Const()",
         "outputs": [[64, "cpu"]]},
        {"name": "mm", "start": 125, "end": 30, "label": "mm = MatMul(a, b)",
         "outputs": [[16, "cpu"], [8, "cpu"]]},
        {"name": "add", "start": 170, "end": 10, "label": "add = AddV2(mm:1, b/_3)",
         "outputs": [[8, "cpu"]]},
    ]},
    {"device": "/job:localhost/replica:0/task:0/device:CPU:1", "nodes": [
        {"name": "relu", "start": 200, "end": 15, "label": "relu = Relu(add)",
         "outputs": [[8, "cpu_1"]]},
        {"name": "neg", "start": 205, "end": 5, "label": "neg = Neg(mm, missing)",
         "outputs": []},
        {"name": "nolabel", "start": 230, "end": 3, "label": "", "outputs": []},
    ]},
]


def _step_stats_proto():
    ss = step_stats_pb2.StepStats()
    for dev in STEP_STATS:
        ds = ss.dev_stats.add(device=dev["device"])
        for n in dev["nodes"]:
            ns = ds.node_stats.add(node_name=n["name"], all_start_micros=n["start"],
                                   all_end_rel_micros=n["end"], timeline_label=n["label"])
            for slot, (nbytes, alloc) in enumerate(n["outputs"]):
                o = ns.output.add(slot=slot)
                o.tensor_description.dtype = 1
                o.tensor_description.shape.dim.add(size=nbytes // 4)
                ad = o.tensor_description.allocation_description
                ad.requested_bytes = nbytes
                ad.allocated_bytes = nbytes
                ad.allocator_name = alloc
    return ss


def timelines():
    out = {"step_stats": STEP_STATS}
    for flow in (True, False):
        for mem in (True, False):
            tl = timeline.Timeline(_step_stats_proto())
            out[f"dataflow={flow},memory={mem}"] = json.loads(
                tl.generate_chrome_trace_format(show_dataflow=flow, show_memory=mem))
    return out


def main():
    rng = np.random.default_rng(7)
    data = {"tensorflow": tf.__version__, "tags": tag_naming(), "histograms": histograms(rng),
            "images": images(rng), "text": text_summary(),
            "tensor_summary": tensor_summary_numeric(), "errors": errors(),
            "timeline": timelines()}
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
