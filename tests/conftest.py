"""Shared fixtures: a fresh default graph per test."""

import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    tf.reset_default_graph()
    yield
