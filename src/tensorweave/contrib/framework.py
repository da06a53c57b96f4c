"""`tf.contrib.framework`: `nest` and the checkpoint readers."""

from tensorweave import nest  # noqa: F401
from tensorweave.training.checkpoint_utils import (  # noqa: F401
    list_variables,
    load_checkpoint,
    load_variable,
)
