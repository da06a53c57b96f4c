"""Losses over a sample of the classes, for large vocabularies: `tf.nn.nce_loss` and
`tf.nn.sampled_softmax_loss` (TF's nn_impl.py), built from other families' ops.

Only the rows of `weights` and `biases` of the true and sampled classes are gathered (one
`embedding_lookup` each), so their gradients are `IndexedSlices` of those rows and an
optimizer updates them sparsely: no op of the loss or its gradient is vocabulary-sized.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, candidate_sampling_ops, creation_ops, math_ops
from tensorweave.ops.embedding_ops import embedding_lookup
from tensorweave.ops.joining_ops import concat, stack
from tensorweave.ops.math_matmul_ops import matmul
from tensorweave.ops.slicing_ops import slice as slice_


def _sum_rows(x):
    """Row sums as a matmul with a ones column (TF's _sum_rows: faster gradients than Sum)."""
    cols = array_ops.shape(x)[1]
    ones = creation_ops.ones(stack([cols, 1]), x.dtype)
    return array_ops.reshape(matmul(x, ones), [-1])


def _as_shards(weights) -> list:
    """`weights` as a list of shards (a PartitionedVariable or list, or one tensor)."""
    if isinstance(weights, (list, tuple)):
        return list(weights)
    if hasattr(weights, "_get_variable_list"):
        return list(weights)
    return [weights]


def _lookup(params, ids, dtype, strategy):
    out = embedding_lookup(params, ids, partition_strategy=strategy)
    return out if out.dtype.base_dtype == dtype else math_ops.cast(out, dtype)


def _accidental_hit_mask(labels, sampled, num_true, num_sampled, dtype):
    """-FLT_MAX at [row, j] where sampled[j] is one of row's true classes, else 0."""
    from tensorweave.ops.parsing_ops import sparse_to_dense

    indices, ids, weights = candidate_sampling_ops.compute_accidental_hits(
        labels, sampled, num_true=num_true)
    rows = array_ops.reshape(indices, [-1, 1])
    cols = array_ops.reshape(math_ops.cast(ids, dtypes.int32), [-1, 1])
    sparse_indices = concat([rows, cols], 1, name="sparse_indices")
    shape = concat([array_ops.shape(labels)[:1], array_ops.expand_dims(num_sampled, 0)], 0)
    if weights.dtype.base_dtype != dtype:
        weights = math_ops.cast(weights, dtype)
    return sparse_to_dense(sparse_indices, shape, weights, default_value=0.0,
                           validate_indices=False)


def compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                           num_true=1, sampled_values=None, subtract_log_q=True,
                           remove_accidental_hits=False, partition_strategy="mod", name=None,
                           seed=None):
    """Logits and labels of the true and sampled classes (TF's _compute_sampled_logits).

    Args:
      weights: [num_classes, dim] (or a list of shards), biases: [num_classes].
      labels: [batch, num_true] class ids; inputs: [batch, dim].
      sampled_values: a (sampled, true_expected_count, sampled_expected_count) triple from
        a candidate sampler; default: log_uniform_candidate_sampler(unique=True).
      subtract_log_q: subtract log(expected count) from each logit (the "log Q" correction).
      remove_accidental_hits: push a sampled class that is also a true class of its row to
        -FLT_MAX.
    Returns:
      (out_logits, out_labels), both [batch, num_true + num_sampled].
    """
    shards = _as_shards(weights)
    with name_scope(name, "compute_sampled_logits", shards + [biases, inputs, labels]):
        labels = convert_to_tensor(labels, name="labels")
        inputs = convert_to_tensor(inputs, name="inputs")
        if labels.dtype.base_dtype != dtypes.int64:
            labels = math_ops.cast(labels, dtypes.int64)
        labels_flat = array_ops.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = candidate_sampling_ops.log_uniform_candidate_sampler(
                true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True,
                range_max=num_classes, seed=seed)
        sampled, true_expected_count, sampled_expected_count = (
            array_ops.stop_gradient(s) for s in sampled_values)
        sampled = math_ops.cast(sampled, dtypes.int64)
        all_ids = concat([labels_flat, sampled], 0)
        dtype = inputs.dtype.base_dtype
        all_w = _lookup(shards, all_ids, dtype, partition_strategy)
        true_w = slice_(all_w, [0, 0], stack([array_ops.shape(labels_flat)[0], -1]))
        sampled_w = slice_(all_w, stack([array_ops.shape(labels_flat)[0], 0]), [-1, -1])
        sampled_logits = matmul(inputs, sampled_w, transpose_b=True)
        all_b = _lookup(biases, all_ids, dtype, partition_strategy)
        true_b = slice_(all_b, [0], array_ops.shape(labels_flat))
        sampled_b = slice_(all_b, array_ops.shape(labels_flat), [-1])
        dim = array_ops.shape(true_w)[1:2]
        true_w = array_ops.reshape(true_w, concat([[-1, num_true], dim], 0))
        row_wise_dots = math_ops.multiply(array_ops.expand_dims(inputs, 1), true_w)
        dots = array_ops.reshape(row_wise_dots, concat([[-1], dim], 0))
        true_logits = array_ops.reshape(_sum_rows(dots), [-1, num_true])
        true_logits += array_ops.reshape(true_b, [-1, num_true])
        sampled_logits += sampled_b
        if remove_accidental_hits:
            sampled_logits += _accidental_hit_mask(labels, sampled, num_true, num_sampled,
                                                   sampled_logits.dtype.base_dtype)
        if subtract_log_q:
            true_logits -= math_ops.log(true_expected_count)
            sampled_logits -= math_ops.log(sampled_expected_count)
        out_logits = concat([true_logits, sampled_logits], 1)
        out_labels = concat([creation_ops.ones_like(true_logits) / num_true,
                             creation_ops.zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
             name="nce_loss"):
    """Noise-contrastive estimation loss per example, [batch] (TF1 `tf.nn.nce_loss`): a
    sigmoid cross-entropy of the true classes against `num_sampled` sampled ones, each logit
    corrected by log(expected count)."""
    from tensorweave.ops.nn_losses import sigmoid_cross_entropy_with_logits

    logits, labels = compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name)
    losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                               name="sampled_losses")
    return _sum_rows(losses)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                         sampled_values=None, remove_accidental_hits=True,
                         partition_strategy="mod", name="sampled_softmax_loss", seed=None):
    """Softmax cross-entropy over the true and sampled classes, [batch] (TF1
    `tf.nn.sampled_softmax_loss`); accidental hits are removed by default."""
    from tensorweave.ops.nn_losses import softmax_cross_entropy_with_logits_v2

    logits, labels = compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name, seed=seed)
    labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)


__all__ = ["nce_loss", "sampled_softmax_loss"]
