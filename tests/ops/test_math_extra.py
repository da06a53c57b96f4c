"""einsum, roll, norm, eye, sort/argsort, batch_gather, bitwise ops, edit_distance, conv1d,
atrous_conv2d, pool and swish (values and gradients) against TensorFlow's (extra_cases.py,
make_extra_expected.py -> tests/data/extra_expected.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tensorweave as tf
from tests.ops.extra_cases import CASES
from tests.ops.string_cases import to_jsonable

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "data" /
                       "extra_expected.json").read_text())


def _close(got, want, where):
    if isinstance(want, list):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g, w, f"{where}[{i}]")
        return
    assert got["shape"] == want["shape"], (where, got["shape"], want["shape"])
    assert got.get("dtype") == want.get("dtype"), where
    # NOTE: float32 sums of many terms (weighted gradients) cancel: tolerance scales with them
    scale = max([abs(v) for v in want["values"] if isinstance(v, (int, float))] or [1.0])
    assert got["values"] == pytest.approx(want["values"], rel=2e-5,
                                          abs=max(1e-5, 1e-6 * scale)), where


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    with tf.Graph().as_default(), tf.Session() as sess:
        built = CASES[name](tf)
        values = sess.run(list(built) if isinstance(built, list) else built)
        got = [to_jsonable(v) for v in values] if isinstance(built, list) else \
            to_jsonable(values)
    _close(got, EXPECTED[name], name)


def test_static_shapes_and_errors():
    with tf.Graph().as_default():
        a, b = tf.placeholder(tf.float32, [2, None]), tf.placeholder(tf.float32, [None, 5])
        assert tf.einsum("ij,jk->ik", a, b).shape.as_list() == [2, 5]
        assert tf.einsum("ij->", a).shape.as_list() == []
        with pytest.raises(ValueError, match="Expecting 2 inputs"):
            tf.einsum("ij,jk->ik", a)
        assert tf.nn.conv1d(tf.zeros([4, 10, 3]), tf.zeros([3, 3, 8]), 2,
                            "SAME").shape.as_list() == [4, 5, 8]
        with pytest.raises(ValueError, match="ord"):
            tf.norm(a, ord=-1)
        with pytest.raises(TypeError, match="SparseTensor"):
            tf.edit_distance(a, b)
