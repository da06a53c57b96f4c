"""Weighted categorical and shared embedding columns, built the same way by TensorFlow
(make_fc_more_expected.py) and by tensorweave (test_feature_column_more.py):
`build(tf)` -> (input_layer, linear_model)."""

import numpy as np

FEATURES = {
    "item": np.array([[1, 2, -1], [3, -1, -1], [0, 4, 2], [-1, -1, -1]], np.int64),
    # 0 means "no weight" for a dense weight input; a negative weight is pruned by a mean or
    # sqrtn embedding lookup (safe_embedding_lookup_sparse), kept by a sum and an indicator
    "item_w": np.array([[0.5, 2.0, 0.0], [1.5, 0.0, 0.0], [1.0, -3.0, 0.25], [0.0, 0.0, 0.0]],
                       np.float32),
    "liked": np.array([[4], [4], [1], [0]], np.int64),
    "other": np.array([[2, 2], [0, -1], [-1, -1], [3, 1]], np.int64),
    "word": np.array([["b", "a"], ["c", ""], ["a", "zz"], ["", ""]], object),
    "word_w": np.array([[2.0, 1.0], [3.0, 0.0], [0.5, 4.0], [0.0, 0.0]], np.float32),
}


def columns(tf):
    fc = tf.feature_column
    item = fc.categorical_column_with_identity("item", 5)
    liked = fc.categorical_column_with_identity("liked", 5)
    item_w = fc.weighted_categorical_column(item, "item_w")
    word = fc.categorical_column_with_vocabulary_list("word", ["a", "b", "c"],
                                                      num_oov_buckets=1)
    word_w = fc.weighted_categorical_column(word, "word_w")
    shared = fc.shared_embedding_columns([liked, item_w], 3, combiner="sum")
    other = fc.categorical_column_with_identity("other", 5)
    shared_mean = fc.shared_embedding_columns([item, other], 2,
                                              shared_embedding_collection_name="items_mean")
    dense = shared + shared_mean + [
        fc.indicator_column(item_w), fc.indicator_column(word_w),
        fc.embedding_column(word_w, 2, combiner="sqrtn"),
        fc.embedding_column(item_w, 4, combiner="mean")]
    linear = [item_w, word_w, liked]
    return dense, linear


def value_for(name, shape):
    """A deterministic value for a variable, from its name."""
    seed = sum(ord(c) for c in name)
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + seed) * 0.5).reshape(shape).astype(np.float32)


def build(tf):
    fc = tf.feature_column
    dense, linear = columns(tf)
    feats = {k: tf.constant(v) for k, v in FEATURES.items()}
    net = fc.input_layer(feats, dense)
    logits = fc.linear_model(feats, linear, units=2, sparse_combiner="mean")
    return net, logits
