"""`tf.contrib`: the TF1 contrib pieces TF1 scripts commonly use (`tf.contrib.layers`,
`tf.contrib.slim`, `tf.contrib.seq2seq`, `tf.contrib.rnn`, `tf.contrib.framework`,
`tf.contrib.lookup`, `tf.contrib.distributions`, `tf.contrib.legacy_seq2seq`,
`tf.contrib.metrics`, `tf.contrib.training`, `tf.contrib.signal`, `tf.contrib.deprecated`'s
summaries)."""

from tensorweave.contrib import (
    deprecated,
    distributions,
    framework,
    layers,
    legacy_seq2seq,
    lookup,
    metrics,
    rnn,
    seq2seq,
    signal,
    slim,
    training,
)

__all__ = ["deprecated", "distributions", "framework", "layers", "legacy_seq2seq", "lookup",
           "metrics", "rnn", "seq2seq", "signal", "slim", "training"]
