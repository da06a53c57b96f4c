"""slim.nets.resnet_v1 against `tf_slim`'s on TF 2.21 (tests/data/resnet_expected.npz,
make_resnet_expected.py): every variable's name and shape, the end points, regularization
losses and update ops, and the outputs for the same weights (ResNet-50 at inference, a small
atrous ResNet with batch statistics)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import resnet_cases  # noqa: E402

EXPECTED = np.load(HERE.parent / "data" / "resnet_expected.npz")
_DESCRIBED = ("names", "shapes", "end_points", "end_point_shapes", "regularization",
              "update_ops")


def _compare(got, prefix, outputs):
    for key in _DESCRIBED:
        want = EXPECTED[f"{prefix}/{key}"]
        assert np.atleast_1d(got[f"{prefix}/{key}"]).tolist() == np.atleast_1d(want).tolist(), \
            key
    for key in outputs:
        # float32 convolutions summed in other orders, 50 layers deep: |x| ~ 10, rtol 1e-4
        np.testing.assert_allclose(got[f"{prefix}/{key}"], EXPECTED[f"{prefix}/{key}"],
                                   rtol=1e-4, atol=1e-4, err_msg=key)


def test_small_atrous_resnet_matches_tf_slim():
    got = resnet_cases.run(tf, tf.contrib.slim.nets.resnet_v1, tf.contrib.slim, ("tiny",))
    _compare(got, "tiny", ["net"])


@pytest.mark.slow
def test_resnet_v1_50_matches_tf_slim():
    got = resnet_cases.run(tf, tf.contrib.slim.nets.resnet_v1, tf.contrib.slim, ("r50",))
    _compare(got, "r50", ["logits", "predictions", "block3"])
    assert "resnet_v1_50/block4/unit_3/bottleneck_v1/conv3/BatchNorm/moving_variance" in \
        EXPECTED["r50/names"].tolist()


def test_output_stride_that_cannot_be_reached():
    r = tf.contrib.slim.nets.resnet_v1
    with tf.Graph().as_default():
        x = tf.zeros([1, 32, 32, 3])
        with pytest.raises(ValueError, match="multiple of 4"):
            r.resnet_v1_50(x, output_stride=6)
        blocks = [r.resnet_v1_block("block1", 4, 1, 2)]
        with pytest.raises(ValueError, match="cannot be reached"):
            r.resnet_v1(x, blocks, output_stride=16, scope="n")


def test_the_other_depths_have_their_unit_counts():
    r = tf.contrib.slim.nets.resnet_v1
    with tf.Graph().as_default():
        _, end_points = r.resnet_v1_101(tf.zeros([1, 32, 32, 3]), num_classes=3)
        units = {k.split("/")[2] for k in end_points if k.startswith("resnet_v1_101/block3/")}
    assert len(units) == 23
