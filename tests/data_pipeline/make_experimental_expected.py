"""Writes tests/data/csv/*.csv and what TensorFlow's tf.data.experimental gives for them and
for scan / map_and_batch / parallel_interleave / get_single_element
(tests/data/experimental_expected.npz, values pickled-free as object arrays of repr strings):

    ~/.cache/tensorweave-tf-peer/bin/python tests/data_pipeline/make_experimental_expected.py
"""

# ruff: noqa: B023  (each lambda runs at once, inside its loop iteration)
from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
ROOT = Path(__file__).resolve().parents[1] / "data"
CSV = ROOT / "csv"
FILES = {
    "plain.csv": "a,b,c,d\n1,2.5,x,7\n3,,\"y,z\",8\n-5,7e3,w,NA\n",
    "quoted.csv": "1|\"he said \"\"hi\"\"\"|3.5\n2|plain|\n",
    "bad_int.csv": "1,2\nx,3\n",
    "short.csv": "1,2,3\n4,5\n",
}


def _reason(message: str) -> str:
    """The line of a TF error message that says what was wrong (not the node or stack)."""
    lines = [ln for ln in message.splitlines() if ln.strip() and not ln.startswith(("\t", " "))
             and not ln.startswith(("Graph execution", "Detected at", "Node:"))]
    return lines[-1] if lines else message


def elements(ds):
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    out = []
    with tf.Session() as sess:
        try:
            while True:
                out.append(sess.run(nxt))
        except tf.errors.OutOfRangeError:
            pass
        except tf.errors.OpError as e:
            out.append(f"{type(e).__name__}: {_reason(e.message)}")
    return repr(out)


def main():
    CSV.mkdir(parents=True, exist_ok=True)
    for name, text in FILES.items():
        (CSV / name).write_text(text)
    p = {k: str(CSV / k) for k in FILES}
    ex = tf.data.experimental
    cases = {
        "csv_plain": lambda: ex.CsvDataset(p["plain.csv"], [tf.int32, [0.5], tf.string,
                                                            [-1]],
                                           header=True, na_value="NA"),
        "csv_select": lambda: ex.CsvDataset(p["plain.csv"], [[0], ["?"]], header=True,
                                            select_cols=[0, 2]),
        "csv_quoted": lambda: ex.CsvDataset(p["quoted.csv"], [tf.int64, tf.string, [1.0]],
                                            field_delim="|"),
        "csv_noquote": lambda: ex.CsvDataset(p["quoted.csv"], [tf.int64, tf.string, [1.0]],
                                             field_delim="|", use_quote_delim=False),
        "csv_required_missing": lambda: ex.CsvDataset(p["plain.csv"],
                                                      [tf.int32, tf.float32, tf.string,
                                                       tf.string], header=True),
        "csv_bad_int": lambda: ex.CsvDataset(p["bad_int.csv"], [tf.int32, tf.int32]),
        "csv_short": lambda: ex.CsvDataset(p["short.csv"], [[0], [0], [0]]),
        "make_csv": lambda: ex.make_csv_dataset(p["plain.csv"], 2, label_name="c",
                                                shuffle=False, num_epochs=1, na_value="NA"),
        "scan": lambda: tf.data.Dataset.range(6).apply(ex.scan(
            (np.int64(0), np.float32(1)), lambda s, x: ((s[0] + x, s[1] * 2.0),
                                                        (s[0], x * 3)))),
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
    out = {k: np.array(elements(fn())) for k, fn in cases.items()}
    with tf.Session() as sess:
        out["single"] = np.array(repr(sess.run(ex.get_single_element(
            tf.data.Dataset.from_tensors((np.int32(4), b"s"))))))
        for name, ds in (("single_empty", tf.data.Dataset.range(0)),
                         ("single_many", tf.data.Dataset.range(2))):
            try:
                sess.run(ex.get_single_element(ds))
            except tf.errors.OpError as e:
                out[name] = np.array(f"{type(e).__name__}: {_reason(e.message)}")
    np.savez(ROOT / "experimental_expected.npz", **out)
    for k, v in out.items():
        print(k, v)


if __name__ == "__main__":
    main()
