"""tensorflow/models' CIFAR-10 input pipeline (tests/programs/cifar10/cifar10_input.py, kept
unchanged) on a stand-in for the CIFAR binaries (cifar10/standin.py), with tensorweave
injected as `tensorflow` (and `six.moves.xrange` as `range`: six is not a dependency):

- the eval path (FixedLengthRecordReader, resize_image_with_crop_or_pad,
  per_image_standardization, tf.train.batch) gives exactly the records TF's run gave
  (cifar10/make_cifar10_expected.py → tests/data/cifar10_eval_expected.npz);
- the training path (random_crop, random_flip_left_right, random_brightness,
  random_contrast, per_image_standardization, shuffle_batch) gives batches of the right
  shape and statistics, each image a standardized distortion of a stand-in record.

The training path's queue would hold 20000 examples before its first batch
(NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN * 0.4); the run sets that dataset-size constant to the
stand-in's 30 records, as the dataset is what is swapped.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
EXPECTED = np.load(HERE.parent / "data" / "cifar10_eval_expected.npz")

_RUN = """
import sys, types, numpy as np, tensorweave
sys.modules["tensorflow"] = tensorweave
six = types.ModuleType("six"); six.moves = types.ModuleType("six.moves")
six.moves.xrange = range
sys.modules["six"], sys.modules["six.moves"] = six, six.moves
sys.path.insert(0, sys.argv[1])
import cifar10_input, standin
tf = tensorweave
data = standin.write(sys.argv[2] + "/data")
cifar10_input.NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN = 30
out = {}
for name, build in (("eval", lambda: cifar10_input.inputs(True, str(data), 4)),
                    ("train", lambda: cifar10_input.distorted_inputs(str(data), 5))):
    with tf.Graph().as_default():
        images, labels = build()
        out[name + "_static"] = np.array(images.shape.as_list() + labels.shape.as_list())
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            got = [sess.run([images, labels]) for _ in range(4)]
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
        out[name + "_images"] = np.concatenate([g[0] for g in got])
        out[name + "_labels"] = np.concatenate([g[1] for g in got])
np.savez(sys.argv[2] + "/out.npz", **out)
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cifar10")
    r = subprocess.run([sys.executable, "-c", _RUN, str(HERE / "cifar10"), str(tmp)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Filling queue with 12 CIFAR images" in r.stdout
    return np.load(tmp / "out.npz")


@pytest.mark.slow
def test_eval_path_gives_tensorflows_records(run):
    assert list(run["eval_static"]) == [4, 24, 24, 3, 4]
    want = {(int(lab), img.tobytes()): img for lab, img in zip(EXPECTED["labels"],
                                                               EXPECTED["images"])}
    seen = set()
    for img, lab in zip(run["eval_images"], run["eval_labels"]):
        assert img.dtype == np.float32
        match = [k for k, w in want.items() if k[0] == lab and np.allclose(img, w, atol=1e-5)]
        assert match, f"an eval image (label {lab}) that TF's run did not produce"
        seen.add(match[0])
    assert len(seen) == len(want)   # 16 rows cycle through all 6 test records


@pytest.mark.slow
def test_training_path_shapes_and_statistics(run):
    assert list(run["train_static"]) == [5, 24, 24, 3, 5]
    images, labels = run["train_images"], run["train_labels"]
    assert images.shape == (20, 24, 24, 3) and labels.dtype == np.int32
    assert set(labels) <= set(range(10))
    flat = images.reshape(20, -1)
    np.testing.assert_allclose(flat.mean(1), 0, atol=1e-4)
    np.testing.assert_allclose(flat.std(1), 1, atol=1e-3)
    # distortions: no two of the 20 crops are the same image
    assert len({img.tobytes() for img in images}) == 20
