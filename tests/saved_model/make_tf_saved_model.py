"""Writes `tf_saved_model/` (a TF1-style SavedModel) and `tf_saved_model.expected.npz` with the
TensorFlow peer: `~/.cache/tensorweave-tf-peer/bin/python tests/saved_model/make_tf_saved_model.py`.

The model: logits = x @ W + b, probs = softmax(logits), through three signatures — predict
(`serving_default`: x → probs, logits), classify (serialized tf.Example → classes, scores)
and regress (serialized tf.Example → outputs = sum of logits). An asset file (`vocab.txt`)
is fed to the main op, which stores its path in a local string variable (`asset_path`).
"""

import os
import shutil

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tf_saved_model")
X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)


def model(x):
    with v1.variable_scope("dense", reuse=v1.AUTO_REUSE):
        w = v1.get_variable("W", initializer=np.arange(12, dtype=np.float32).reshape(3, 4) / 10)
        b = v1.get_variable("b", initializer=np.array([0.1, -0.2, 0.3, 0.0], np.float32))
    return tf.matmul(x, w) + b


def main():
    v1.disable_v2_behavior()
    shutil.rmtree(OUT, ignore_errors=True)
    vocab = os.path.join(HERE, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("a\nb\nc\nd\n")
    with v1.Graph().as_default(), v1.Session() as sess:
        x = v1.placeholder(tf.float32, [None, 3], name="x")
        logits = model(x)
        probs = tf.nn.softmax(logits, name="probs")
        serialized = v1.placeholder(tf.string, [None], name="tf_example")
        feats = v1.parse_example(serialized, {"x": v1.FixedLenFeature([3], tf.float32)})
        ex_logits = model(feats["x"])
        scores = tf.nn.softmax(ex_logits, name="scores")
        classes = tf.tile(tf.constant([["a", "b", "c", "d"]]), [tf.shape(scores)[0], 1])
        regress = tf.reduce_sum(ex_logits, axis=1, keepdims=True, name="regress")
        asset = tf.constant(vocab, name="asset_filepath")
        v1.add_to_collection(v1.GraphKeys.ASSET_FILEPATHS, asset)
        path_var = v1.Variable(asset, trainable=False, name="asset_path",
                               collections=[v1.GraphKeys.LOCAL_VARIABLES])
        sess.run(v1.global_variables_initializer())
        u = v1.saved_model.utils.build_tensor_info
        sd = v1.saved_model.signature_def_utils
        builder = v1.saved_model.builder.SavedModelBuilder(OUT)
        builder.add_meta_graph_and_variables(
            sess, [v1.saved_model.tag_constants.SERVING],
            signature_def_map={
                "serving_default": sd.predict_signature_def(
                    {"x": x}, {"probs": probs, "logits": logits}),
                "classify": sd.classification_signature_def(serialized, classes, scores),
                "regress": sd.regression_signature_def(serialized, regress),
                "asset": sd.build_signature_def(
                    {}, {"path": u(path_var.value())}, "tensorflow/serving/predict"),
            },
            assets_collection=v1.get_collection(v1.GraphKeys.ASSET_FILEPATHS),
            main_op=v1.local_variables_initializer())
        builder.save()
        examples = [tf.train.Example(features=tf.train.Features(feature={
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=row))})).SerializeToString()
            for row in X]
        p, lg, sc, rg = sess.run([probs, logits, scores, regress],
                                 {x: X, serialized: examples})
    np.savez(os.path.join(HERE, "tf_saved_model.expected.npz"), x=X, probs=p, logits=lg,
             scores=sc, regress=rg)
    os.remove(vocab)


if __name__ == "__main__":
    main()
