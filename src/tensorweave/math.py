"""`tf.math`: elementwise math, reductions, segment ops."""

from tensorweave.ops.math_matmul_ops import *  # noqa: F403
from tensorweave.ops.math_ops import *  # noqa: F403
from tensorweave.ops.reduction_ops import *  # noqa: F403
from tensorweave.ops.special_ops import *  # noqa: F403
from tensorweave.ops.nn_impl import zero_fraction  # noqa: F401
from tensorweave.ops.nn_norm import l2_normalize  # noqa: F401
from tensorweave.ops.nn_ops import (  # noqa: F401
    in_top_k, log_softmax, softmax, softplus, softsign, top_k,
)
