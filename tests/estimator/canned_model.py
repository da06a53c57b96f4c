"""The canned models of the checkpoint interop test, and the TF-side graph that mirrors
them by hand (TF 2.21 has no tf.estimator): `logits_graph(tf, kind, features)` builds the
layers a canned estimator builds, under its variable names."""

import numpy as np

FEATURES = {"a": np.array([0.1, 0.7, 0.4, 0.9], np.float32),
            "b": np.array([1.5, -0.3, 0.2, 0.8], np.float32),
            "c": np.array(["hi", "lo", "lo", "mid"], object)}
LABELS = np.array([1, 0, 1, 1], np.int64)   # unbalanced: the logits bias always moves


def columns(fc, kind):
    num = [fc.numeric_column("a"), fc.numeric_column("b")]
    cat = fc.categorical_column_with_vocabulary_list("c", ["hi", "lo"], num_oov_buckets=1)
    if kind == "dnn":
        return num + [fc.embedding_column(cat, 2)]
    return num + [cat]


def logits_graph(tf, kind, features):
    """What DNNClassifier([4, 3]) / LinearClassifier computes for `features` (TF's names)."""
    fc = tf.feature_column
    if kind == "linear":
        with tf.variable_scope("linear"):
            return fc.linear_model(features, columns(fc, kind), units=1)
    with tf.variable_scope("dnn"):
        with tf.variable_scope("input_from_feature_columns"):
            net = fc.input_layer(features, columns(fc, kind))
        for i, n in enumerate([4, 3]):
            net = tf.layers.dense(net, n, activation=tf.nn.relu, name=f"hiddenlayer_{i}")
        return tf.layers.dense(net, 1, name="logits")
