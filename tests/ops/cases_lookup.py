"""Lookup-table and string-hash ops. The hash ops run through the harness against TF's own
numbers (tests/lookup/hash_expected.npz); the stateful table ops need an initializer run
first, so tests/lookup/test_lookup.py covers them."""

import os

import numpy as np

import tensorweave as tf
from tensorweave.ops import lookup_ops
from tests.ops.harness import OpCase

_NPZ = np.load(os.path.join(os.path.dirname(__file__), "..", "lookup", "hash_expected.npz"),
               allow_pickle=True)
_STRINGS = np.array(list(_NPZ["strings"][:40]), dtype=object).reshape(5, 8)
_KEY = [0x0123456789ABCDEF, 0x0FEDCBA987654321]


def _want(name):
    return lambda s: np.asarray(_NPZ[name][:40], dtype=np.int64).reshape(5, 8)


def _cross(a_idx, a_val, a_shape, d):
    c = tf.sparse.cross_hashed([tf.SparseTensor(a_idx, a_val, a_shape), d], num_buckets=100)
    return [c.indices, c.values, c.dense_shape]


CASES = [
    OpCase("StringToHashBucketFast", lambda s: tf.strings.to_hash_bucket_fast(s, 1000003),
           [_STRINGS], _want("fast_1000003")),
    OpCase("StringToHashBucketStrong",
           lambda s: tf.strings.to_hash_bucket_strong(s, 1000003, _KEY), [_STRINGS],
           _want("strong_1000003")),
    OpCase("StringToHashBucket", lambda s: tf.string_to_hash_bucket(s, 7), [_STRINGS],
           _want("legacy_7")),
    OpCase("SparseCross", _cross,
           [np.array([[0, 0], [1, 0], [1, 1], [2, 0]], np.int64),
            np.array([b"a", b"b", b"c", b"dd"], dtype=object), np.array([3, 2], np.int64),
            np.array([[b"f"], [b"g"], [b"hij"]], dtype=object)],
           None, placeholders=False, exact_static_shape=False),
]
EXEMPT = {op: "tests/lookup/test_lookup.py" for op in lookup_ops.OP_TYPES}
