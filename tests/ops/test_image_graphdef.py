"""A GraphDef of image ops written by TensorFlow 2.21 (tests/ops/make_image_graph.py) imports
and runs here with TF's results: TF's op names, attrs and defaults are ours; and our own
GraphDef of the same graph round-trips through the protobuf form."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import tensorweave as tf

DATA = Path(__file__).resolve().parents[1] / "data"
E = np.load(DATA / "image_graph_expected.npz")


def _import():
    gd = tf.GraphDef()
    gd.ParseFromString((DATA / "image_graph.pb").read_bytes())
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(gd, name="")
    return g


def _check(g):
    png = (DATA / "images" / "rgba.png").read_bytes()
    with tf.Session(graph=g) as sess:
        values = sess.run([f"{k}:0" for k in E.files], {"contents:0": png})
    for key, got in zip(E.files, values):
        want = E[key]
        assert got.dtype == want.dtype and got.shape == want.shape, key
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=key)


def test_tensorflow_image_graph_runs_with_tensorflows_results():
    _check(_import())


def test_our_graphdef_of_it_round_trips():
    g = _import()
    gd = tf.GraphDef()
    gd.ParseFromString(g.as_graph_def().SerializeToString())
    again = tf.Graph()
    with again.as_default():
        tf.import_graph_def(gd, name="")
    _check(again)
