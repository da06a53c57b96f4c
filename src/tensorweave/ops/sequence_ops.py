"""ReverseSequence (TF's array_ops.cc) and the TF1 wrapper `reverse_sequence`: for each slice
`b` along `batch_dim`, reverse the first `seq_lengths[b]` entries along `seq_dim`; the rest
stay in place (what bidirectional RNNs use for padded batches).
"""

from __future__ import annotations

from tensorweave.ops.apply import apply_op
from tensorweave.ops.joining_ops import merge_dims, with_rank
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape


def _reverse_sequence_shape(ctx):
    """The input's shape, its batch dim merged with the length of `seq_lengths`."""
    lengths = with_rank(ctx, ctx.input_dims(1), 1)
    dims = ctx.input_dims(0)
    if dims is None:
        return TensorShape(None)
    seq_dim, batch_dim = ctx.attr("seq_dim"), ctx.attr("batch_dim")
    rank = len(dims)
    if batch_dim >= rank:
        raise ctx.fail(f"batch_dim must be < input rank: {batch_dim} vs. {rank}")
    if seq_dim >= rank:
        raise ctx.fail(f"seq_dim must be < input rank: {seq_dim} vs. {rank}")
    batch = merge_dims(ctx, (dims[batch_dim],), lengths)[0]
    return TensorShape(dims[:batch_dim] + (batch,) + dims[batch_dim + 1:])


register_op("ReverseSequence", inputs=["input: T", "seq_lengths: Tlen"],
            outputs=["output: T"],
            attrs=["seq_dim: int", "batch_dim: int = 0", "T: type",
                   "Tlen: {int32, int64} = DT_INT64"],
            shape_fn=_reverse_sequence_shape)


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None,  # noqa: A002
                     seq_dim=None, batch_dim=None):
    """Reverses the first `seq_lengths[b]` entries along `seq_axis` of each slice `b` along
    `batch_axis` (TF1 signature; `seq_dim`/`batch_dim` are the deprecated names).

    Raises:
      ValueError: both a new and a deprecated name for the same argument.
    """
    seq_axis = _lookup("seq_axis", seq_axis, "seq_dim", seq_dim)
    batch_axis = _lookup("batch_axis", batch_axis, "batch_dim", batch_dim)
    attrs = {} if batch_axis is None else {"batch_dim": batch_axis}
    return apply_op("ReverseSequence", input, seq_lengths, seq_dim=seq_axis, name=name,
                    **attrs)


def _lookup(new_name, new_value, old_name, old_value):
    if new_value is not None and old_value is not None:
        raise ValueError(f"Cannot specify both '{old_name}' and '{new_name}'")
    return new_value if new_value is not None else old_value


__all__ = ["reverse_sequence"]
