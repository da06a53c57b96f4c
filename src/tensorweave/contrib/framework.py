"""`tf.contrib.framework`: the global-step helpers TF1 scripts reached for there before they
moved to `tf.train` (`get_or_create_global_step`, `get_global_step`, `create_global_step`,
`assert_global_step`, the same functions as `tf.train`'s), `nest`, and the checkpoint
readers."""

from tensorweave import nest  # noqa: F401
from tensorweave.ops.variable_scope import (  # noqa: F401
    assert_global_step,
    create_global_step,
    get_global_step,
    get_or_create_global_step,
)
from tensorweave.training.checkpoint_utils import (  # noqa: F401
    list_variables,
    load_checkpoint,
    load_variable,
)

__all__ = ["assert_global_step", "create_global_step", "get_global_step",
           "get_or_create_global_step", "list_variables", "load_checkpoint", "load_variable",
           "nest"]
