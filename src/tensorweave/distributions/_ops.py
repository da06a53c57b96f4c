"""The ops the distributions build from, gathered from their modules (one import site)."""

from tensorweave.framework.scopes import name_scope  # noqa: F401
from tensorweave.framework.tensor_conversion import convert_to_tensor  # noqa: F401
from tensorweave.ops.array_ops import expand_dims, identity, reshape, shape  # noqa: F401
from tensorweave.ops.creation_ops import ones, ones_like, zeros, zeros_like  # noqa: F401
from tensorweave.ops.diag_ops import matrix_band_part  # noqa: F401
from tensorweave.ops.gather_ops import one_hot, where, where_v2  # noqa: F401
from tensorweave.ops.joining_ops import (  # noqa: F401
    broadcast_dynamic_shape,
    broadcast_static_shape,
    concat,
    transpose,
)
from tensorweave.ops.math_matmul_ops import matmul  # noqa: F401
from tensorweave.ops.math_ops import (  # noqa: F401
    abs,
    cast,
    digamma,
    equal,
    erfc,
    exp,
    expm1,
    floor,
    greater,
    greater_equal,
    is_nan,
    less,
    less_equal,  # noqa: E402, F401
    lgamma,
    log,
    log1p,
    logical_or,
    maximum,
    minimum,
    rsqrt,
    sigmoid,
    sign,
    sqrt,
    square,
)
from tensorweave.ops.nn_losses import (  # noqa: F401
    sigmoid_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits,
)
from tensorweave.ops.nn_ops import log_softmax, softmax, softplus  # noqa: F401
from tensorweave.ops.random_ops import (  # noqa: F401
    multinomial,
    random_gamma,
    random_normal,
    random_poisson,
    random_uniform,
)
from tensorweave.ops.reduction_ops import argmax, reduce_logsumexp, reduce_sum  # noqa: F401
from tensorweave.ops.special_ops import betainc, igamma, igammac  # noqa: F401


def less_equal_one(df, like):
    """df <= 1, broadcast like `like`."""
    return less_equal(df * ones_like(like), 1.0)
