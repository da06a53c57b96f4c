"""Shared fixtures: a fresh default graph per test, and the CPU kernels' thread mode reset
(pool mode is process state a test's sessions leave behind: cpu/parallel.py)."""

import functools
import os
import subprocess

import pytest

import tensorweave as tf
from tensorweave.runtime.kernels.cpu import parallel


@pytest.fixture(autouse=True)
def _fresh_graph():
    tf.reset_default_graph()
    parallel.set_pool_mode(False)
    yield


PEER_PYTHON = os.environ.get("PEER_PYTHON") or os.path.expanduser(
    "~/.cache/tensorweave-tf-peer/bin/python")


@functools.cache
def _peer_imports_tensorflow() -> bool:
    if not os.path.exists(PEER_PYTHON):
        return False
    try:
        return subprocess.run([PEER_PYTHON, "-c", "import tensorflow"], capture_output=True,
                              timeout=180).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture
def tf_peer() -> str:
    """The TensorFlow peer's Python (PEER_PYTHON, else ../shared/peers/setup_tf_peer.sh's
    default); skips where it is missing or cannot import TensorFlow (a half-built peer
    environment is not a failure of ours)."""
    if not _peer_imports_tensorflow():
        pytest.skip("TensorFlow peer Python (with tensorflow) not installed")
    return PEER_PYTHON


@pytest.fixture
def compiled(monkeypatch):
    """The op types of the XLA executables built during the test (needs jax: the XLA tests
    skip without it before this runs)."""
    from tensorweave.runtime import xla_executable

    ops: set[str] = set()
    init = xla_executable.XlaExecutable.__init__

    def record(self, *a, **k):
        init(self, *a, **k)
        ops.update(it.op for it in self._body)

    monkeypatch.setattr(xla_executable.XlaExecutable, "__init__", record)
    return ops
