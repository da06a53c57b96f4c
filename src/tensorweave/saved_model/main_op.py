"""`tf.saved_model.main_op`: the ops a SavedModel runs after restoring its variables."""

from __future__ import annotations

from tensorweave.framework.graph import GraphKeys, get_collection
from tensorweave.framework.scopes import control_dependencies
from tensorweave.ops.control_flow_ops import group
from tensorweave.ops.variables import local_variables_initializer


def main_op():
    """Initializes the local variables and the lookup tables (TF's `main_op`)."""
    return group(local_variables_initializer(), *get_collection(GraphKeys.TABLE_INITIALIZERS),
                 name="main_op")


def main_op_with_restore(restore_op_name):
    """`main_op` after the op named `restore_op_name` (a Saver's restore op) has run."""
    from tensorweave.framework.graph import get_default_graph

    restore = get_default_graph().get_operation_by_name(restore_op_name)
    with control_dependencies([restore]):
        return main_op()


__all__ = ["main_op", "main_op_with_restore"]
