"""`tf.debugging`: assertions and numerics checks (TF1.13+ aliases)."""

from tensorweave.ops.array_ops import check_numerics
from tensorweave.ops.check_ops import *  # noqa: F403
from tensorweave.ops.control_flow_ops import Assert
from tensorweave.ops.math_ops import is_finite, is_inf, is_nan
