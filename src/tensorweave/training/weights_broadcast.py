"""Weights broadcasting for losses and metrics (TF's weights_broadcast_ops and
confusion_matrix.remove_squeezable_dimensions).

A weight tensor broadcasts to values when it is a scalar, or has the values' rank with each
dimension 1 or equal to the values' one. The check is static when shapes are known (a NoOp
stands for it) and an Assert op otherwise.
"""

from __future__ import annotations

from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import math_ops, reduction_ops
from tensorweave.ops.shape_inference import constant_value


def _static_value(tensor):
    value = constant_value(tensor)
    return None if value is None else value.tolist()


def assert_broadcastable(weights, values):
    """An op that checks `weights` broadcasts to `values` (a scalar, or the same rank with
    each dim 1 or equal); a NoOp when the shapes are known now.

    Raises:
      ValueError: statically known shapes that do not broadcast.
    """
    from tensorweave.ops import array_ops

    with name_scope(None, "assert_broadcastable", [weights, values]) as scope:
        with name_scope(None, "weights", [weights]) as weights_scope:
            weights = convert_to_tensor(weights, name=weights_scope)
            w_shape = array_ops.shape(weights, name="shape")
            w_rank = array_ops.rank(weights, name="rank")
        with name_scope(None, "values", [values]) as values_scope:
            values = convert_to_tensor(values, name=values_scope)
            v_shape = array_ops.shape(values, name="shape")
            v_rank = array_ops.rank(values, name="rank")
        static = _static_check(weights, values, w_shape, w_rank, v_shape, v_rank)
        if static is not None:
            return static
        return _dynamic_check(scope, weights, values, w_shape, w_rank, v_shape, v_rank)


def _static_check(weights, values, w_shape, w_rank, v_shape, v_rank):
    from tensorweave.ops.control_flow_ops import no_op

    w_rank_v, v_rank_v = _static_value(w_rank), _static_value(v_rank)
    if w_rank_v is None or v_rank_v is None:
        return None
    if w_rank_v == 0:
        return no_op(name="static_scalar_check_success")
    if w_rank_v != v_rank_v:
        raise ValueError(f"weights can not be broadcast to values. values.rank={v_rank_v}. "
                         f"weights.rank={w_rank_v}. values.shape={values.shape}. "
                         f"weights.shape={weights.shape}.")
    w_dims, v_dims = _static_value(w_shape), _static_value(v_shape)
    if w_dims is None or v_dims is None:
        return None
    for i, (w, v) in enumerate(zip(w_dims, v_dims)):
        if w not in (1, v):
            raise ValueError(f"weights can not be broadcast to values. Mismatch at dim {i}. "
                             f"values.shape={v_dims}, weights.shape={w_dims}.")
    return no_op(name="static_dims_check_success")


def _dynamic_check(scope, weights, values, w_shape, w_rank, v_shape, v_rank):
    from tensorweave.ops.control_flow_ops import Assert, cond

    is_scalar = math_ops.equal(0, w_rank, name="is_scalar")

    def valid_nonscalar():
        with name_scope(None, "has_valid_nonscalar_shape"):
            same_rank = math_ops.equal(v_rank, w_rank, name="is_same_rank")

            def valid_dims():
                ok = math_ops.logical_or(math_ops.equal(w_shape, v_shape),
                                         math_ops.equal(w_shape, 1))
                return reduction_ops.reduce_all(ok, name="has_valid_dims")

            return cond(same_rank, valid_dims, lambda: same_rank)

    is_valid = cond(is_scalar, lambda: is_scalar, valid_nonscalar, name="is_valid_shape")
    data = ["weights can not be broadcast to values.", "weights.shape=", weights.name,
            w_shape, "values.shape=", values.name, v_shape, "is_scalar=", is_scalar]
    return Assert(is_valid, data, name=scope)


def broadcast_weights(weights, values):
    """`weights` broadcast to the shape of `values` (with the broadcast check).

    Raises:
      ValueError: statically known shapes that do not broadcast.
    """
    from tensorweave.ops import creation_ops

    with name_scope(None, "broadcast_weights", [weights, values]) as scope:
        values = convert_to_tensor(values, name="values")
        weights = convert_to_tensor(weights, dtype=values.dtype.base_dtype, name="weights")
        w_shape, v_shape = weights.shape, values.shape
        if w_shape.is_fully_defined() and v_shape.is_fully_defined() and \
                w_shape.is_compatible_with(v_shape):
            return weights
        with control_dependencies([assert_broadcastable(weights, values)]):
            return math_ops.multiply(weights, creation_ops.ones_like(values), name=scope)


def remove_squeezable_dimensions(labels, predictions, expected_rank_diff=0, name=None):
    """(labels, predictions) with a trailing size-1 axis squeezed from whichever has one rank
    too many (rank(predictions) - rank(labels) should be `expected_rank_diff`)."""
    from tensorweave.ops import array_ops
    from tensorweave.ops.control_flow_ops import cond

    with name_scope(name, "remove_squeezable_dimensions", [labels, predictions]):
        predictions = convert_to_tensor(predictions)
        labels = convert_to_tensor(labels)
        p_shape, l_shape = predictions.shape, labels.shape
        p_rank, l_rank = p_shape.ndims, l_shape.ndims
        if p_rank is not None and l_rank is not None:
            diff = p_rank - l_rank
            if diff == expected_rank_diff + 1 and p_shape.dims[-1].is_compatible_with(1):
                predictions = array_ops.squeeze(predictions, [-1])
            elif diff == expected_rank_diff - 1 and l_shape.dims[-1].is_compatible_with(1):
                labels = array_ops.squeeze(labels, [-1])
            return labels, predictions
        rank_diff = array_ops.rank(predictions) - array_ops.rank(labels)
        if p_rank is None or p_shape.dims[-1].is_compatible_with(1):
            p = predictions
            predictions = cond(math_ops.equal(expected_rank_diff + 1, rank_diff),
                               lambda: array_ops.squeeze(p, [-1]), lambda: p)
        if l_rank is None or l_shape.dims[-1].is_compatible_with(1):
            lab = labels
            labels = cond(math_ops.equal(expected_rank_diff - 1, rank_diff),
                          lambda: array_ops.squeeze(lab, [-1]), lambda: lab)
        return labels, predictions


__all__ = ["assert_broadcastable", "broadcast_weights", "remove_squeezable_dimensions"]
