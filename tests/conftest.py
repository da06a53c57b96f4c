"""Shared fixtures: a fresh default graph per test, and the CPU kernels' thread mode reset
(pool mode is process state a test's sessions leave behind: cpu/parallel.py)."""

import pytest

import tensorweave as tf
from tensorweave.runtime.kernels.cpu import parallel


@pytest.fixture(autouse=True)
def _fresh_graph():
    tf.reset_default_graph()
    parallel.set_pool_mode(False)
    yield
