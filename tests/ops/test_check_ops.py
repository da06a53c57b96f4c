"""tf.print / StringFormat texts and the assert family's messages against TensorFlow's
(make_check_expected.py -> tests/data/check_expected.json), and their build-time errors."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf

DATA = json.loads((Path(__file__).resolve().parents[1] / "data" /
                   "check_expected.json").read_text())


def _value(case):
    if case["dtype"].startswith("|S"):
        arr = np.array([v.encode() for v in case["value"]], dtype=object)
        return arr.reshape(case["shape"])
    return np.array(case["value"], dtype=case["dtype"]).reshape(case["shape"])


@pytest.mark.parametrize("name", sorted(DATA["format"]))
def test_string_format_matches_tensorflow(name):
    case = DATA["format"][name]
    with tf.Graph().as_default(), tf.Session() as sess:
        t = tf.strings.format("{}", [tf.constant(_value(case))], summarize=case["summarize"])
        assert t.op.type == "StringFormat" and t.shape.ndims == 0
        assert sess.run(t).decode() == case["text"]


def _assert_cases():
    x = tf.placeholder_with_default(np.array([1, 2, 3], np.int32), [3], name="x")
    return {
        "equal": lambda: tf.assert_equal(x, [1, 0, 3], message="msg"),
        "none_equal": lambda: tf.assert_none_equal(x, [0, 2, 0]),
        "less": lambda: tf.assert_less(x, 3),
        "greater_equal": lambda: tf.assert_greater_equal(x, [2, 2, 2]),
        "positive": lambda: tf.assert_positive(x - 2),
        "near": lambda: tf.assert_near(tf.cast(x, tf.float32), [1.0, 2.5, 3.0]),
        "rank": lambda: tf.assert_rank(tf.placeholder_with_default(x, None), 2),
    }


def _unnumbered(text: str) -> str:
    return re.sub(r"\b(assert_[a-z_]+?)(_\d+)?/", r"\1/", text)


def test_runtime_assert_messages_match_tensorflow():
    with tf.Graph().as_default(), tf.Session() as sess:
        for name, make in _assert_cases().items():
            op = make()
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(op)
            # NOTE: TF's assert_equal opens its name scope twice (assert_equal_1/y)
            want = _unnumbered(DATA["asserts"][name].replace('\\\\"', '\\"'))
            assert want in _unnumbered(str(info.value)), (name, str(info.value))
            assert "[[node " in str(info.value)  # the failing node is named


def test_static_assert_messages_match_tensorflow():
    with tf.Graph().as_default():
        for name, make in {"static_equal": lambda: tf.assert_equal([1, 2], [1, 3]),
                           "static_less": lambda: tf.assert_less(2, 1)}.items():
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                make()
            got = info.value.message if hasattr(info.value, "message") else str(info.value)
            # NOTE: names differ only in their scope counters (TF's script built more before)
            want = _unnumbered(DATA["asserts"][name])
            assert _unnumbered(got) == want


def test_passing_asserts_run_and_gate_values():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None])
        checks = [tf.assert_equal(x, x), tf.assert_less(x, x + 1), tf.assert_positive(x),
                  tf.assert_near(x, x * (1 + 1e-7)), tf.assert_rank(x, 1),
                  tf.assert_rank_at_least(x, 1), tf.assert_type(x, tf.float32),
                  tf.debugging.assert_greater(x + 1, x)]
        with tf.control_dependencies(checks):
            y = tf.identity(x)
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [1.0, 2.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="x > 0"):
            sess.run(y, {x: [1.0, -2.0]})


def test_build_time_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="must have rank 3"):
            tf.assert_rank(tf.zeros([2, 3]), 3)
        with pytest.raises(ValueError, match="rank at least 3"):
            tf.assert_rank_at_least(tf.zeros([2, 3]), 3)
        with pytest.raises(TypeError, match="must be of type"):
            tf.assert_type(tf.zeros([2]), tf.int32)
        with pytest.raises(TypeError, match="integer"):
            tf.assert_integer(tf.zeros([2]))
        with pytest.raises(ValueError, match="scalar"):
            tf.assert_scalar(tf.zeros([2]))
        assert tf.assert_rank(tf.zeros([2, 3]), 2).type == "NoOp"


def test_print_to_streams_and_file(tmp_path, capfd):
    path = tmp_path / "log.txt"
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.constant([[1, 2], [3, 4]])
        out = tf.print("x:", x, "n =", 3, output_stream=sys.stdout)
        err = tf.print(tf.range(10), summarize=2)
        to_file = tf.print(tf.constant("plain"), output_stream=f"file://{path}", end="!\n")
        assert out.type == "PrintV2"
        sess.run([out, err])
        sess.run(to_file)
        sess.run(to_file)
    captured = capfd.readouterr()
    assert captured.out == "x: [[1 2]\n [3 4]] n = 3\n"
    assert captured.err.endswith("[0 1 ... 8 9]\n")
    assert path.read_text() == "plain!\nplain!\n"
    with pytest.raises(ValueError, match="Unsupported output stream"):
        tf.print("a", output_stream=42)


def test_verify_tensor_all_finite_and_add_check_numerics_ops():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [2])
        y = tf.verify_tensor_all_finite(tf.log(x), "log blew up")
        assert sess.run(y, {x: [1.0, np.e]}).tolist() == pytest.approx([0.0, 1.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="log blew up"):
            sess.run(y, {x: [0.0, 1.0]})
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [2])
        z = tf.sqrt(x, name="root")
        check = tf.add_check_numerics_ops()
        assert sess.run([z, check], {x: [4.0, 1.0]})[0].tolist() == [2.0, 1.0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="root:0"):
            sess.run([z, check], {x: [-1.0, 1.0]})
