"""`tf.contrib`: the TF1 contrib pieces TF1 scripts commonly use (`tf.contrib.layers`)."""

from tensorweave.contrib import layers

__all__ = ["layers"]
