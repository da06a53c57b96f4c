"""Gradient cases with numbers TensorFlow wrote: `CASES = {name: (build, make_inputs)}` run by
a `make_*_expected.py` script under the TF peer into `tests/data/<file>.npz`, and here again
under tensorweave. Shared by the loop and TensorArray gradient tests."""

from __future__ import annotations

import os

import numpy as np

import tensorweave as tf

DATA_DIR = os.path.join(os.path.dirname(__file__), "..", "data")


class ExpectedCases:
    """`cases` with the arrays of `data_file` (`<name>/in<i>`, `/y`, `/grad<i>`, ...)."""

    def __init__(self, cases: dict, data_file: str):
        self.cases = cases
        self.expected = np.load(os.path.join(DATA_DIR, data_file))

    def inputs(self, name: str) -> list:
        n = len(self.cases[name][1]())
        return [self.expected[f"{name}/in{i}"] for i in range(n)]

    def build(self, name: str):
        """(graph, feeds, y, xs, tf.gradients(y, xs)) of case `name` on the stored inputs."""
        g = tf.Graph()
        with g.as_default():
            feeds, y, xs = self.cases[name][0](tf, *self.inputs(name))
            grads = tf.gradients(y, xs)
        return g, feeds, y, xs, grads

    def run_tensorflow_graph(self, name: str):
        """(graph, fetched values) of the gradient GraphDef TensorFlow wrote for `name`."""
        e = self.expected
        g = tf.Graph()
        with g.as_default():
            tf.import_graph_def(tf.GraphDef.FromString(e[f"{name}/graph_def"].tobytes()),
                                name="")
            feeds = {g.get_tensor_by_name(n): e[f"{name}/in{i}"]
                     for i, n in enumerate(e[f"{name}/feeds"])}
            fetches = [g.get_tensor_by_name(n) for n in e[f"{name}/fetches"]]
            with tf.Session(graph=g) as sess:
                return g, sess.run(fetches, feeds)

    def check_finite_differences(self, name: str) -> None:
        """Every input's gradient is within 1e-5 (relative to |y|) of central differences."""
        g = tf.Graph()
        with g.as_default():
            feeds, y, xs = self.cases[name][0](tf, *self.inputs(name))
            scale = max(1.0, abs(float(self.expected[f"{name}/y"])))
            with tf.Session(graph=g):
                for x in xs:
                    others = {p: v for p, v in feeds.items() if p is not x}
                    err = tf.test.compute_gradient_error(x, feeds[x].shape, y, (), feeds[x],
                                                         delta=1e-6, extra_feed_dict=others)
                    assert err < 1e-5 * scale, (x.name, err)
