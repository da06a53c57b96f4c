"""Runs cifar10_input.inputs(eval_data=True) with TensorFlow on the stand-in files and writes
every distinct (label, image) it produced to tests/data/cifar10_eval_expected.npz:

    ~/.cache/tensorweave-tf-peer/bin/python tests/programs/cifar10/make_cifar10_expected.py
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
sys.modules["tensorflow"] = tf   # the program calls TF1 names (tf.FixedLengthRecordReader)

import cifar10_input  # noqa: E402
import standin  # noqa: E402

OUT = HERE.parents[1] / "data" / "cifar10_eval_expected.npz"


def main():
    with tempfile.TemporaryDirectory() as d:
        standin.write(d)
        images, labels = cifar10_input.inputs(True, d, 4)
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            got = [sess.run([images, labels]) for _ in range(6)]
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
    rows = {}
    for imgs, labs in got:
        for img, lab in zip(imgs, labs):
            rows[(int(lab), img.tobytes())] = img
    keys = sorted(rows)
    np.savez_compressed(OUT, labels=np.array([k[0] for k in keys], np.int32),
                        images=np.stack([rows[k] for k in keys]))
    print(f"wrote {OUT}: {len(keys)} distinct records")


if __name__ == "__main__":
    main()
