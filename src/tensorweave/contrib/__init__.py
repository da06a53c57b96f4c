"""`tf.contrib`: the TF1 contrib pieces TF1 scripts commonly use (`tf.contrib.layers`,
`tf.contrib.slim`, `tf.contrib.seq2seq`, `tf.contrib.rnn`, `tf.contrib.framework`,
`tf.contrib.lookup`)."""

from tensorweave.contrib import framework, layers, lookup, rnn, seq2seq, slim

__all__ = ["framework", "layers", "lookup", "rnn", "seq2seq", "slim"]
