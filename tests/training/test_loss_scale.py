"""`tf.train.experimental` loss scaling gives TensorFlow 2.21's numbers step by step
(loss_scale_expected.json, written by make_loss_scale_expected.py with the TF peer): the
default dynamic scale from `enable_mixed_precision_graph_rewrite` (an overflowing step is
skipped and halves the scale), a DynamicLossScale that grows after its increment period
around a MomentumOptimizer, and a fixed scale (which applies the overflowing step)."""

import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tests.training import loss_scale_cases

with open(os.path.join(os.path.dirname(__file__), "loss_scale_expected.json")) as f:
    EXPECTED = json.load(f)


@pytest.fixture(scope="module")
def ours():
    return loss_scale_cases.run(tf)


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_steps_match_tf(ours, case):
    assert len(ours[case]) == len(EXPECTED[case])
    for got, want in zip(ours[case], EXPECTED[case]):
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-7)
        assert got[1:] == want[1:]


def test_variables_and_errors_are_tfs():
    with tf.Graph().as_default():
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(
            tf.train.AdamOptimizer())
        assert [v.op.name for v in tf.global_variables()] == ["current_loss_scale",
                                                              "good_steps"]
        assert opt.get_name() == "Adam" and not tf.trainable_variables()
        with pytest.raises(ValueError, match="must not already be an instance"):
            tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
        with pytest.raises(ValueError, match="must be an instance of a tf.train.Optimizer"):
            tf.train.experimental.enable_mixed_precision_graph_rewrite(object())
        with pytest.raises(ValueError, match="Could not interpret loss scale"):
            tf.train.experimental.MixedPrecisionLossScaleOptimizer(
                tf.train.AdamOptimizer(), "sometimes")
