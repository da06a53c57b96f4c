"""One feature-column model, built the same way by TensorFlow (make_fc_expected.py) and by
tensorweave (test_feature_column.py): `build(tf, vocab_file)` -> (input_layer, linear_model)."""

import numpy as np

FEATURES = {
    "age": np.array([23.0, 51.0, 37.0, 70.0], np.float32),
    "pos": np.array([[0.5, -1.0], [2.0, 0.0], [1.5, 1.5], [-3.0, 4.0]], np.float32),
    "occupation": np.array([["doctor"], ["nurse"], ["pilot"], [""]], object),
    "color": np.array([["red", "blue"], ["green", ""], ["", ""], ["mauve", "red"]], object),
    "city": np.array([["paris"], ["rome"], ["oslo"], ["paris"]], object),
    "code": np.array([[3], [0], [5], [-1]], np.int64),
    "zip": np.array([[75001], [10001], [-1], [94105]], np.int64),
}


def columns(tf, vocab_file):
    fc = tf.feature_column
    age = fc.numeric_column("age")
    pos = fc.numeric_column("pos", shape=(2,))
    age_b = fc.bucketized_column(age, [30.0, 40.0, 60.0])
    occ = fc.categorical_column_with_vocabulary_list(
        "occupation", ["doctor", "nurse", "teacher"], num_oov_buckets=2)
    color = fc.categorical_column_with_vocabulary_file("color", vocab_file, vocabulary_size=3)
    city = fc.categorical_column_with_hash_bucket("city", 10)
    code = fc.categorical_column_with_identity("code", 6)
    zipc = fc.categorical_column_with_hash_bucket("zip", 7, dtype=tf.int64)
    cross = fc.crossed_column(["city", age_b], 13)
    dense = [age, pos, age_b, fc.indicator_column(occ), fc.indicator_column(color),
             fc.embedding_column(city, 3), fc.embedding_column(code, 2, combiner="sum"),
             fc.indicator_column(zipc), fc.embedding_column(cross, 4, combiner="sqrtn")]
    linear = [age, pos, age_b, occ, color, city, code, zipc, cross]
    return dense, linear


def value_for(name, shape):
    """A deterministic value for a variable, from its name."""
    seed = sum(ord(c) for c in name)
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + seed) * 0.5).reshape(shape).astype(np.float32)


def build(tf, vocab_file):
    fc = tf.feature_column
    dense, linear = columns(tf, vocab_file)
    feats = {k: tf.constant(v) for k, v in FEATURES.items()}
    net = fc.input_layer(feats, dense)
    logits = fc.linear_model(feats, linear, units=2)
    return net, logits


VOCAB = "red\ngreen\nblue\n"
