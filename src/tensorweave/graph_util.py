"""`tf.graph_util`."""

from tensorweave.ops.importer import import_graph_def  # noqa: F401
from tensorweave.tools.freeze_graph import (  # noqa: F401
    convert_variables_to_constants,
    extract_sub_graph,
    remove_training_nodes,
)
