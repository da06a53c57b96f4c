"""tf.keras training steps against TensorFlow's tf-keras (keras_expected.npz, written by
make_keras_expected.py with the peer): the same model, numpy weights through set_weights,
train_on_batch with each optimizer; losses, metrics, evaluate, predict and final weights."""

import numpy as np
import pytest

import tensorweave as tf
from tests.keras.keras_cases import CASES, run_case

EXPECTED = np.load(__file__.replace("test_against_tf.py", "keras_expected.npz"))


@pytest.mark.parametrize("name", CASES)
def test_training_matches_tf_keras(name):
    tf.keras.backend.clear_session()
    got = run_case(tf, name)
    for key, value in got.items():
        want = EXPECTED[f"{name}/{key}"]
        np.testing.assert_allclose(value, want, rtol=2e-5, atol=2e-6, err_msg=f"{name}/{key}")
