"""`tf.autograph.experimental`."""

from tensorweave.framework.autograph import do_not_convert  # noqa: F401
