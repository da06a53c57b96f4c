"""Writes fc_more_expected.npz with the TensorFlow peer: the variable names and shapes of
fc_more_model's input_layer and linear_model, their outputs once every variable holds
fc_more_model.value_for(name), and the columns' names. Run with
~/.cache/tensorweave-tf-peer/bin/python tests/feature_column/make_fc_more_expected.py"""

import os
import sys

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fc_more_model  # noqa: E402

v1 = tf.compat.v1


def main():
    v1.disable_eager_execution()
    dense, linear = fc_more_model.columns(v1)
    net, logits = fc_more_model.build(v1)
    variables = v1.global_variables()
    with v1.Session() as sess:
        sess.run([v1.global_variables_initializer(), v1.tables_initializer()])
        for v in variables:
            v.load(fc_more_model.value_for(v.op.name, v.shape.as_list()), sess)
        got_net, got_logits = sess.run([net, logits])
    np.savez(os.path.join(HERE, "fc_more_expected.npz"), net=got_net, logits=got_logits,
             names=np.array([v.op.name for v in variables]),
             shapes=np.array([str(v.shape.as_list()) for v in variables]),
             column_names=np.array([c.name for c in dense + linear]))


if __name__ == "__main__":
    main()
