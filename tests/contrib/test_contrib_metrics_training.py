"""tf.contrib.metrics against TensorFlow 2.21's metrics (make_contrib_metrics_expected.py:
f1_score rebuilt there from TF 1.15's definition on TF's confusion matrices), streaming_concat,
and tf.contrib.training's HParams (TF 1.15's parse/cast rules) and checkpoint waiting."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.contrib.training import HParams

DATA = np.load(Path(__file__).resolve().parents[1] / "data" / "contrib_metrics_expected.npz")
M = tf.contrib.metrics


def test_streaming_metrics_match_tf_over_two_batches():
    with tf.Graph().as_default():
        p, lab = tf.placeholder(tf.float32, [None]), tf.placeholder(tf.int64, [None])
        w = tf.placeholder(tf.float32, [None])
        metrics = {
            "auc": M.streaming_auc(p, lab, num_thresholds=50),
            "auc_pr_weighted": M.streaming_auc(p, lab, w, num_thresholds=30, curve="PR"),
            "f1": M.f1_score(lab, p),
            "f1_weighted_20": M.f1_score(lab, p, w, num_thresholds=20),
            "accuracy": M.streaming_accuracy(tf.cast(p > 0.5, tf.int64), lab, w),
        }
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            for i in range(2):
                feed = {p: DATA[f"pred_{i}"], lab: DATA[f"label_{i}"], w: DATA[f"weight_{i}"]}
                for name, (_, update) in metrics.items():
                    # float32 sums of <= 65 terms: a few ulps
                    np.testing.assert_allclose(sess.run(update, feed),
                                               DATA[f"{name}_update_{i}"], rtol=1e-6,
                                               err_msg=name)
            for name, (value, _) in metrics.items():
                np.testing.assert_allclose(sess.run(value), DATA[f"{name}_value"], rtol=1e-6)


def test_f1_variables_are_tf_s():
    with tf.Graph().as_default():
        M.f1_score(tf.constant([1, 0]), tf.constant([0.3, 0.8]), num_thresholds=5)
        names = sorted(v.op.name for v in tf.local_variables())
    assert names == ["f1/false_negatives", "f1/false_positives", "f1/true_positives"]


def test_streaming_concat_along_an_axis_with_max_size():
    with tf.Graph().as_default():
        rows = tf.placeholder(tf.float32, [None, 2])
        cols = tf.placeholder(tf.int32, [2, None])
        value, update = M.streaming_concat(rows)
        cvalue, cupdate = M.streaming_concat(cols, axis=-1, max_size=5)
        assert value.shape.as_list() == [None, 2] and cvalue.shape.as_list() == [2, None]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run(value).shape == (0, 2)
            a, b = np.arange(4.0).reshape(2, 2), np.arange(6.0).reshape(3, 2) + 10
            assert sess.run(update, {rows: a}) == 2
            assert sess.run(update, {rows: b}) == 5
            np.testing.assert_array_equal(sess.run(value), np.concatenate([a, b]))
            c = np.arange(8, dtype=np.int32).reshape(2, 4)
            sess.run(cupdate, {cols: c})
            assert sess.run(cupdate, {cols: c}) == 5
            np.testing.assert_array_equal(sess.run(cvalue), np.concatenate([c, c[:, :1]], 1))


def test_streaming_concat_refuses_unknown_other_dims():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="statically known size"):
            M.streaming_concat(tf.placeholder(tf.float32, [None, None]))
        with pytest.raises(ValueError, match="not in"):
            M.streaming_concat(tf.placeholder(tf.float32, [3]), axis=1)


def test_accuracy_and_aggregation():
    with tf.Graph().as_default():
        acc = M.accuracy(tf.constant([1, 2, 3, 4]), tf.constant([1, 2, 0, 4]))
        wacc = M.accuracy(tf.constant([1, 2, 3, 4]), tf.constant([1, 2, 0, 4]),
                          weights=tf.constant([1.0, 1.0, 2.0, 0.0]))
        values, updates = M.aggregate_metric_map({"a": M.streaming_mean(tf.constant([2.0]))})
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run([acc, wacc]) == [0.75, 0.5]
            assert sess.run(updates["a"]) == 2.0 and set(values) == {"a"}
        with pytest.raises(ValueError, match="Dtypes"):
            M.accuracy(tf.constant([1.0]), tf.constant([1]))
    assert tf.contrib.slim.metrics.streaming_auc is M.streaming_auc


# -- HParams ----------------------------------------------------------------------------------
def test_hparams_parse_casts_as_tf_1_15():
    hp = HParams(lr=0.1, units=100, act="relu", flag=False, layers=[64, 32], rates=[0.5])
    assert hp.parse("lr=1,units=7,act=tanh,flag=true,layers=[1 2, 3],rates=[2]") is hp
    assert hp.values() == {"lr": 1.0, "units": 7, "act": "tanh", "flag": True,
                           "layers": [1, 2, 3], "rates": [2.0]}
    assert type(hp.lr) is float and type(hp.rates[0]) is float
    hp.parse("flag=0")
    assert hp.flag is False


@pytest.mark.parametrize("text, message", [
    ("units=1.5", "Could not parse hparam 'units' of type 'int' with value '1.5'"),
    ("nope=1", "Unknown hyperparameter type for nope"),
    ("lr=1,lr=2", "Multiple assignments to variable 'lr'"),
    ("flag=maybe", "Could not parse hparam 'flag' of type 'bool'"),
    ("lr", "Malformed hyperparameter value: lr"),
    ("layers[0]=[1]", "Assignment of a list to a list index."),
    ("units=[1,2]", "Must not pass a list for single-valued parameter: units"),
    ("layers=3", "Must pass a list for multi-valued parameter: layers."),
])
def test_hparams_parse_errors(text, message):
    hp = HParams(lr=0.1, units=100, flag=False, layers=[64, 32])
    with pytest.raises(ValueError) as e:
        hp.parse(text)
    assert str(e.value).startswith(message)


def test_hparams_override_json_and_add():
    hp = HParams(lr=0.1, name_="x")
    hp.add_hparam("depth", 3)
    with pytest.raises(ValueError, match="reserved: values"):
        hp.add_hparam("values", 1)
    with pytest.raises(ValueError, match="cannot be empty"):
        hp.add_hparam("empty", [])
    hp.override_from_dict({"depth": 5, "lr": 2})
    assert hp.depth == 5 and hp.lr == 2.0 and type(hp.lr) is float
    with pytest.raises(ValueError, match="Could not cast hparam 'depth'"):
        hp.set_hparam("depth", 2.5)
    with pytest.raises(ValueError, match="Could not cast hparam 'name_'"):
        hp.set_hparam("name_", 3)
    assert hp.to_json(sort_keys=True) == '{"depth": 5, "lr": 2.0, "name_": "x"}'
    hp.parse_json('{"depth": 9}')
    assert hp.depth == 9 and "depth" in hp and "other" not in hp
    assert hp.get("depth", 1) == 9 and hp.get("missing", "d") == "d"
    with pytest.raises(ValueError, match="incompatible with default"):
        hp.get("depth", "a")
    assert str(hp) == "lr=2.0,name_=x,depth=9"
    assert repr(hp) == "HParams([('depth', 9), ('lr', 2.0), ('name_', 'x')])"
    hp.del_hparam("depth")
    assert "depth" not in hp and not hasattr(hp, "depth")


# -- checkpoints ------------------------------------------------------------------------------
def test_checkpoints_iterator_times_out_and_sees_new_checkpoints(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            first = saver.save(sess, str(tmp_path / "model"), global_step=1)
            start = time.time()
            seen = list(tf.contrib.training.checkpoints_iterator(str(tmp_path), timeout=0.3))
            assert seen == [first] and time.time() - start < 5
            calls = []

            def timeout_fn():
                calls.append(1)
                if len(calls) == 1:
                    saver.save(sess, str(tmp_path / "model"), global_step=2)
                    return False
                return True
            seen = list(tf.contrib.training.checkpoints_iterator(str(tmp_path), timeout=0.2,
                                                                timeout_fn=timeout_fn))
    assert [Path(p).name for p in seen] == ["model-1", "model-2"] and len(calls) == 2
    assert tf.contrib.training.wait_for_new_checkpoint(str(tmp_path), seen[-1],
                                                       seconds_to_sleep=0.05,
                                                       timeout=0.2) is None
