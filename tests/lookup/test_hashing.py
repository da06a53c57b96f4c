"""String hashes and hashed crosses equal TensorFlow's (numbers in hash_expected.npz, written
by make_hash_expected.py with the TF peer)."""

import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime.kernels.cpu.fingerprint import fingerprint64

EXPECTED = np.load(os.path.join(os.path.dirname(__file__), "hash_expected.npz"),
                   allow_pickle=True)
MODULI = [2**63 - 1, 1000003, 7]
KEY = [0x0123456789ABCDEF, 0x0FEDCBA987654321]


def _run(fetch):
    with tf.Session() as sess:
        return sess.run(fetch)


@pytest.mark.parametrize("m", MODULI)
def test_bucket_hashes_match_tf(m):
    with tf.Graph().as_default():
        s = tf.constant(list(EXPECTED["strings"]))
        fast, strong, legacy = _run([tf.strings.to_hash_bucket_fast(s, m),
                                     tf.strings.to_hash_bucket_strong(s, m, KEY),
                                     tf.string_to_hash_bucket(s, m)])
    np.testing.assert_array_equal(fast, EXPECTED[f"fast_{m}"])
    np.testing.assert_array_equal(strong, EXPECTED[f"strong_{m}"])
    np.testing.assert_array_equal(legacy, EXPECTED[f"legacy_{m}"])


def test_fingerprint_known_lengths():
    # every FarmHash length class (0-16, 17-32, 33-64, longer) is among the strings
    lengths = {len(s) for s in EXPECTED["strings"]}
    assert {0, 3, 7, 16, 17, 32, 33, 64, 65, 1000} <= lengths
    assert fingerprint64(b"") == 0x9AE16A3B2F90404F


def _cross_inputs():
    a = tf.SparseTensor([[0, 0], [1, 0], [1, 1], [2, 0]], ["a", "b", "c", "dd"], [3, 2])
    b = tf.SparseTensor([[0, 0], [1, 0], [2, 0], [2, 1]],
                        tf.constant([3, 4, -5, 2**40], tf.int64), [3, 2])
    d = tf.constant([["f"], ["g"], ["hij"]])
    return [a, b, d]


@pytest.mark.parametrize("nb,key", [(0, None), (100, None), (10, 956888297470)])
def test_hashed_cross_matches_tf(nb, key):
    with tf.Graph().as_default():
        c = tf.sparse.cross_hashed(_cross_inputs(), num_buckets=nb, hash_key=key)
        i, v, s = _run([c.indices, c.values, c.dense_shape])
    np.testing.assert_array_equal(i, EXPECTED[f"cross_{nb}_indices"])
    np.testing.assert_array_equal(v, EXPECTED[f"cross_{nb}_values"])
    np.testing.assert_array_equal(s, EXPECTED[f"cross_{nb}_shape"])


def test_string_cross_matches_tf():
    with tf.Graph().as_default():
        c = tf.sparse.cross(_cross_inputs())
        assert _run(c.values).tolist() == EXPECTED["cross_str_values"].tolist()


def test_cross_rejects_float_input():
    with tf.Graph().as_default(), pytest.raises(TypeError, match="int64, int32 or string"):
        tf.sparse.cross([tf.constant([[1.0]])])


def test_as_string_formats_as_tf():
    with tf.Graph().as_default():
        f = tf.strings.as_string(tf.constant([1.5, -2.25, 1e10, 3.14159265]), precision=3)
        i = tf.as_string(tf.constant([1, -20, 300]), width=5, fill="0")
        got_f, got_i = _run([f, i])
    assert got_f.tolist() == EXPECTED["as_string_f"].tolist()
    assert got_i.tolist() == EXPECTED["as_string_i"].tolist()


def test_oov_buckets_match_tf():
    with tf.Graph().as_default():
        words = tf.constant([["a", "zz"], ["c", "q"], ["", "hello world"]])
        t = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
            ["a", "b", "c"], tf.constant([0, 1, 2], tf.int64)), num_oov_buckets=5)
        ti = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant([10, 20], tf.int64), tf.constant([0, 1], tf.int64)), num_oov_buckets=7)
        ints = tf.constant([3, 10, 11, -4, 2**40], tf.int64)
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            w, n = sess.run([t.lookup(words), ti.lookup(ints)])
    np.testing.assert_array_equal(w, EXPECTED["oov_words"])
    np.testing.assert_array_equal(n, EXPECTED["oov_ints"])
