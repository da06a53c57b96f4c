"""Run with the TensorFlow peer: DIR/{frozen,optimized}.pb fed DIR/x.npy at input:0; writes
DIR/<name>.out.npy with output:0."""

import os
import sys

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1


def main(directory):
    x = np.load(os.path.join(directory, "x.npy"))
    for name in ("frozen", "optimized"):
        graph_def = v1.GraphDef()
        with open(os.path.join(directory, name + ".pb"), "rb") as f:
            graph_def.ParseFromString(f.read())
        with v1.Graph().as_default() as g, v1.Session(graph=g) as sess:
            v1.import_graph_def(graph_def, name="")
            np.save(os.path.join(directory, name + ".out.npy"),
                    sess.run("output:0", {"input:0": x}))


if __name__ == "__main__":
    main(sys.argv[1])
