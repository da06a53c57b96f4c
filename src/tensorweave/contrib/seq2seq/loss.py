"""`tf.contrib.seq2seq.sequence_loss` (TF 1.15): weighted cross-entropy of [batch, time,
classes] logits against [batch, time] targets, averaged or summed over time and/or batch."""

from __future__ import annotations

from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, reduction_ops


def _check(logits, targets, weights, average_across_timesteps, average_across_batch,
           sum_over_timesteps, sum_over_batch) -> None:
    if logits.shape.ndims != 3:
        raise ValueError("Logits must be a [batch_size x sequence_length x logits] tensor")
    if targets.shape.ndims != 2:
        raise ValueError("Targets must be a [batch_size x sequence_length] tensor")
    if weights.shape.ndims != 2:
        raise ValueError("Weights must be a [batch_size x sequence_length] tensor")
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError("average_across_timesteps and sum_over_timesteps cannot be set to "
                         "True at same time.")
    if average_across_batch and sum_over_batch:
        raise ValueError("average_across_batch and sum_over_batch cannot be set to True at "
                         "same time.")


def _reduce(crossent, weights, axis, by_count: bool):
    total = reduction_ops.reduce_sum(crossent, axis=axis)
    if by_count:
        size = math_ops.cast(reduction_ops.count_nonzero(weights, axis=axis), crossent.dtype)
    else:
        size = reduction_ops.reduce_sum(weights, axis=axis)
    return math_ops.div_no_nan(total, size)


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, sum_over_timesteps=False, sum_over_batch=False,
                  softmax_loss_function=None, name=None):
    """Cross-entropy per (batch, time) times `weights`; averaging divides by the summed
    weights, summing by the count of non-zero weights. Returns a scalar, a [batch] or a
    [time] tensor, or [batch, time] with every reduction off.

    Raises:
      ValueError: wrong ranks, or averaging and summing over the same axis.
    """
    from tensorweave.ops import nn_losses as nn_ops

    logits, targets = convert_to_tensor(logits), convert_to_tensor(targets)
    weights = convert_to_tensor(weights)
    _check(logits, targets, weights, average_across_timesteps, average_across_batch,
           sum_over_timesteps, sum_over_batch)
    with name_scope(name, "sequence_loss", [logits, targets, weights]):
        num_classes = array_ops.shape(logits)[2]
        logits_flat = array_ops.reshape(logits, [-1, num_classes])
        targets = array_ops.reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=targets,
                                                                       logits=logits_flat)
        else:
            crossent = softmax_loss_function(labels=targets, logits=logits_flat)
        crossent = crossent * array_ops.reshape(math_ops.cast(weights, crossent.dtype), [-1])
        weights = math_ops.cast(weights, crossent.dtype)
        if average_across_timesteps and average_across_batch:
            return _reduce(crossent, weights, None, False)
        if sum_over_timesteps and sum_over_batch:
            return _reduce(crossent, weights, None, True)
        crossent = array_ops.reshape(crossent, array_ops.shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            return _reduce(crossent, weights, [0] if average_across_batch else [1], False)
        if sum_over_timesteps or sum_over_batch:
            return _reduce(crossent, weights, [0] if sum_over_batch else [1], True)
        return crossent
