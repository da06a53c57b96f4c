"""`tf.contrib`: the TF1 contrib pieces TF1 scripts commonly use (`tf.contrib.layers`,
`tf.contrib.rnn`, the global-step helpers of `tf.contrib.framework`)."""

from tensorweave.contrib import distributions, framework, layers, lookup, rnn, signal

__all__ = ["distributions", "framework", "layers", "lookup", "rnn", "signal"]
