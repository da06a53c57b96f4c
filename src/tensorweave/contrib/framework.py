"""`tf.contrib.framework`: the global-step helpers TF1 scripts reached for there before they
moved to `tf.train` (`get_or_create_global_step`, `get_global_step`, `create_global_step`,
`assert_global_step`) — the same functions as `tf.train`'s."""

from tensorweave.ops.variable_scope import (  # noqa: F401
    assert_global_step,
    create_global_step,
    get_global_step,
    get_or_create_global_step,
)

__all__ = ["assert_global_step", "create_global_step", "get_global_step",
           "get_or_create_global_step"]
