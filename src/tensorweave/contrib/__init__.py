"""`tf.contrib`: the TF1 contrib pieces TF1 scripts commonly use (`tf.contrib.layers`,
`tf.contrib.rnn`, the global-step helpers of `tf.contrib.framework`)."""

from tensorweave.contrib import framework, layers, lookup, rnn, signal

__all__ = ["framework", "layers", "lookup", "rnn", "signal"]
