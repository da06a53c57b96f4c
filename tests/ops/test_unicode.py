"""Unicode string ops and RaggedTensors against TensorFlow 2.21 (tests/data/
unicode_expected.json, written by make_unicode_expected.py from unicode_cases.py), plus TF's
errors and RaggedTensor's session feeds and graph-construction checks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tests.ops import unicode_cases

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "data" /
                       "unicode_expected.json").read_text())


def _approx(got, want):
    """JSON values equal, floats to float32 rounding."""
    if isinstance(want, float):
        return abs(got - want) <= 1e-6 * max(1.0, abs(want))
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(
            _approx(g, w) for g, w in zip(got, want))
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(
            _approx(got[k], want[k]) for k in want)
    return got == want


@pytest.mark.parametrize("name", sorted(unicode_cases.CASES))
def test_case_matches_tensorflow(name):
    with tf.Graph().as_default(), tf.Session() as sess:
        got = [unicode_cases.to_jsonable(v) for v in sess.run(unicode_cases.CASES[name](tf))]
    got = json.loads(json.dumps(got))
    assert _approx(got, EXPECTED[name]), (got, EXPECTED[name])


def test_errors_are_tensorflows():
    with tf.Graph().as_default(), tf.Session() as sess:
        for build, message in (
                (lambda: tf.strings.unicode_decode([b"a\xff"], "UTF-8", errors="strict"),
                 "Invalid formatting on input string"),
                (lambda: tf.strings.unicode_transcode([b"a\xff"], "UTF-8", "UTF-8",
                                                      errors="strict"),
                 "Invalid formatting on input string"),
                (lambda: tf.strings.unicode_encode([[65, 0xD800]], "UTF-8", errors="strict"),
                 "out of range for Unicode, or is a surrogate"),
                (lambda: tf.strings.unicode_decode([b"x"], "BOGUS"),
                 "Could not create converter for input encoding: BOGUS")):
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                sess.run(build())
        with pytest.raises(ValueError, match="errors"):
            tf.strings.unicode_decode(["x"], "UTF-8", errors="loud")
        with pytest.raises(ValueError, match="output_encoding"):
            tf.strings.unicode_encode([[65]], "latin-1")


def test_bad_row_splits_fail_when_validated():
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="nvals"):
            sess.run(tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 2]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="monotonic"):
            sess.run(tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 2, 1, 3]))


def test_ragged_is_a_composite_fed_and_fetched():
    with tf.Graph().as_default():
        rt = tf.ragged.placeholder(tf.int32, ragged_rank=1)
        doubled = tf.ragged.map_flat_values(tf.multiply, rt, 2)
        value = tf.ragged.constant_value([[1, 2], [], [3]], dtype=tf.int32)
        with tf.Session() as sess:
            out = sess.run(doubled, {rt: value})
        assert isinstance(out, tf.ragged.RaggedTensorValue)
        assert out.to_list() == [[2, 4], [], [6]]
        assert out.row_splits.tolist() == [0, 2, 2, 3]
        assert all(op.type != "RaggedTensorToTensor" for op in tf.get_default_graph()
                   .get_operations())
        with pytest.raises(TypeError, match="RaggedTensor"):
            tf.add(rt, 1)
        with pytest.raises(ValueError, match="private"):
            tf.RaggedTensor(rt.values, rt.row_splits)


def test_static_shapes():
    with tf.Graph().as_default():
        rt = tf.RaggedTensor.from_row_splits(np.zeros((5, 3), np.float32), [0, 2, 2, 5])
        assert rt.shape.as_list() == [3, None, 3] and rt.ragged_rank == 1
        codes = tf.strings.unicode_decode(unicode_cases.GRID, "UTF-8")
        assert codes.ragged_rank == 2 and codes.shape.as_list()[0] == 3
        assert tf.strings.unicode_encode(codes, "UTF-8").shape.as_list()[0] == 3
