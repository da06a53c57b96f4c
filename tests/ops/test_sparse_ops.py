"""Sparse ops (values and gradients) against TensorFlow's (sparse_cases.py,
make_sparse_expected.py -> tests/data/sparse_expected.json), and their errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tests.ops.sparse_cases import CASES
from tests.ops.string_cases import to_jsonable

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "data" /
                       "sparse_expected.json").read_text())


def _close(got, want, where):
    if isinstance(want, list):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g, w, f"{where}[{i}]")
    elif "values" in want and isinstance(want["values"], dict):
        for key in ("indices", "values", "dense_shape"):
            _close(got[key], want[key], f"{where}.{key}")
    else:
        assert got["shape"] == want["shape"], (where, got, want)
        assert got["values"] == pytest.approx(want["values"], rel=1e-5, abs=1e-6), where


@pytest.mark.parametrize("name", sorted(CASES))
def test_sparse_op_matches_tensorflow(name):
    with tf.Graph().as_default(), tf.Session() as sess:
        built = CASES[name](tf)
        if isinstance(built, (list, tuple)):
            got = [to_jsonable(v) for v in sess.run(list(built))]
        else:
            got = to_jsonable(sess.run(built))
    _close(got, EXPECTED[name], name)


def test_static_shapes():
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0, 1]], [1.0], [3, 4])
        assert tf.sparse_tensor_dense_matmul(sp, tf.zeros([4, 5])).shape.as_list() == [3, 5]
        assert tf.sparse_reduce_sum(sp, 1).shape.as_list() == [3]
        assert tf.sparse_reduce_sum(sp, 0, keepdims=True).shape.as_list() == [1, 4]


def test_sparse_errors():
    with tf.Graph().as_default(), tf.Session() as sess:
        sp = tf.SparseTensor([[0, 1]], [1.0], [3, 4])
        with pytest.raises(tf.errors.InvalidArgumentError, match="inner dimension"):
            sess.run(tf.sparse_tensor_dense_matmul(sp, tf.placeholder_with_default(
                np.zeros((3, 2), np.float32), None)))
        with pytest.raises(tf.errors.InvalidArgumentError, match="multiple of"):
            sess.run(tf.sparse_reshape(sp, [5, -1]).indices)
        with pytest.raises(TypeError, match="SparseTensor"):
            tf.sparse_add(tf.zeros([2]), tf.zeros([2]))
