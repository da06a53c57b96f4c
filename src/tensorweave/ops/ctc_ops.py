"""Connectionist temporal classification (TF's ctc_ops.py): the `CTCLoss`,
`CTCGreedyDecoder` and `CTCBeamSearchDecoder` op types and the TF1 wrappers
`tf.nn.ctc_loss`, `ctc_loss_v2`, `ctc_greedy_decoder`, `ctc_beam_search_decoder` and
`ctc_unique_labels`.

Inputs are unnormalized logits `[max_time, batch, num_classes]` (time-major); the blank is
the last class. `CTCLoss` outputs the per-sequence loss and, from the same forward-backward
pass, its gradient with respect to the logits; the registered gradient (autodiff/ctc_grad.py)
scales that second output, as TF's does. Kernels: runtime/kernels/cpu/ctc.py (log space).
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import math_ops
from tensorweave.ops.apply import apply_op
from tensorweave.ops.array_ops import shape as shape_of
from tensorweave.ops.creation_ops import sequence_mask
from tensorweave.ops.functional_ops import map_fn
from tensorweave.ops.gather_ops import gather_nd, where_v2
from tensorweave.ops.joining_ops import concat, pad, stack, transpose
from tensorweave.ops.registry import register_op
from tensorweave.ops.sparse_tensor import SparseTensor
from tensorweave.shapes import TensorShape


def _rank(ctx, i: int, rank: int, what: str) -> TensorShape:
    shape = ctx.input_shape(i)
    if shape.ndims is not None and shape.ndims != rank:
        raise ctx.fail(f"Shape must be rank {rank} but is rank {shape.ndims} for {what}")
    return shape if shape.ndims is not None else TensorShape([None] * rank)


def _batch(ctx, inputs: TensorShape, seq: TensorShape):
    try:
        return inputs[1].merge_with(seq[0])
    except ValueError:
        raise ctx.fail(f"Dimensions must be equal, but are {inputs[1]} and {seq[0]} "
                       f"(batch of inputs and of sequence_length)") from None


def _ctc_loss_shape(ctx):
    inputs = _rank(ctx, 0, 3, "inputs")
    _rank(ctx, 1, 2, "labels_indices")
    _rank(ctx, 2, 1, "labels_values")
    seq = _rank(ctx, 3, 1, "sequence_length")
    batch = _batch(ctx, inputs, seq)
    return [TensorShape([batch]), TensorShape([inputs[0], batch, inputs[2]])]


def _decoded(ctx, paths: int, with_log_prob: int):
    inputs = _rank(ctx, 0, 3, "inputs")
    batch = _batch(ctx, inputs, _rank(ctx, 1, 1, "sequence_length"))
    sparse = ([TensorShape([None, 2])] * paths + [TensorShape([None])] * paths +
              [TensorShape([2])] * paths)
    return sparse + [TensorShape([batch, with_log_prob])]


register_op("CTCLoss",
            inputs=["inputs: T", "labels_indices: int64", "labels_values: int32",
                    "sequence_length: int32"],
            outputs=["loss: T", "gradient: T"],
            attrs=["preprocess_collapse_repeated: bool = false",
                   "ctc_merge_repeated: bool = true",
                   "ignore_longer_outputs_than_inputs: bool = false",
                   "T: {float, double} = DT_FLOAT"],
            shape_fn=_ctc_loss_shape)
register_op("CTCGreedyDecoder", inputs=["inputs: T", "sequence_length: int32"],
            outputs=["decoded_indices: int64", "decoded_values: int64",
                     "decoded_shape: int64", "log_probability: T"],
            attrs=["merge_repeated: bool = false", "blank_index: int = -1",
                   "T: {float, double} = DT_FLOAT"],
            shape_fn=lambda ctx: _decoded(ctx, 1, 1))
register_op("CTCBeamSearchDecoder", inputs=["inputs: T", "sequence_length: int32"],
            outputs=["decoded_indices: top_paths * int64", "decoded_values: top_paths * int64",
                     "decoded_shape: top_paths * int64", "log_probability: T"],
            attrs=["beam_width: int >= 1", "top_paths: int >= 1",
                   "merge_repeated: bool = true", "T: {float, double} = DT_FLOAT"],
            shape_fn=lambda ctx: _decoded(ctx, ctx.attr("top_paths"), ctx.attr("top_paths")))


# -- Python API --------------------------------------------------------------------------------
def ctc_loss(labels, inputs=None, sequence_length=None, preprocess_collapse_repeated=False,
             ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False,
             time_major=True, logits=None):
    """TF1 `tf.nn.ctc_loss`: the negative log-probability of each `labels` sequence (a
    SparseTensor of int32 class ids, blank excluded) under the logits `inputs`
    (`[max_time, batch, num_classes]`, or batch-major when not `time_major`), over the first
    `sequence_length[b]` steps. A `[batch]` tensor.

    Raises:
      TypeError: `labels` is not a SparseTensor.
      ValueError: both or neither of `inputs` and `logits`.
    """
    if not isinstance(labels, SparseTensor):
        raise TypeError("Expected labels (first argument) to be a SparseTensor")
    if (inputs is None) == (logits is None):
        raise ValueError("Exactly one of `inputs` and `logits` (its new name) is given")
    inputs = convert_to_tensor(inputs if logits is None else logits, name="inputs")
    if not time_major:
        inputs = transpose(inputs, [1, 0, 2])
    loss, _ = apply_op("CTCLoss", inputs, labels.indices,
                       math_ops.cast(labels.values, dtypes.int32),
                       convert_to_tensor(sequence_length, dtype=dtypes.int32),
                       preprocess_collapse_repeated=preprocess_collapse_repeated,
                       ctc_merge_repeated=ctc_merge_repeated,
                       ignore_longer_outputs_than_inputs=ignore_longer_outputs_than_inputs)
    return loss


def _blank_last(logits, blank_index):
    """`logits` with class `blank_index` moved to the end (TF's rotation in ctc_loss_v2)."""
    return concat([logits[:, :, :blank_index], logits[:, :, blank_index + 1:],
                   logits[:, :, blank_index:blank_index + 1]], axis=2)


def _dense_to_sparse(labels, label_length):
    """The padded `[batch, max_label]` labels as a SparseTensor of the first
    `label_length[b]` entries of each row."""
    mask = sequence_mask(label_length, shape_of(labels)[1])
    indices = apply_op("Where", mask)
    return SparseTensor(indices, gather_nd(labels, indices),
                        math_ops.cast(shape_of(labels), dtypes.int64))


def ctc_loss_v2(labels, logits, label_length, logit_length, logits_time_major=True,
                unique=None, blank_index=None, name=None):
    """`tf.nn.ctc_loss_v2`: CTC loss with the blank at `blank_index`. `labels` a
    SparseTensor (then `blank_index` is required), or a dense `[batch, max_label]` tensor
    with `label_length` (`blank_index` default 0). `unique` (a speed-up for TF's dense
    implementation) does not change the result and is not needed here.

    Raises:
      ValueError: a SparseTensor `labels` without `blank_index`.
    """
    with name_scope(name, "ctc_loss_dense" if not isinstance(labels, SparseTensor)
                    else "ctc_loss", [labels, logits]):
        logits = convert_to_tensor(logits, name="logits")
        if isinstance(labels, SparseTensor):
            if blank_index is None:
                raise ValueError("Argument `blank_index` must be provided when labels is a "
                                 "SparseTensor.")
        else:
            labels = _dense_to_sparse(convert_to_tensor(labels, name="labels"),
                                      convert_to_tensor(label_length, name="label_length"))
            blank_index = 0 if blank_index is None else blank_index
        return _loss_with_blank(labels, logits, logit_length, logits_time_major, blank_index)


def _loss_with_blank(labels, logits, logit_length, time_major, blank_index):
    num_classes = logits.shape[2]
    if num_classes is None:
        raise ValueError("ctc_loss_v2 needs the number of classes (logits' last dimension) "
                         "known at graph construction")
    if blank_index < 0:
        blank_index += num_classes
    if blank_index != num_classes - 1:
        logits = _blank_last(logits, blank_index)
        values = where_v2(labels.values < blank_index, labels.values,
                                    labels.values - 1)
        labels = SparseTensor(labels.indices, values, labels.dense_shape)
    return ctc_loss(labels, logits, logit_length, time_major=time_major)


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """The best path of each sequence: at each step the most likely class, repeated classes
    merged (when `merge_repeated`), blanks dropped. Returns `([SparseTensor], neg_sum_logits)`
    with `neg_sum_logits` `[batch, 1]`, the negated sum of the chosen logits."""
    attrs = {} if blank_index is None else {"blank_index": blank_index}
    ix, val, shape, log_prob = apply_op("CTCGreedyDecoder", inputs,
                                        convert_to_tensor(sequence_length, dtype=dtypes.int32),
                                        merge_repeated=merge_repeated, **attrs)
    return [SparseTensor(ix, val, shape)], log_prob


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1,
                            merge_repeated=True):
    """TF's prefix beam search over the logits: the `top_paths` most likely label sequences
    of each batch entry, found with `beam_width` beams. Returns `(decoded, log_probabilities)`:
    a list of `top_paths` SparseTensors and a `[batch, top_paths]` tensor."""
    ix, val, shape, log_prob = apply_op(
        "CTCBeamSearchDecoder", inputs, convert_to_tensor(sequence_length, dtype=dtypes.int32),
        beam_width=beam_width, top_paths=top_paths, merge_repeated=merge_repeated)
    return [SparseTensor(i, v, s) for i, v, s in zip(ix, val, shape)], log_prob


def ctc_beam_search_decoder_v2(inputs, sequence_length, beam_width=100, top_paths=1):
    """`tf.nn.ctc_beam_search_decoder` of TF2: merge_repeated is False."""
    return ctc_beam_search_decoder(inputs, sequence_length, beam_width, top_paths,
                                   merge_repeated=False)


def ctc_unique_labels(labels, name=None):
    """Per row of the padded `[batch, max_label]` labels, its unique labels in order of first
    appearance (int64, padded with 0) and each label's index among them (int32)."""
    with name_scope(name, "ctc_unique_labels", [labels]):
        labels = convert_to_tensor(labels, name="labels")

        def unique(x):
            y, idx = apply_op("Unique", x)
            extra = shape_of(idx)[0] - shape_of(y)[0]
            y = pad(y, stack([stack([0, extra])]))
            return [math_ops.cast(y, dtypes.int64), idx]

        return map_fn(unique, labels, dtype=[dtypes.int64, dtypes.int32])


__all__ = ["ctc_loss", "ctc_loss_v2", "ctc_greedy_decoder", "ctc_beam_search_decoder",
           "ctc_beam_search_decoder_v2", "ctc_unique_labels"]
