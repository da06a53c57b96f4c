"""`tf.graph_util`."""

from tensorweave.framework.importer import import_graph_def  # noqa: F401
