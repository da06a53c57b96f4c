"""Writes a GraphDef of image ops built by TensorFlow (tests/data/image_graph.pb) and its
outputs (tests/data/image_graph_expected.npz), so tests/ops/test_image_graphdef.py can check
that TF's OpDefs (names, attrs, defaults) import and run here:

    ~/.cache/tensorweave-tf-peer/bin/python tests/ops/make_image_graph.py
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
ROOT = Path(__file__).resolve().parents[1] / "data"
FETCHES = ["decoded", "resized", "contrast", "hsv", "nms", "crops", "patches", "nearest",
           "gray", "png_again", "standardized", "flipped", "glimpse", "area", "bicubic"]


def main():
    png = (ROOT / "images" / "rgba.png").read_bytes()
    jpg = (ROOT / "images" / "rgb444.jpg").read_bytes()
    g = tf.Graph()
    with g.as_default():
        contents = tf.placeholder(tf.string, [], name="contents")
        img = tf.image.decode_png(contents, channels=3)
        tf.identity(img, name="decoded")
        batch = tf.expand_dims(tf.cast(img, tf.float32) / 255.0, 0)
        tf.identity(tf.image.resize_bilinear(batch, [7, 9], half_pixel_centers=True),
                    name="resized")
        tf.identity(tf.image.adjust_contrast(batch, 0.6), name="contrast")
        tf.identity(tf.image.rgb_to_hsv(batch), name="hsv")
        boxes = tf.constant([[0, 0, 0.5, 0.5], [0.1, 0.1, 0.6, 0.6], [0.5, 0.5, 1, 1]])
        tf.identity(tf.image.non_max_suppression(boxes, [0.9, 0.8, 0.7], 3, 0.3), name="nms")
        tf.identity(tf.image.crop_and_resize(batch, boxes, [0, 0, 0], [3, 4]), name="crops")
        tf.identity(tf.image.extract_patches(batch, [1, 2, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1],
                                             "VALID"), name="patches")
        tf.identity(tf.image.resize_nearest_neighbor(batch, [5, 5], align_corners=True),
                    name="nearest")
        tf.identity(tf.image.decode_jpeg(tf.constant(jpg), channels=1, ratio=2), name="gray")
        tf.identity(tf.image.decode_png(tf.image.encode_png(img)), name="png_again")
        tf.identity(tf.image.per_image_standardization(img), name="standardized")
        tf.identity(tf.image.flip_left_right(img), name="flipped")
        tf.identity(tf.image.extract_glimpse(batch, [3, 3], [[0.0, 0.0]]), name="glimpse")
        tf.identity(tf.image.resize_area(batch, [5, 6]), name="area")
        tf.identity(tf.image.resize_bicubic(batch, [11, 13]), name="bicubic")
        with tf.Session() as sess:
            values = sess.run([f"{n}:0" for n in FETCHES], {contents: png})
    (ROOT / "image_graph.pb").write_bytes(g.as_graph_def().SerializeToString())
    np.savez_compressed(ROOT / "image_graph_expected.npz", **dict(zip(FETCHES, values)))
    print(sorted({n.op for n in g.as_graph_def().node}))


if __name__ == "__main__":
    main()
