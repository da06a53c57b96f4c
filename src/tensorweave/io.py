"""`tf.io`."""

from tensorweave.training.graph_io import write_graph  # noqa: F401
