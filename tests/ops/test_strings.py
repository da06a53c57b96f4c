"""String ops against TensorFlow's outputs (string_cases.py, make_string_expected.py ->
tests/data/string_expected.json), their op types, and their errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tensorweave as tf
from tests.ops.string_cases import CASES, to_jsonable

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "data" /
                       "string_expected.json").read_text())


@pytest.mark.parametrize("name", sorted(CASES))
def test_string_op_matches_tensorflow(name):
    with tf.Graph().as_default(), tf.Session() as sess:
        got = to_jsonable(sess.run(CASES[name](tf)))
    want = EXPECTED[name]
    if "dtype" in want and want["dtype"].startswith("float"):
        assert got["shape"] == want["shape"]
        assert got["values"] == pytest.approx(want["values"])
    else:
        assert got == want


def test_static_and_dynamic_regex_op_types():
    with tf.Graph().as_default():
        assert tf.regex_replace(["a"], "a", "b").op.type == "StaticRegexReplace"
        assert tf.regex_replace(["a"], tf.constant("a"), "b").op.type == "RegexReplace"
        assert tf.strings.regex_full_match(["a"], "a").op.type == "StaticRegexFullMatch"


def test_string_errors():
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
            sess.run(tf.substr(["abc"], 5, 1))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid pattern"):
            sess.run(tf.regex_replace(["abc"], tf.constant("("), "x"))
        with pytest.raises(ValueError, match="rank 1"):
            tf.string_split([["a"]])
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Invalid reduction dimension"):
            tf.reduce_join([["a"]], 2)


def test_reduce_join_static_shape():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.string, [2, 3, 4])
        assert tf.reduce_join(x, 1).shape.as_list() == [2, 4]
        assert tf.reduce_join(x, [0, 2], keep_dims=True).shape.as_list() == [1, 3, 1]
