"""`tf.autograph`: `to_graph` and `experimental.do_not_convert` (framework/autograph.py says
what a runtime without a source converter can honestly do)."""

from tensorweave.autograph import experimental  # noqa: F401
from tensorweave.framework.autograph import do_not_convert, to_graph  # noqa: F401
