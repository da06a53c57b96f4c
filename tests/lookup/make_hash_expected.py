"""Writes hash_expected.npz with the TensorFlow peer: TF's string hash buckets and hashed
sparse crosses over many strings, for tests/lookup/test_hashing.py.

Run: ~/.cache/tensorweave-tf-peer/bin/python tests/lookup/make_hash_expected.py
"""

import os

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1
HERE = os.path.dirname(os.path.abspath(__file__))
MODULI = [2**63 - 1, 1000003, 7]
KEY = [0x0123456789ABCDEF, 0x0FEDCBA987654321]


def strings() -> list:
    rng = np.random.RandomState(0)
    out = [b"", b"a", b"ab", b"abc", b"hello", "héllo wörld".encode(), b"x" * 64, b"y" * 65]
    for n in list(range(0, 200)) + [255, 256, 257, 511, 1000]:
        out.append(bytes(rng.randint(0, 256, size=n, dtype=np.uint8)))
    return out


def main():
    s = strings()
    out = {"strings": np.array(s, dtype=object)}
    with v1.Session() as sess:
        t = tf.constant(s)
        for m in MODULI:
            out[f"fast_{m}"] = sess.run(tf.strings.to_hash_bucket_fast(t, m))
            out[f"strong_{m}"] = sess.run(tf.strings.to_hash_bucket_strong(t, m, KEY))
            out[f"legacy_{m}"] = sess.run(v1.string_to_hash_bucket(t, m))
        a = tf.SparseTensor([[0, 0], [1, 0], [1, 1], [2, 0]], [b"a", b"b", b"c", b"dd"], [3, 2])
        b = tf.SparseTensor([[0, 0], [1, 0], [2, 0], [2, 1]],
                            tf.constant([3, 4, -5, 2**40], tf.int64), [3, 2])
        d = tf.constant([[b"f"], [b"g"], [b"hij"]])
        for nb, key in [(0, None), (100, None), (10, 956888297470)]:
            c = v1.sparse.cross_hashed([a, b, d], num_buckets=nb, hash_key=key)
            ci, cv, cs = sess.run([c.indices, c.values, c.dense_shape])
            out[f"cross_{nb}_indices"], out[f"cross_{nb}_values"] = ci, cv
            out[f"cross_{nb}_shape"] = cs
        words = tf.constant([["a", "zz"], ["c", "q"], ["", "hello world"]])
        t = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
            ["a", "b", "c"], tf.constant([0, 1, 2], tf.int64)), num_oov_buckets=5)
        ints = tf.constant([3, 10, 11, -4, 2**40], tf.int64)
        ti = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant([10, 20], tf.int64), tf.constant([0, 1], tf.int64)), num_oov_buckets=7)
        sess.run(v1.tables_initializer())
        out["oov_words"], out["oov_ints"] = sess.run([t.lookup(words), ti.lookup(ints)])
        out["as_string_f"] = sess.run(tf.strings.as_string(
            tf.constant([1.5, -2.25, 1e10, 3.14159265]), precision=3)).astype(object)
        out["as_string_i"] = sess.run(tf.strings.as_string(
            tf.constant([1, -20, 300]), width=5, fill="0")).astype(object)
        c = v1.sparse.cross([a, b, d])
        out["cross_str_values"] = sess.run(c.values).astype(object)
    np.savez(os.path.join(HERE, "hash_expected.npz"), **out)


if __name__ == "__main__":
    main()
