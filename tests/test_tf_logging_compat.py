"""`tf.logging` (TF's levels, format and counters on Python logging) and `tf.compat`."""

from __future__ import annotations

import logging
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf


def test_levels_and_verbosity():
    assert (tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR,
            tf.logging.FATAL) == (10, 20, 30, 40, 50)
    old = tf.logging.get_verbosity()
    try:
        tf.logging.set_verbosity(tf.logging.ERROR)
        assert tf.logging.get_verbosity() == tf.logging.ERROR
    finally:
        tf.logging.set_verbosity(old)


def test_every_n_and_first_n(caplog):
    with caplog.at_level(logging.INFO, logger="tensorweave"):
        for i in range(7):
            tf.logging.log_every_n(tf.logging.INFO, "every %d", 3, i)
            tf.logging.log_first_n(tf.logging.INFO, "first %d", 2, i)
            tf.logging.log_if(tf.logging.INFO, "if %d", i == 4, i)
    messages = [r.getMessage() for r in caplog.records]
    assert messages == ["every 0", "first 0", "first 1", "every 3", "if 4", "every 6"]


def test_format_on_stderr_as_tf():
    code = ("import tensorweave as tf\n"
            "tf.logging.info('hidden')\n"
            "tf.logging.set_verbosity(tf.logging.INFO)\n"
            "tf.logging.info('shown %d', 3)\n"
            "tf.logging.warn('careful')\n"
            "tf.logging.vlog(1, 'verbose')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stderr.splitlines() == ["INFO:tensorweave:shown 3", "WARNING:tensorweave:careful"]


def test_compat_text_helpers():
    assert tf.compat.as_bytes("héllo") == "héllo".encode()
    assert tf.compat.as_bytes(bytearray(b"ab")) == b"ab"
    assert tf.compat.as_text(b"caf\xc3\xa9") == "café"
    assert tf.compat.as_str is tf.compat.as_text
    assert tf.compat.as_str_any(b"x") == "x" and tf.compat.as_str_any(3) == "3"
    assert tf.compat.path_to_str(pathlib.Path("/a/b")) == "/a/b"
    assert tf.compat.path_to_str(7) == 7
    with pytest.raises(TypeError, match="Expected binary or unicode string, got 3"):
        tf.compat.as_bytes(3)


def test_compat_types_dimensions_and_v1():
    assert tf.compat.v1 is tf
    assert isinstance(np.int64(3), tf.compat.integral_types)
    assert isinstance(2.5, tf.compat.real_types) and isinstance(1j, tf.compat.complex_types)
    assert tf.compat.bytes_or_text_types == (bytes, str)
    assert tf.compat.dimension_value(tf.TensorShape([3, None])[0]) == 3
    assert tf.compat.dimension_value(None) is None
    assert tf.compat.dimension_at_index(tf.TensorShape(None), 2).value is None
    assert tf.compat.dimension_at_index([4, 5], 1).value == 5
    assert tf.compat.forward_compatible(2019, 1, 1)
    assert not tf.compat.forward_compatible(2030, 1, 1)
    with tf.compat.forward_compatibility_horizon(2031, 1, 1):
        assert tf.compat.forward_compatible(2030, 1, 1)
