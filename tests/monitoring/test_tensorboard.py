"""Our event files read by tensorboard's own loader (and, when present, by TensorFlow)."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.monitoring import summary as S


def _write_run(logdir) -> str:
    """A small training-like run: scalars, histogram, images, text, graph, run metadata."""
    x = tf.placeholder(tf.float32, [], name="x")
    w = tf.constant(np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6), name="w")
    img = tf.constant(np.linspace(0, 1, 2 * 5 * 4 * 3, dtype=np.float32).reshape(2, 5, 4, 3))
    loss = S.scalar("loss", x * 2.0)
    with tf.name_scope("weights"):
        S.histogram("w", w + x)
    S.image("samples", img, max_outputs=2)
    S.text("notes", tf.constant("hello **tensorboard**"))
    merged = S.merge_all()
    with tf.Session() as sess, S.FileWriter(logdir, sess.graph) as writer:
        for step in range(5):
            md = tf.RunMetadata()
            summ = sess.run(merged, {x: float(step)},
                            options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                            run_metadata=md)
            writer.add_summary(summ, step)
        writer.add_run_metadata(md, "step4", 4)
        path = writer.event_writer.path
    assert loss is not None
    return path


def test_event_accumulator_sees_everything(tmp_path):
    ea_mod = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    _write_run(tmp_path)
    acc = ea_mod.EventAccumulator(str(tmp_path), size_guidance={"scalars": 0, "images": 0,
                                                                "histograms": 0, "tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    assert tags["scalars"] == ["loss"]
    assert tags["histograms"] == ["weights/w"]
    assert sorted(tags["images"]) == ["samples/image/0", "samples/image/1"]
    assert tags["tensors"] == ["notes"]
    assert tags["graph"] and tags["meta_graph"] and tags["run_metadata"] == ["step4"]
    assert [(e.step, e.value) for e in acc.Scalars("loss")] == [(i, 2.0 * i) for i in range(5)]
    h = acc.Histograms("weights/w")[-1].histogram_value
    assert (h.num, h.min, h.max) == (24, 3.0, 5.0)
    assert sum(h.bucket) == 24
    im = acc.Images("samples/image/1")[0]
    assert (im.width, im.height) == (4, 5) and im.encoded_image_string[:4] == b"\x89PNG"
    assert {"x", "w", "loss"} <= {n.name for n in acc.Graph().node}
    md = acc.RunMetadata("step4")
    assert md.step_stats.dev_stats and md.step_stats.dev_stats[0].node_stats


def test_event_file_loader_reads_every_record(tmp_path):
    loader_mod = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")
    path = _write_run(tmp_path)
    events = list(loader_mod.LegacyEventFileLoader(path).Load())   # raw events, in order
    assert [e.WhichOneof("what") for e in events] == (
        ["file_version", "graph_def", "meta_graph_def"] + ["summary"] * 5
        + ["tagged_run_metadata"])
    assert [e.step for e in events[3:8]] == list(range(5))
    # the loader TensorBoard serves from (data_compat migration) accepts them too
    migrated = list(loader_mod.EventFileLoader(path).Load())
    assert sum(e.WhichOneof("what") == "summary" for e in migrated) >= 5


def test_images_decode_with_tensorboard_pillow(tmp_path):
    ea_mod = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    pil = pytest.importorskip("PIL.Image")
    import io

    _write_run(tmp_path)
    acc = ea_mod.EventAccumulator(str(tmp_path), size_guidance={"images": 0})
    acc.Reload()
    with pil.open(io.BytesIO(acc.Images("samples/image/0")[0].encoded_image_string)) as im:
        px = np.asarray(im)
    # all values >= 0: TF1 scales each image so its maximum becomes 255
    assert px.shape == (5, 4, 3) and px.max() == 255 and px[0, 0, 0] == 0


_PEER_SCRIPT = """
import sys, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow.compat.v1 as tf
kinds, scalars = [], []
for e in tf.train.summary_iterator(sys.argv[1]):
    kinds.append(e.WhichOneof("what"))
    for v in e.summary.value:
        if v.HasField("simple_value"):
            scalars.append((e.step, v.tag, v.simple_value))
print(kinds.count("summary"), kinds.count("graph_def"), kinds[0], scalars[-1])
"""


@pytest.mark.slow
def test_tensorflow_reads_our_event_file(tmp_path, tf_peer):
    path = _write_run(tmp_path)
    out = subprocess.run([tf_peer, "-c", _PEER_SCRIPT, path], capture_output=True, text=True,
                         timeout=240, env={**os.environ, "PYTHONPATH": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "5 1 file_version (4, 'loss', 8.0)"
