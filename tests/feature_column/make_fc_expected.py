"""Writes fc_expected.npz with the TensorFlow peer: the variable names and shapes of
fc_model's input_layer and linear_model, and their outputs once every variable holds
fc_model.value_for(name). Run with ~/.cache/tensorweave-tf-peer/bin/python."""

import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fc_model  # noqa: E402

v1 = tf.compat.v1


def main():
    v1.disable_eager_execution()
    vocab = os.path.join(tempfile.mkdtemp(), "colors.txt")
    with open(vocab, "w") as f:
        f.write(fc_model.VOCAB)
    net, logits = fc_model.build(v1, vocab)
    variables = v1.global_variables()
    with v1.Session() as sess:
        sess.run([v1.global_variables_initializer(), v1.tables_initializer()])
        for v in variables:
            v.load(fc_model.value_for(v.op.name, v.shape.as_list()), sess)
        got_net, got_logits = sess.run([net, logits])
    np.savez(os.path.join(HERE, "fc_expected.npz"), net=got_net, logits=got_logits,
             names=np.array([v.op.name for v in variables]),
             shapes=np.array([str(v.shape.as_list()) for v in variables]))


if __name__ == "__main__":
    main()
