"""`tf.profiler`: `profile` over a graph and its RunMetadata, `ProfileOptionBuilder`
(monitoring/tfprof.py)."""

from tensorweave.monitoring.tfprof import ProfileNode, profile  # noqa: F401
from tensorweave.monitoring.tfprof_options import ProfileOptionBuilder  # noqa: F401
