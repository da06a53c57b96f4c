"""`tf.contrib.distributions`: the distributions of `tf.distributions` (TF 1.x contrib held
these and more; the others are not here)."""

from tensorweave.distributions import *  # noqa: F401, F403
from tensorweave.distributions import __all__  # noqa: F401
