"""`tf.contrib.framework` (TF 1.15): `arg_scope` / `add_arg_scope`, the variable helpers
(`model_variable`, `get_variables_to_restore`, `assign_from_checkpoint_fn`, ...), the
global-step helpers TF1 scripts reached for here before they moved to `tf.train`
(`get_or_create_global_step`, ..., the same functions as `tf.train`'s), `nest`, and the
checkpoint readers."""

from tensorweave import nest  # noqa: F401
from tensorweave.contrib.arg_scope import (  # noqa: F401
    add_arg_scope,
    arg_scope,
    arg_scope_func_key,
    arg_scoped_arguments,
    current_arg_scope,
    has_arg_scope,
)
from tensorweave.contrib.variables import (  # noqa: F401
    add_model_variable,
    assign_from_checkpoint,
    assign_from_checkpoint_fn,
    get_local_variables,
    get_model_variables,
    get_trainable_variables,
    get_unique_variable,
    get_variables,
    get_variables_by_name,
    get_variables_by_suffix,
    get_variables_to_restore,
    model_variable,
    variable,
)
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

__all__ = [
    "add_arg_scope", "add_model_variable", "arg_scope", "arg_scope_func_key",
    "arg_scoped_arguments", "assert_global_step", "assign_from_checkpoint",
    "assign_from_checkpoint_fn", "create_global_step", "current_arg_scope", "get_global_step",
    "get_local_variables", "get_model_variables", "get_or_create_global_step",
    "get_trainable_variables", "get_unique_variable", "get_variables", "get_variables_by_name",
    "get_variables_by_suffix", "get_variables_to_restore", "has_arg_scope", "list_variables",
    "load_checkpoint", "load_variable", "model_variable", "nest", "variable",
]
