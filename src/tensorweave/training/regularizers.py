"""Weight regularizers (TF1's `tf.contrib.layers` regularizers).

A regularizer is a function `weights -> scalar loss tensor (or None)`; pass it as
`kernel_regularizer=` to a layer or `regularizer=` to `get_variable`, and the loss lands in
REGULARIZATION_LOSSES (`tf.losses.get_regularization_loss()` sums them). Ops are named as
TF1 names them: `l2_regularizer(0.1)` on `dense/kernel` gives the Mul
`dense/kernel/Regularizer/l2_regularizer` with inputs `.../l2_regularizer/scale` and
`.../l2_regularizer/L2Loss`.
"""

from __future__ import annotations

import numbers

from tensorweave.framework.graph import GraphKeys, add_to_collection, get_collection
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor


def _check_scale(scale, what: str = "scale"):
    """None when the regularizer is disabled (scale 0), else the scale.

    Raises:
      ValueError: an integer scale, or a negative one.
    """
    if isinstance(scale, numbers.Integral):
        raise ValueError(f"{what} cannot be an integer: {scale}")
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale:g}.")
        if scale == 0.0:
            return None
    return scale


def _scale_tensor(scale, weights):
    return convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")


def l1_regularizer(scale, scope=None):
    """`weights -> scale * sum(|weights|)` (a Mul named `l1_regularizer`).

    Raises:
      ValueError: an integer or negative scale. A zero scale returns a no-op regularizer.
    """
    if _check_scale(scale) is None:
        return lambda _: None

    def l1(weights, name=None):
        from tensorweave.ops import math_ops, reduction_ops

        with name_scope(scope, "l1_regularizer", [weights]) as name:
            my_scale = _scale_tensor(scale, weights)
            return math_ops.multiply(
                my_scale, reduction_ops.reduce_sum(math_ops.abs(weights)), name=name)

    return l1


def l2_regularizer(scale, scope=None):
    """`weights -> scale * sum(weights ** 2) / 2` (`scale * tf.nn.l2_loss(weights)`, a Mul
    named `l2_regularizer`).

    Raises:
      ValueError: an integer or negative scale. A zero scale returns a no-op regularizer.
    """
    if _check_scale(scale) is None:
        return lambda _: None

    def l2(weights):
        from tensorweave.ops import math_ops, nn_ops

        with name_scope(scope, "l2_regularizer", [weights]) as name:
            my_scale = _scale_tensor(scale, weights)
            return math_ops.multiply(my_scale, nn_ops.l2_loss(weights), name=name)

    return l2


def sum_regularizer(regularizer_list, scope=None):
    """A regularizer adding the (non-None) results of `regularizer_list` (AddN named
    `sum_regularizer`); None when the list holds no regularizer."""
    regularizer_list = [r for r in regularizer_list if r is not None]
    if not regularizer_list:
        return None

    def sum_reg(weights):
        from tensorweave.ops.math_matmul_ops import add_n

        with name_scope(scope, "sum_regularizer", [weights]) as name:
            tensors = [t for t in (reg(weights) for reg in regularizer_list) if t is not None]
            return add_n(tensors, name=name) if tensors else None

    return sum_reg


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    """`l1_regularizer(scale_l1) + l2_regularizer(scale_l2)` (one of them when the other
    scale is 0).

    Raises:
      ValueError: an integer or negative scale.
    """
    for value, what in ((scale_l1, "scale_l1"), (scale_l2, "scale_l2")):
        if isinstance(value, numbers.Integral):
            raise ValueError(f"{what} cannot be an integer: {value}")
    scope = scope or "l1_l2_regularizer"
    if scale_l1 == 0.0:
        return l2_regularizer(scale_l2, scope)
    if scale_l2 == 0.0:
        return l1_regularizer(scale_l1, scope)
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope=scope)


def apply_regularization(regularizer, weights_list=None):
    """Sums `regularizer(w)` over `weights_list` (default: the WEIGHTS collection) into a
    tensor named `get_regularization_penalty`, added to REGULARIZATION_LOSSES.

    Raises:
      ValueError: no weights; a regularizer result that is not a scalar.
    """
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.math_matmul_ops import add_n

    if not weights_list:
        weights_list = get_collection(GraphKeys.WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [constant(0.0) if p is None else p for p in penalties]
        for p in penalties:
            if p.shape.ndims != 0:
                raise ValueError(f"regularizer must return a scalar Tensor instead of a "
                                 f"Tensor with rank {p.shape.ndims}.")
        summed = add_n(penalties, name=scope)
        add_to_collection(GraphKeys.REGULARIZATION_LOSSES, summed)
        return summed


__all__ = [
    "apply_regularization", "l1_l2_regularizer", "l1_regularizer", "l2_regularizer",
    "sum_regularizer",
]
