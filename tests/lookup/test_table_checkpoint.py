"""Checkpointed mutable lookup tables: a MutableHashTable (scalar or vector values) is saved
by `tf.train.Saver` under TF's keys `<name>-keys` / `<name>-values` (its export op) and
restored by LookupTableImportV2, so table checkpoints move both ways between TensorFlow 2.21
and tensorweave (slow tests through the TF peer run tf_table_checkpoint.py under each)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "tf_table_checkpoint.py")
WANT = {"ids": [3, -1, 1, 4], "vecs": [[1.0, 2.0], [0.0, 0.0], [3.0, 4.0]], "size": 3,
        "v": [5.0, 6.0]}


def _run(python, mode, prefix, as_tf=False) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TW_AS_TF"}
    if as_tf:
        env["TW_AS_TF"] = "1"
    r = subprocess.run([python, SCRIPT, mode, prefix], capture_output=True, text=True,
                       timeout=300, env=env, cwd=HERE)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_saver_writes_tfs_keys_and_restores_the_tables(tmp_path):
    with tf.Graph().as_default():
        words = tf.contrib.lookup.MutableHashTable(tf.string, tf.int64, -1, name="words")
        fill = words.insert(tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(fill)
            prefix = saver.save(sess, str(tmp_path / "m"))
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_dtype_map() == {"words-keys": tf.string,
                                                  "words-values": tf.int64}
    got = dict(zip(reader.get_tensor("words-keys").tolist(),
                   reader.get_tensor("words-values").tolist()))
    assert got == {b"a": 1, b"b": 2}
    with tf.Graph().as_default():
        words = tf.contrib.lookup.MutableHashTable(tf.string, tf.int64, -1, name="words")
        stale = words.insert(tf.constant(["zzz"]), tf.constant([9], tf.int64))
        out = words.lookup(tf.constant(["a", "b", "zzz"]))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(stale)
            saver.restore(sess, prefix)   # the restore replaces the table's contents
            assert sess.run(out).tolist() == [1, 2, -1]


def test_tables_made_with_checkpoint_false_are_not_saved():
    with tf.Graph().as_default():
        tf.contrib.lookup.MutableHashTable(tf.string, tf.int64, -1, checkpoint=False)
        assert not tf.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS)
        with pytest.raises(ValueError, match="No variables to save"):
            tf.train.Saver()


def test_two_tables_of_one_name_collide_as_in_tf():
    with tf.Graph().as_default():
        tf.contrib.lookup.MutableHashTable(tf.string, tf.int64, -1)
        tf.contrib.lookup.MutableHashTable(tf.string, tf.int64, -1)
        with pytest.raises(ValueError, match="same name: MutableHashTable-keys"):
            tf.train.Saver()


@pytest.mark.slow
def test_our_table_checkpoint_round_trips(tmp_path):
    prefix = _run(sys.executable, "write", str(tmp_path / "m"), as_tf=True)["prefix"]
    assert _run(sys.executable, "read", prefix, as_tf=True) == WANT


@pytest.mark.slow
def test_tf_restores_ours_and_we_restore_tfs(tmp_path, tf_peer):
    ours = _run(sys.executable, "write", str(tmp_path / "ours" / "m"), as_tf=True)["prefix"]
    assert _run(tf_peer, "read", ours) == WANT
    theirs = _run(tf_peer, "write", str(tmp_path / "theirs" / "m"))["prefix"]
    reader = tf.train.NewCheckpointReader(theirs)
    assert set(reader.get_variable_to_shape_map()) == {
        "v", "words-keys", "words-values", "vecs-keys", "vecs-values"}
    np.testing.assert_array_equal(sorted(reader.get_tensor("vecs-keys").tolist()), [7, 9])
    assert _run(sys.executable, "read", theirs, as_tf=True) == WANT
