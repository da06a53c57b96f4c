"""`tf.contrib`: the TF1 contrib pieces TF1 scripts commonly use (`tf.contrib.layers`,
`tf.contrib.slim`, `tf.contrib.seq2seq`, `tf.contrib.rnn`, `tf.contrib.framework`,
`tf.contrib.lookup`)."""

from tensorweave.contrib import (
    distributions,
    framework,
    layers,
    lookup,
    rnn,
    seq2seq,
    signal,
    slim,
)

__all__ = ["distributions", "framework", "layers", "lookup", "rnn", "seq2seq", "signal",
           "slim"]
