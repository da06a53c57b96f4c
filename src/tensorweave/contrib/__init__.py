"""`tf.contrib`: the TF1 contrib pieces TF1 scripts commonly use (`tf.contrib.layers`,
`tf.contrib.slim`, `tf.contrib.seq2seq`, `tf.contrib.rnn`, `tf.contrib.framework`,
`tf.contrib.lookup`, `tf.contrib.compiler.jit`)."""

from tensorweave.contrib import (
    compiler,
    distributions,
    framework,
    layers,
    lookup,
    rnn,
    seq2seq,
    signal,
    slim,
)

__all__ = ["compiler", "distributions", "framework", "layers", "lookup", "rnn", "seq2seq", "signal",
           "slim"]
