"""Every tf_v1_symbol_usage.tsv symbol of the estimator / feature_column / lookup / metrics
families that TF 2.21's `tf.compat.v1` still has (tests/data/estimator_families_in_tf.json,
from make_estimator_families.py) exists in tensorweave; so do the TF 1.15 estimator symbols
2.21 dropped, except TPU, Keras-conversion and contrib.metrics ones (not built here)."""

from __future__ import annotations

import json
from pathlib import Path

import tensorweave as tf
from tests.compat import v1_families

IN_TF = json.loads((Path(__file__).resolve().parent.parent / "data" /
                    "estimator_families_in_tf.json").read_text())
NOT_BUILT = ("estimator.tpu.", "contrib.metrics.")


def test_every_family_symbol_of_tf_exists():
    missing = [n for n, in_tf in IN_TF.items() if in_tf and v1_families.resolve(tf, n) is None]
    assert not missing


def test_tf1_estimator_symbols_exist_too():
    missing = [n for n, in_tf in IN_TF.items() if not in_tf and not n.startswith(NOT_BUILT)
               and n != "Estimator" and v1_families.resolve(tf, n) is None]
    assert not missing


def test_family_symbols_work():
    with tf.Graph().as_default():
        col = tf.feature_column.numeric_column("x")
        out = tf.feature_column.input_layer({"x": tf.constant([1.0, 2.0])}, [col])
        auc, up = tf.metrics.auc(tf.constant([0, 1]), tf.constant([0.2, 0.9]))
        with tf.Session() as sess:
            sess.run([tf.local_variables_initializer(), tf.tables_initializer()])
            sess.run(up)
            assert sess.run(out).tolist() == [[1.0], [2.0]]
            assert sess.run(auc) > 0.99
