"""`tf.contrib`: the TF1 contrib pieces TF1 scripts commonly use (`tf.contrib.layers`,
`tf.contrib.rnn`)."""

from tensorweave.contrib import layers, lookup, rnn

__all__ = ["layers", "lookup", "rnn"]
