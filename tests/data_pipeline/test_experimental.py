"""tf.data.experimental (CsvDataset, make_csv_dataset, scan, map_and_batch,
parallel_interleave, get_single_element, Options, get_output_*) against what TensorFlow gave
on the same inputs (make_experimental_expected.py → tests/data/experimental_expected.npz:
the repr of each element list, errors as "Class: TF's reason line")."""

from __future__ import annotations

from collections import OrderedDict  # noqa: F401 - used by eval of TF's reprs
from pathlib import Path

import numpy as np
import pytest
from numpy import array, float32, int32, int64  # noqa: F401 - used by eval of TF's reprs

import tensorweave as tf

DATA = Path(__file__).resolve().parents[1] / "data"
E = np.load(DATA / "experimental_expected.npz")
P = {name: str(DATA / "csv" / name) for name in ("plain.csv", "quoted.csv", "bad_int.csv",
                                                  "short.csv")}
ex = tf.data.experimental


def _elements(ds):
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    out = []
    with tf.Session() as sess:
        try:
            while True:
                out.append(sess.run(nxt))
        except tf.errors.OutOfRangeError:
            pass
        except tf.errors.OpError as e:
            out.append(f"{type(e).__name__}: {e.message}")
    return out


def _same(got, want) -> None:
    if isinstance(want, str):
        cls, reason = want.split(": ", 1)
        assert isinstance(got, str) and got.startswith(cls) and reason in got, (got, want)
        return
    if isinstance(want, (tuple, list)):
        assert type(got) in (tuple, list) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    if isinstance(want, dict):
        assert list(got) == list(want), (list(got), list(want))
        for k in want:
            _same(got[k], want[k])
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape and g.tolist() == w.tolist(), (got, want)


CASES = {
    "csv_plain": lambda: ex.CsvDataset(P["plain.csv"], [tf.int32, [0.5], tf.string, [-1]],
                                       header=True, na_value="NA"),
    "csv_select": lambda: ex.CsvDataset(P["plain.csv"], [[0], ["?"]], header=True,
                                        select_cols=[0, 2]),
    "csv_quoted": lambda: ex.CsvDataset(P["quoted.csv"], [tf.int64, tf.string, [1.0]],
                                        field_delim="|"),
    "csv_noquote": lambda: ex.CsvDataset(P["quoted.csv"], [tf.int64, tf.string, [1.0]],
                                         field_delim="|", use_quote_delim=False),
    "csv_required_missing": lambda: ex.CsvDataset(
        P["plain.csv"], [tf.int32, tf.float32, tf.string, tf.string], header=True),
    "csv_bad_int": lambda: ex.CsvDataset(P["bad_int.csv"], [tf.int32, tf.int32]),
    "csv_short": lambda: ex.CsvDataset(P["short.csv"], [[0], [0], [0]]),
    "make_csv": lambda: ex.make_csv_dataset(P["plain.csv"], 2, label_name="c", shuffle=False,
                                            num_epochs=1, na_value="NA"),
    "scan": lambda: tf.data.Dataset.range(6).apply(ex.scan(
        (np.int64(0), np.float32(1)), lambda s, x: ((s[0] + x, s[1] * 2.0), (s[0], x * 3)))),
    "map_and_batch": lambda: tf.data.Dataset.range(7).apply(
        ex.map_and_batch(lambda x: (x, x * x), 3)),
    "map_and_batch_drop": lambda: tf.data.Dataset.range(7).apply(
        ex.map_and_batch(lambda x: x + 1, 3, drop_remainder=True)),
    "group_by_window": lambda: tf.data.Dataset.range(10).apply(ex.group_by_window(
        lambda x: x % 3, lambda k, w: w.batch(4).map(lambda b: (k, b)), window_size=2)),
    "group_by_window_size_func": lambda: tf.data.Dataset.range(12).apply(
        ex.group_by_window(lambda x: x % 2, lambda k, w: w.batch(10),
                           window_size_func=lambda k: k + 2)),
    "group_by_window_zero": lambda: tf.data.Dataset.range(3).apply(
        ex.group_by_window(lambda x: x, lambda k, w: w.batch(1),
                           window_size_func=lambda k: k * 0)),
    "bucket": lambda: tf.data.Dataset.from_generator(
        lambda: iter([[1] * n for n in (3, 1, 5, 2, 7, 4, 6, 2)]), tf.int32, [None]).apply(
        ex.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [3, 5], [2, 2, 3])),
    "bucket_no_padding": lambda: tf.data.Dataset.range(9).apply(
        ex.bucket_by_sequence_length(lambda x: tf.cast(x, tf.int32), [4], [2, 3],
                                 no_padding=True)),
    "parallel_interleave": lambda: tf.data.Dataset.range(1, 4).apply(
        ex.parallel_interleave(lambda x: tf.data.Dataset.range(x * 10, x * 10 + x), 2,
                               block_length=2)),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_matches_tensorflow(key):
    want = eval(str(E[key]))  # noqa: S307 - TF's repr of numpy values, written by us
    _same(_elements(CASES[key]()), want)


def test_get_single_element():
    with tf.Session() as sess:
        got = sess.run(ex.get_single_element(tf.data.Dataset.from_tensors((np.int32(4), b"s"))))
        _same(tuple(got), eval(str(E["single"])))  # noqa: S307
        for key, ds in (("single_empty", tf.data.Dataset.range(0)),
                        ("single_many", tf.data.Dataset.range(2))):
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(ex.get_single_element(ds))
            assert str(E[key]).split(": ", 1)[1] in info.value.message


def test_scan_state_type_must_not_change():
    with pytest.raises(TypeError, match="new state must match"):
        tf.data.Dataset.range(3).apply(ex.scan(np.int32(0), lambda s, x: (x, x)))


def test_options_and_output_structure_functions():
    ds = tf.data.Dataset.from_tensor_slices((np.zeros([3, 2], np.float32), np.arange(3)))
    assert tf.data.get_output_types(ds) == (tf.float32, tf.int64)
    assert [s.as_list() for s in tf.data.get_output_shapes(ds)] == [[2], []]
    assert tf.data.get_output_classes(ds) == (tf.Tensor, tf.Tensor)
    opts = tf.data.Options()
    opts.experimental_deterministic = False
    out = ds.with_options(opts)
    assert out.options().experimental_deterministic is False
    assert _elements(out)[2][1] == 2
