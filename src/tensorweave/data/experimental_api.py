"""`tf.data.experimental`."""

from tensorweave.data.dataset import AUTOTUNE  # noqa: F401
from tensorweave.data.transforms.experimental import ignore_errors  # noqa: F401
