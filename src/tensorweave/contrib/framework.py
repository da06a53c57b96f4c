"""`tf.contrib.framework`: `nest`."""

from tensorweave import nest  # noqa: F401
