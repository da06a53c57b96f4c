"""`tf.contrib.slim.metrics`: TF 1.15's slim re-exported `tf.contrib.metrics`; so does this
(one implementation, contrib/metrics.py)."""

from tensorweave.contrib.metrics import *  # noqa: F401, F403
from tensorweave.contrib.metrics import __all__  # noqa: F401
