"""FtrlOptimizer, ProximalAdagradOptimizer and ProximalGradientDescentOptimizer against
TensorFlow's variables after each step (proximal_cases.py, make_proximal_expected.py ->
tests/data/proximal_expected.npz), dense and sparse (a gathered variable, a repeated row)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tests.training.proximal_cases import OPTIMIZERS, run

DATA = np.load(Path(__file__).resolve().parents[1] / "data" / "proximal_expected.npz")


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_matches_tensorflow(name):
    for step, (w, e) in enumerate(run(tf, OPTIMIZERS[name])):
        np.testing.assert_allclose(w, DATA[f"{name}_w{step}"], rtol=2e-5, atol=1e-6,
                                   err_msg=f"{name} dense step {step}")
        np.testing.assert_allclose(e, DATA[f"{name}_e{step}"], rtol=2e-5, atol=1e-6,
                                   err_msg=f"{name} sparse step {step}")


def test_update_ops_and_slot_names():
    with tf.Graph().as_default() as g:
        e = tf.Variable(np.ones((4, 2), np.float32), name="e")
        w = tf.Variable(np.ones((2, 2), np.float32), name="w")
        loss = tf.reduce_sum(tf.gather(e, [1, 3])) + tf.reduce_sum(w)
        opt = tf.train.FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=0.1)
        opt.minimize(loss)
        types = {op.type for op in g.get_operations()}
        assert {"SparseApplyFtrlV2", "ApplyFtrlV2"} <= types
        assert opt.get_slot(w, "accum").op.name == "w/Ftrl"
        assert opt.get_slot(w, "linear").op.name == "w/Ftrl_1"
        tf.train.ProximalAdagradOptimizer(0.1).minimize(loss)
        tf.train.ProximalGradientDescentOptimizer(0.1).minimize(loss)
        types = {op.type for op in g.get_operations()}
        assert {"SparseApplyProximalAdagrad", "ApplyProximalAdagrad",
                "SparseApplyProximalGradientDescent", "ApplyProximalGradientDescent"} <= types


def test_argument_errors():
    with pytest.raises(ValueError, match="learning_rate_power"):
        tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5)
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.0)
